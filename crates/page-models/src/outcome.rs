//! Outcomes, the pure part: what a widget tells its host page about the learner when a run
//! has finished or a self-check is answered — the `outcome` message of API v1, whose
//! `statement` is an xAPI statement (verb, object, result) without an actor: the embed
//! knows nobody, so the host adds its own learner before it forwards the statement to a
//! learning record store (docs/embedding.md, "Outcomes").

use std::cell::RefCell;
use std::fmt::Write as _;

use crate::embed::{push_num, quote, Field, Id, Report, API, VERSION};

/// The xAPI verbs we use (ADL's vocabulary, so any LRS knows them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    /// Tried and got no verdict (the run failed before anything was checked).
    Attempted,
    /// Finished something that has no right answer (a race, a training run).
    Completed,
    Passed,
    Failed,
}

impl Verb {
    pub fn code(self) -> &'static str {
        match self {
            Verb::Attempted => "attempted",
            Verb::Completed => "completed",
            Verb::Passed => "passed",
            Verb::Failed => "failed",
        }
    }

    pub fn iri(self) -> String {
        format!("http://adlnet.gov/expapi/verbs/{}", self.code())
    }
}

/// What a widget's result says about the learner.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub verb: Verb,
    /// What the widget's object is within the widget: a puzzle, a lesson, a stage.
    pub target: Option<String>,
    /// Scaled 0..1, only where there is a right answer to count against.
    pub score: Option<f64>,
    pub success: Option<bool>,
}

/// The report fields that name what inside the widget was done, in the order tried.
const TARGET_FIELDS: [&str; 4] = ["puzzle", "lesson", "stage", "kernel"];

/// The outcome of a finished run, from its `run-finished` report (`Err`: the run failed).
/// A report with `passed` (a puzzle) is passed or failed; with `verified` (the editor, a
/// race, a lesson's run) completed or failed; anything else (a training run) completed.
pub fn of_report(result: &Result<Report, String>) -> Outcome {
    let Ok(r) = result else {
        return Outcome {
            verb: Verb::Attempted,
            target: None,
            score: None,
            success: Some(false),
        };
    };
    let get = |k: &str| r.iter().find(|(n, _)| *n == k).map(|(_, v)| v);
    let num = |k: &str| match get(k) {
        Some(Field::Num(n)) if n.is_finite() => Some(*n),
        _ => None,
    };
    let target = TARGET_FIELDS.iter().find_map(|k| match get(k) {
        Some(Field::Str(s)) => Some(s.clone()),
        _ => None,
    });
    // The share of checked outputs that were right, where the report counts them.
    let share = match (num("checked"), num("wrong")) {
        (Some(c), Some(w)) if c > 0.0 => Some(((c - w) / c).clamp(0.0, 1.0)),
        _ => None,
    };
    let (verb, score, success) = match (get("passed"), get("verified")) {
        (Some(Field::Bool(p)), _) => (
            if *p { Verb::Passed } else { Verb::Failed },
            Some(share.unwrap_or(if *p { 1.0 } else { 0.0 })),
            Some(*p),
        ),
        (_, Some(Field::Bool(v))) => (
            if *v { Verb::Completed } else { Verb::Failed },
            share,
            Some(*v),
        ),
        _ => (Verb::Completed, None, None),
    };
    Outcome {
        verb,
        target,
        score,
        success,
    }
}

/// A self-check question answered (`correct`: the answer checked right).
pub fn of_answer(lesson: &str, question: usize, correct: bool) -> Outcome {
    Outcome {
        verb: if correct { Verb::Passed } else { Verb::Failed },
        target: Some(format!("{lesson}/q{}", question + 1)),
        score: Some(if correct { 1.0 } else { 0.0 }),
        success: Some(correct),
    }
}

/// An ISO 8601 duration to a tenth of a second, as xAPI wants it: `PT12.3S`.
pub fn iso_duration(seconds: f64) -> String {
    let tenths = if seconds.is_finite() && seconds > 0.0 {
        (seconds * 10.0).round() as u64
    } else {
        0
    };
    let (s, t) = (tenths / 10, tenths % 10);
    let (h, m, s) = (s / 3600, s / 60 % 60, s % 60);
    let mut out = String::from("PT");
    if h > 0 {
        let _ = write!(out, "{h}H");
    }
    if m > 0 {
        let _ = write!(out, "{m}M");
    }
    if t > 0 {
        let _ = write!(out, "{s}.{t}S");
    } else if s > 0 || (h == 0 && m == 0) {
        let _ = write!(out, "{s}S");
    }
    out
}

/// The activity's IRI: `<site>/embed/<widget>` and `#<target>` when there is one. `site` is
/// where the playground is served (no query or fragment).
pub fn object_id(site: &str, widget: &str, target: Option<&str>) -> String {
    let site = site.split(['?', '#']).next().unwrap_or_default();
    let site = site.strip_suffix("index.html").unwrap_or(site);
    let mut id = format!("{}/embed/{widget}", site.trim_end_matches('/'));
    if let Some(t) = target {
        id.push('#');
        id.push_str(t);
    }
    id
}

/// The `outcome` message: `{"api","version","type":"outcome","id"?,"widget","statement"}`.
/// `id` is the request id of a run the host asked for, `seconds` the time since the widget
/// opened (or since its last outcome).
pub fn message(
    id: Option<&Id>,
    site: &str,
    widget: &str,
    lang: &str,
    o: &Outcome,
    seconds: f64,
) -> String {
    let mut s = String::from("{");
    quote(&mut s, "api");
    s.push(':');
    quote(&mut s, API);
    let _ = write!(s, r#","version":{VERSION},"type":"outcome""#);
    match id {
        None => {}
        Some(Id::Str(v)) => {
            s.push_str(r#","id":"#);
            quote(&mut s, v);
        }
        Some(Id::Num(n)) => {
            let _ = write!(s, r#","id":{n}"#);
        }
    }
    s.push_str(r#","widget":"#);
    quote(&mut s, widget);
    s.push_str(r#","statement":{"verb":{"id":"#);
    quote(&mut s, &o.verb.iri());
    s.push_str(r#","display":{"en-US":"#);
    quote(&mut s, o.verb.code());
    s.push_str(r#"}},"object":{"objectType":"Activity","id":"#);
    quote(&mut s, &object_id(site, widget, o.target.as_deref()));
    s.push_str(r#","definition":{"name":{"en-US":"#);
    let name = match &o.target {
        Some(t) => format!("GPU Playground {widget}: {t}"),
        None => format!("GPU Playground {widget}"),
    };
    quote(&mut s, &name);
    s.push_str(r#"}}},"result":{"#);
    if let Some(ok) = o.success {
        let _ = write!(s, r#""success":{ok},"#);
    }
    if let Some(x) = o.score {
        s.push_str(r#""score":{"scaled":"#);
        push_num(&mut s, x);
        s.push_str("},");
    }
    s.push_str(r#""completion":"#);
    s.push_str(if o.verb == Verb::Attempted {
        "false"
    } else {
        "true"
    });
    s.push_str(r#","duration":"#);
    quote(&mut s, &iso_duration(seconds));
    s.push_str(r#"},"context":{"platform":"GPU Playground","language":"#);
    quote(&mut s, lang);
    s.push_str("}}}");
    s
}

/// What the embed host does with an outcome that is not a run's (a self-check answered).
pub type Sink = Box<dyn Fn(Outcome)>;

thread_local! {
    /// Set while an embed host is mounted.
    static SINK: RefCell<Option<Sink>> = const { RefCell::new(None) };
}

/// Installs the mounted embed host's sink (`None` when it unmounts).
pub fn set_sink(f: Option<Sink>) {
    SINK.with(|s| *s.borrow_mut() = f);
}

/// Called by a widget with an outcome of its own; does nothing outside an embed.
pub fn record(o: Outcome) {
    SINK.with(|s| {
        if let Some(f) = s.borrow().as_ref() {
            f(o);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn puzzle(passed: bool) -> Report {
        vec![
            ("puzzle", Field::Str("map".into())),
            ("passed", Field::Bool(passed)),
            ("wrong", Field::Num(if passed { 0.0 } else { 3.0 })),
        ]
    }

    #[test]
    fn a_puzzle_is_passed_or_failed_with_a_score() {
        let o = of_report(&Ok(puzzle(true)));
        assert_eq!(o.verb, Verb::Passed);
        assert_eq!(o.target.as_deref(), Some("map"));
        assert_eq!((o.score, o.success), (Some(1.0), Some(true)));
        let o = of_report(&Ok(puzzle(false)));
        assert_eq!(o.verb, Verb::Failed);
        assert_eq!((o.score, o.success), (Some(0.0), Some(false)));
    }

    #[test]
    fn an_edited_kernel_scores_its_right_outputs() {
        let r = vec![
            ("stage", Field::Str("matmul-naive".into())),
            ("checked", Field::Num(1024.0)),
            ("wrong", Field::Num(256.0)),
            ("verified", Field::Bool(false)),
        ];
        let o = of_report(&Ok(r));
        assert_eq!(o.verb, Verb::Failed);
        assert_eq!(o.score, Some(0.75));
        assert_eq!(o.target.as_deref(), Some("matmul-naive"));
    }

    #[test]
    fn races_and_training_complete_failures_are_attempts() {
        let race = vec![
            ("winner", Field::Str("gpu".into())),
            ("verified", Field::Bool(true)),
        ];
        let o = of_report(&Ok(race));
        assert_eq!(
            (o.verb, o.score, o.success),
            (Verb::Completed, None, Some(true))
        );
        let train = vec![("loss", Field::Num(0.1))];
        let o = of_report(&Ok(train));
        assert_eq!((o.verb, o.success), (Verb::Completed, None));
        let o = of_report(&Err("timed out".into()));
        assert_eq!((o.verb, o.success), (Verb::Attempted, Some(false)));
    }

    #[test]
    fn a_self_check_answer() {
        let o = of_answer("occupancy", 0, false);
        assert_eq!(o.verb, Verb::Failed);
        assert_eq!(o.target.as_deref(), Some("occupancy/q1"));
        assert_eq!(of_answer("occupancy", 2, true).verb, Verb::Passed);
    }

    #[test]
    fn durations_are_iso_8601() {
        assert_eq!(iso_duration(12.34), "PT12.3S");
        assert_eq!(iso_duration(0.0), "PT0S");
        assert_eq!(iso_duration(f64::NAN), "PT0S");
        assert_eq!(iso_duration(-3.0), "PT0S");
        assert_eq!(iso_duration(60.0), "PT1M");
        assert_eq!(iso_duration(3725.5), "PT1H2M5.5S");
        assert_eq!(iso_duration(59.96), "PT1M");
    }

    #[test]
    fn object_ids_name_site_widget_and_target() {
        let site = "https://x.github.io/gpu-playground/index.html?lang=en#/embed/puzzle";
        assert_eq!(
            object_id(site, "puzzle", Some("map")),
            "https://x.github.io/gpu-playground/embed/puzzle#map"
        );
        assert_eq!(
            object_id("https://a.b/", "race", None),
            "https://a.b/embed/race"
        );
    }

    #[test]
    fn the_message_is_an_anonymous_xapi_statement() {
        let o = of_report(&Ok(puzzle(true)));
        let m = message(
            Some(&Id::Str("r1".into())),
            "https://a.b/",
            "puzzle",
            "zh",
            &o,
            12.34,
        );
        assert_eq!(
            m,
            r#"{"api":"gpu-playground","version":1,"type":"outcome","id":"r1","widget":"puzzle","statement":{"verb":{"id":"http://adlnet.gov/expapi/verbs/passed","display":{"en-US":"passed"}},"object":{"objectType":"Activity","id":"https://a.b/embed/puzzle#map","definition":{"name":{"en-US":"GPU Playground puzzle: map"}}},"result":{"success":true,"score":{"scaled":1},"completion":true,"duration":"PT12.3S"},"context":{"platform":"GPU Playground","language":"zh"}}}"#
        );
        assert!(!m.contains("actor"));
        let a = message(
            None,
            "https://a.b",
            "race",
            "en",
            &of_report(&Err("x".into())),
            1.0,
        );
        assert!(
            a.contains(r#""result":{"success":false,"completion":false,"duration":"PT1S"}"#),
            "{a}"
        );
    }
}

//! Outcomes, the pure part: what a widget tells its host page about the learner when a run
//! has finished or a self-check is answered — the `outcome` message of API v1, whose
//! `statement` is an xAPI 1.0.3 statement (verb, object, result, context) without an actor:
//! the embed knows nobody, so the host adds its own learner before it forwards the statement
//! to a learning record store (docs/embedding.md, "Outcomes").
//!
//! Grading: every activity with a right answer is graded under a stated policy ([`Policy`]),
//! kept per activity in the learner's browser ([`Entry`]): only a statement that sets the grade
//! under that policy is `passed`/`failed` with a score; any other attempt is `answered`, so a
//! wrong click after a right answer never reaches a gradebook as a new grade. A puzzle whose
//! solution was shown earns no credit from then on.

use std::cell::RefCell;
use std::fmt::Write as _;

use crate::embed::{push_num, quote, Field, Id, Report, API, VERSION};

/// The xAPI verbs we use (ADL's vocabulary, so any LRS knows them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    /// Tried and got no verdict (the run failed before anything was checked).
    Attempted,
    /// Finished something that has no right answer (a race, a measurement), or reached a
    /// training run's target accuracy.
    Completed,
    /// A training run paused before its target: on the way, not complete.
    Progressed,
    /// A graded attempt that sets the activity's grade.
    Passed,
    Failed,
    /// A graded attempt that does not set the grade under the policy (a later quiz click, a
    /// puzzle run no better than the best, any run after the solution was shown).
    Answered,
}

impl Verb {
    pub fn code(self) -> &'static str {
        match self {
            Verb::Attempted => "attempted",
            Verb::Completed => "completed",
            Verb::Progressed => "progressed",
            Verb::Passed => "passed",
            Verb::Failed => "failed",
            Verb::Answered => "answered",
        }
    }

    pub fn iri(self) -> String {
        format!("http://adlnet.gov/expapi/verbs/{}", self.code())
    }
}

/// The activity type every statement's object has (ADL's vocabulary): an interaction, with
/// its `interactionType`.
pub const ACTIVITY_TYPE: &str = "http://adlnet.gov/expapi/activities/cmi.interaction";

/// xAPI interaction types (cmi.interaction's `interactionType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interaction {
    /// A self-check question: one of its options.
    Choice,
    /// Code the learner wrote (a puzzle's kernel, an edited stage).
    LongFillIn,
    /// A run or a measurement: what the learner did with the widget.
    Performance,
}

impl Interaction {
    pub fn code(self) -> &'static str {
        match self {
            Interaction::Choice => "choice",
            Interaction::LongFillIn => "long-fill-in",
            Interaction::Performance => "performance",
        }
    }
}

/// How an activity's grade follows from its attempts (stated in every statement's context).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// The first answer is the grade: a self-check question names its right answer once
    /// answered, so a later click proves nothing.
    FirstAttempt,
    /// The best score so far is the grade: code is written, run, fixed and run again.
    BestAttempt,
}

impl Policy {
    pub fn code(self) -> &'static str {
        match self {
            Policy::FirstAttempt => "first-attempt",
            Policy::BestAttempt => "best-attempt",
        }
    }

    pub fn of(interaction: Interaction) -> Policy {
        match interaction {
            Interaction::Choice => Policy::FirstAttempt,
            _ => Policy::BestAttempt,
        }
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
    pub interaction: Interaction,
    /// The learner's answer: a chosen option, the code that ran.
    pub response: Option<String>,
}

/// The test accuracy (fraction of the test set) at which a training run — the digits CNN, or
/// a classifier on the training page — counts as complete: its pause is then `completed`,
/// before it `progressed`. The default networks pass it within a few hundred steps.
pub const TARGET_ACCURACY: f64 = 0.9;

/// The report fields that name what inside the widget was done, in the order tried.
const TARGET_FIELDS: [&str; 4] = ["puzzle", "lesson", "stage", "kernel"];

/// The outcome of a finished run, from its `run-finished` report (`Err`: the run failed).
/// A report with `passed` (a puzzle) is passed or failed; with `verified` passed or failed
/// where it also counts right outputs (the editor), else completed or failed (a race, a
/// lesson's run). A run that only ends when told (`stops`:
/// training) is completed when its report's `accuracy` reached its `targetAccuracy`, else
/// progressed; anything else completed. `response` is the learner's code where the run was
/// of code they wrote (then a long-fill-in, else a performance).
pub fn of_report(
    result: &Result<Report, String>,
    stops: bool,
    response: Option<String>,
) -> Outcome {
    let interaction = if response.is_some() {
        Interaction::LongFillIn
    } else {
        Interaction::Performance
    };
    let Ok(r) = result else {
        return Outcome {
            verb: Verb::Attempted,
            target: None,
            score: None,
            success: Some(false),
            interaction,
            response,
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
        // A check with a score (an edited kernel's outputs) is graded like a puzzle; one
        // without (a race, a measurement) completes or fails.
        (_, Some(Field::Bool(v))) => (
            match (v, share) {
                (true, Some(_)) => Verb::Passed,
                (true, None) => Verb::Completed,
                (false, _) => Verb::Failed,
            },
            share,
            Some(*v),
        ),
        _ if stops => {
            // A classifier's target is an accuracy; the GPT's, a validation loss below the
            // bigram's (`gpt_embed`).
            let reached = match (num("accuracy"), num("targetAccuracy")) {
                (Some(a), Some(t)) => a >= t,
                _ => matches!((num("valLoss"), num("targetValLoss")), (Some(l), Some(t)) if l < t),
            };
            let verb = if reached {
                Verb::Completed
            } else {
                Verb::Progressed
            };
            (verb, None, None)
        }
        _ => (Verb::Completed, None, None),
    };
    // A training run judged on its validation loss answers with it, in cmi's form for a
    // performance (`step[.]response`), so the statement says what the verb was judged on.
    let response = match (response, num("valLoss")) {
        (None, Some(l)) if stops => Some(format!("val-loss[.]{l:.4}")),
        (r, _) => r,
    };
    Outcome {
        verb,
        target,
        score,
        success,
        interaction,
        response,
    }
}

/// A self-check question answered with option `option` (`correct`: the answer checked right).
pub fn of_answer(lesson: &str, question: usize, option: u8, correct: bool) -> Outcome {
    Outcome {
        verb: if correct { Verb::Passed } else { Verb::Failed },
        target: Some(format!("{lesson}/q{}", question + 1)),
        score: Some(if correct { 1.0 } else { 0.0 }),
        success: Some(correct),
        interaction: Interaction::Choice,
        response: Some(option.to_string()),
    }
}

/// What the learner's browser keeps about one activity, for grading: how many statements it
/// sent, the grade so far, and whether its solution was shown.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Entry {
    pub attempts: u32,
    pub grade: Option<f64>,
    pub revealed: bool,
}

impl Entry {
    /// `attempts;grade;revealed` (`grade` empty when there is none): what the host stores.
    pub fn to_text(&self) -> String {
        let grade = self.grade.map(|g| g.to_string()).unwrap_or_default();
        format!("{};{grade};{}", self.attempts, u8::from(self.revealed))
    }

    /// Reads [`Entry::to_text`]; anything else is a fresh entry.
    pub fn parse(text: &str) -> Entry {
        let mut it = text.split(';');
        let (Some(a), Some(g), Some(r), None) = (it.next(), it.next(), it.next(), it.next()) else {
            return Entry::default();
        };
        let Ok(attempts) = a.parse::<u32>() else {
            return Entry::default();
        };
        let grade = g
            .parse::<f64>()
            .ok()
            .filter(|g| g.is_finite() && (0.0..=1.0).contains(g));
        Entry {
            attempts,
            grade,
            revealed: r == "1",
        }
    }
}

/// What grading made of one outcome: the statement's verb and score, and its context.
#[derive(Clone, Debug, PartialEq)]
pub struct Graded {
    pub verb: Verb,
    /// `result.score.scaled`: present only when this statement sets the grade.
    pub score: Option<f64>,
    /// The attempt's own score when it does not set the grade (`result.extensions`).
    pub attempt_score: Option<f64>,
    /// This activity's statement count in this browser, this one included (1, 2, …).
    pub attempt: u32,
    pub policy: Policy,
    /// The solution was shown before this attempt: it earns no credit.
    pub revealed: bool,
}

/// Grades `o` against the activity's `entry` and updates the entry. An outcome with a score
/// sets the grade (keeps its verb and score) when the policy lets it: the first graded attempt
/// under first-attempt, a better score than the grade under best-attempt; never after the
/// solution was shown. Otherwise it becomes `answered`, its score moved to `attempt_score`.
pub fn grade(entry: &mut Entry, o: &Outcome) -> Graded {
    entry.attempts = entry.attempts.saturating_add(1);
    let policy = Policy::of(o.interaction);
    let mut g = Graded {
        verb: o.verb,
        score: o.score,
        attempt_score: None,
        attempt: entry.attempts,
        policy,
        revealed: entry.revealed,
    };
    let Some(score) = o.score else {
        return g;
    };
    let sets = !entry.revealed
        && match (policy, entry.grade) {
            (_, None) => true,
            (Policy::FirstAttempt, Some(_)) => false,
            (Policy::BestAttempt, Some(best)) => score > best,
        };
    if sets {
        entry.grade = Some(score);
    } else {
        g.verb = Verb::Answered;
        g.score = None;
        g.attempt_score = Some(score);
    }
    g
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

/// Where the playground is served, as a base for IRIs: no query, fragment, `index.html` or
/// trailing slash.
fn site_base(site: &str) -> &str {
    let site = site.split(['?', '#']).next().unwrap_or_default();
    let site = site.strip_suffix("index.html").unwrap_or(site);
    site.trim_end_matches('/')
}

/// The activity's IRI: `<site>/embed/<widget>` and `#<target>` when there is one. `site` is
/// where the playground is served (no query or fragment).
pub fn object_id(site: &str, widget: &str, target: Option<&str>) -> String {
    let mut id = format!("{}/embed/{widget}", site_base(site));
    if let Some(t) = target {
        id.push('#');
        id.push_str(t);
    }
    id
}

/// The IRI of one of our xAPI extensions: `<site>/xapi/<name>`.
pub fn extension(site: &str, name: &str) -> String {
    format!("{}/xapi/{name}", site_base(site))
}

/// An activity's name as translation keys: a template (`{…}` placeholders) and, per
/// placeholder, the key of the text that fills it, or the text itself (a number). The host
/// fills both languages from the translation files.
#[derive(Clone, Debug, PartialEq)]
pub struct NameKeys {
    pub template: &'static str,
    pub args: Vec<(&'static str, NameArg)>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum NameArg {
    Key(String),
    Text(String),
}

/// The name of `widget`'s activity `target`: a puzzle's title, a lesson's title (with the
/// question's number for a self-check answer), a stage's title, or the widget's description.
pub fn name_keys(widget: &str, target: Option<&str>) -> NameKeys {
    let key = |k: String| NameArg::Key(k);
    let widget_key = key(crate::embed::WIDGETS
        .iter()
        .find(|w| w.id == widget)
        .map(|w| w.title_key.to_string())
        .unwrap_or_else(|| format!("embed.widget.{}", widget.replace('-', "_"))));
    match (widget, target) {
        ("puzzle", Some(t)) => NameKeys {
            template: "xapi.name.puzzle",
            args: vec![("title", key(format!("puzzle.{t}.title")))],
        },
        ("lesson", Some(t)) => match t.split_once("/q") {
            Some((lesson, n)) => NameKeys {
                template: "xapi.name.question",
                args: vec![
                    ("lesson", key(format!("lesson.{lesson}.title"))),
                    ("n", NameArg::Text(n.to_string())),
                ],
            },
            None => NameKeys {
                template: "xapi.name.lesson",
                args: vec![("lesson", key(format!("lesson.{t}.title")))],
            },
        },
        (_, Some(t)) => NameKeys {
            template: "xapi.name.stage",
            args: vec![
                ("widget", widget_key),
                ("stage", key(format!("kernel.{t}.title"))),
            ],
        },
        (_, None) => NameKeys {
            template: "xapi.name.widget",
            args: vec![("widget", widget_key)],
        },
    }
}

/// A text in the statement's two languages, xAPI language-map keys `en-US` and `zh-CN`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Both {
    pub en: String,
    pub zh: String,
}

fn push_map(s: &mut String, b: &Both) {
    s.push_str(r#"{"en-US":"#);
    quote(s, &b.en);
    s.push_str(r#","zh-CN":"#);
    quote(s, &b.zh);
    s.push('}');
}

/// What a statement needs beside the outcome: where, in which language, the texts, the time.
pub struct Statement<'a> {
    pub site: &'a str,
    pub widget: &'a str,
    pub lang: &'a str,
    /// The verb's display (the graded verb's).
    pub verb: Both,
    /// The activity's name.
    pub name: Both,
    /// Seconds since the widget opened or since its previous outcome.
    pub seconds: f64,
}

/// The `outcome` message: `{"api","version","type":"outcome","id"?,"widget","statement"}`.
/// `id` is the request id of a run the host asked for.
pub fn message(id: Option<&Id>, st: &Statement, o: &Outcome, g: &Graded) -> String {
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
    quote(&mut s, st.widget);
    s.push_str(r#","statement":{"verb":{"id":"#);
    quote(&mut s, &g.verb.iri());
    s.push_str(r#","display":"#);
    push_map(&mut s, &st.verb);
    s.push_str(r#"},"object":{"objectType":"Activity","id":"#);
    quote(&mut s, &object_id(st.site, st.widget, o.target.as_deref()));
    s.push_str(r#","definition":{"type":"#);
    quote(&mut s, ACTIVITY_TYPE);
    s.push_str(r#","interactionType":"#);
    quote(&mut s, o.interaction.code());
    s.push_str(r#","name":"#);
    push_map(&mut s, &st.name);
    s.push_str(r#"}},"result":{"#);
    if let Some(ok) = o.success {
        let _ = write!(s, r#""success":{ok},"#);
    }
    if let Some(x) = g.score {
        s.push_str(r#""score":{"scaled":"#);
        push_num(&mut s, x);
        s.push_str("},");
    }
    s.push_str(r#""completion":"#);
    s.push_str(if matches!(g.verb, Verb::Attempted | Verb::Progressed) {
        "false"
    } else {
        "true"
    });
    if let Some(r) = &o.response {
        s.push_str(r#","response":"#);
        quote(&mut s, r);
    }
    s.push_str(r#","duration":"#);
    quote(&mut s, &iso_duration(st.seconds));
    if let Some(x) = g.attempt_score {
        s.push_str(r#","extensions":{"#);
        quote(&mut s, &extension(st.site, "attempt-score"));
        s.push(':');
        push_num(&mut s, x);
        s.push('}');
    }
    s.push_str(r#"},"context":{"platform":"GPU Playground","language":"#);
    quote(&mut s, st.lang);
    s.push_str(r#","extensions":{"#);
    quote(&mut s, &extension(st.site, "grading-policy"));
    s.push(':');
    quote(&mut s, g.policy.code());
    s.push(',');
    quote(&mut s, &extension(st.site, "attempt"));
    let _ = write!(s, ":{}", g.attempt);
    s.push(',');
    quote(&mut s, &extension(st.site, "solution-shown"));
    let _ = write!(s, ":{}", g.revealed);
    s.push_str("}}}}");
    s
}

/// What a widget tells the embed host outside a run's report.
pub enum Event {
    /// An outcome of its own (a self-check answered).
    Outcome(Outcome),
    /// The learner opened the solution of the widget's activity `target` (a puzzle id).
    SolutionShown(String),
}

/// What the embed host does with a widget's [`Event`].
pub type Sink = Box<dyn Fn(Event)>;

thread_local! {
    /// Set while an embed host is mounted.
    static SINK: RefCell<Option<Sink>> = const { RefCell::new(None) };
    /// The learner's response to the run about to be reported (its code).
    static RESPONSE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs the mounted embed host's sink (`None` when it unmounts).
pub fn set_sink(f: Option<Sink>) {
    SINK.with(|s| *s.borrow_mut() = f);
    RESPONSE.with(|r| r.borrow_mut().take());
}

fn send(e: Event) {
    SINK.with(|s| {
        if let Some(f) = s.borrow().as_ref() {
            f(e);
        }
    });
}

/// Called by a widget with an outcome of its own; does nothing outside an embed.
pub fn record(o: Outcome) {
    send(Event::Outcome(o));
}

/// Called by a widget when its solution for `target` is shown; does nothing outside an embed.
pub fn solution_shown(target: &str) {
    send(Event::SolutionShown(target.to_string()));
}

/// Called by a widget just before it reports a run of the learner's code (`response`: that
/// code); kept only inside an embed, for the run's statement.
pub fn set_response(response: String) {
    let embedded = SINK.with(|s| s.borrow().is_some());
    if embedded {
        RESPONSE.with(|r| *r.borrow_mut() = Some(response));
    }
}

/// The response a widget set for the run being reported (taken: the next run sets its own).
pub fn take_response() -> Option<String> {
    RESPONSE.with(|r| r.borrow_mut().take())
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

    fn code() -> Option<String> {
        Some("out[i] = a[i] + 10.0;".into())
    }

    #[test]
    fn a_puzzle_is_passed_or_failed_with_a_score_and_its_code() {
        let o = of_report(&Ok(puzzle(true)), false, code());
        assert_eq!(o.verb, Verb::Passed);
        assert_eq!(o.target.as_deref(), Some("map"));
        assert_eq!((o.score, o.success), (Some(1.0), Some(true)));
        assert_eq!(o.interaction, Interaction::LongFillIn);
        assert_eq!(o.response, code());
        let o = of_report(&Ok(puzzle(false)), false, code());
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
        let o = of_report(&Ok(r), false, None);
        assert_eq!(o.verb, Verb::Failed);
        assert_eq!(o.score, Some(0.75));
        assert_eq!(o.target.as_deref(), Some("matmul-naive"));
        assert_eq!(o.interaction, Interaction::Performance);
    }

    #[test]
    fn races_complete_failures_are_attempts() {
        let race = vec![
            ("winner", Field::Str("gpu".into())),
            ("verified", Field::Bool(true)),
        ];
        let o = of_report(&Ok(race), false, None);
        assert_eq!(
            (o.verb, o.score, o.success),
            (Verb::Completed, None, Some(true))
        );
        let o = of_report(&Err("timed out".into()), false, None);
        assert_eq!((o.verb, o.success), (Verb::Attempted, Some(false)));
    }

    #[test]
    fn training_completes_only_at_its_target() {
        let at = |a: f64| {
            vec![
                ("accuracy", Field::Num(a)),
                ("targetAccuracy", Field::Num(0.9)),
            ]
        };
        assert_eq!(of_report(&Ok(at(0.39)), true, None).verb, Verb::Progressed);
        assert_eq!(of_report(&Ok(at(0.9)), true, None).verb, Verb::Completed);
        assert_eq!(of_report(&Ok(at(0.97)), true, None).verb, Verb::Completed);
        // No accuracy to judge (a regression dataset, no evaluation yet): not complete.
        let loss = vec![("loss", Field::Num(0.1))];
        assert_eq!(of_report(&Ok(loss), true, None).verb, Verb::Progressed);
    }

    #[test]
    fn the_gpt_completes_only_below_the_bigram() {
        let at = |l: f64| {
            vec![
                ("valLoss", Field::Num(l)),
                ("targetValLoss", Field::Num(2.45)),
            ]
        };
        let o = of_report(&Ok(at(2.6)), true, None);
        assert_eq!((o.verb, o.score, o.success), (Verb::Progressed, None, None));
        assert_eq!(o.interaction, Interaction::Performance);
        assert_eq!(o.response.as_deref(), Some("val-loss[.]2.6000"));
        assert_eq!(of_report(&Ok(at(2.45)), true, None).verb, Verb::Progressed);
        let o = of_report(&Ok(at(2.2)), true, None);
        assert_eq!(o.verb, Verb::Completed);
        assert_eq!(o.response.as_deref(), Some("val-loss[.]2.2000"));
        // No bigram yet (or no loss): nothing to judge, not complete.
        let alone = vec![("valLoss", Field::Num(0.5))];
        assert_eq!(of_report(&Ok(alone), true, None).verb, Verb::Progressed);
        assert_eq!(of_report(&Ok(Vec::new()), true, None).response, None);
    }

    #[test]
    fn a_self_check_answer() {
        let o = of_answer("occupancy", 0, 2, false);
        assert_eq!(o.verb, Verb::Failed);
        assert_eq!(o.target.as_deref(), Some("occupancy/q1"));
        assert_eq!(o.response.as_deref(), Some("2"));
        assert_eq!(o.interaction, Interaction::Choice);
        assert_eq!(of_answer("occupancy", 2, 0, true).verb, Verb::Passed);
    }

    #[test]
    fn a_question_keeps_its_first_answer() {
        let mut e = Entry::default();
        let g = grade(&mut e, &of_answer("simt", 0, 1, true));
        assert_eq!((g.verb, g.score, g.attempt), (Verb::Passed, Some(1.0), 1));
        assert_eq!(g.policy, Policy::FirstAttempt);
        // A wrong click afterwards is an answer, not a new grade.
        let g = grade(&mut e, &of_answer("simt", 0, 0, false));
        assert_eq!(
            (g.verb, g.score, g.attempt_score),
            (Verb::Answered, None, Some(0.0))
        );
        assert_eq!(g.attempt, 2);
        // Nor does a right click after a wrong first answer raise it.
        let mut e = Entry::default();
        assert_eq!(
            grade(&mut e, &of_answer("simt", 0, 0, false)).verb,
            Verb::Failed
        );
        let g = grade(&mut e, &of_answer("simt", 0, 1, true));
        assert_eq!((g.verb, g.score), (Verb::Answered, None));
        assert_eq!(e.grade, Some(0.0));
    }

    #[test]
    fn a_puzzle_keeps_its_best_run_and_a_shown_solution_earns_nothing() {
        let run = |p: bool| of_report(&Ok(puzzle(p)), false, code());
        let mut e = Entry::default();
        assert_eq!(grade(&mut e, &run(false)).verb, Verb::Failed);
        let g = grade(&mut e, &run(true));
        assert_eq!(
            (g.verb, g.score, g.policy),
            (Verb::Passed, Some(1.0), Policy::BestAttempt)
        );
        let g = grade(&mut e, &run(false));
        assert_eq!((g.verb, g.score), (Verb::Answered, None));
        assert_eq!(e.grade, Some(1.0));
        // The solution shown first: its run is an answer, flagged, with no grade.
        let mut e = Entry {
            revealed: true,
            ..Entry::default()
        };
        let g = grade(&mut e, &run(true));
        assert_eq!((g.verb, g.score, g.revealed), (Verb::Answered, None, true));
        assert_eq!(e.grade, None);
        // Runs without a score are left as they are.
        let race = of_report(&Ok(vec![("verified", Field::Bool(true))]), false, None);
        assert_eq!(grade(&mut Entry::default(), &race).verb, Verb::Completed);
    }

    #[test]
    fn entries_survive_their_text_and_refuse_junk() {
        let e = Entry {
            attempts: 3,
            grade: Some(0.75),
            revealed: true,
        };
        assert_eq!(Entry::parse(&e.to_text()), e);
        assert_eq!(Entry::parse(&Entry::default().to_text()), Entry::default());
        for junk in ["", "x;1;0", "1;2;0", "1;;0;4", "1;NaN;1"] {
            let p = Entry::parse(junk);
            assert!(p.grade.is_none() || p.grade <= Some(1.0), "{junk}");
        }
        assert_eq!(Entry::parse("1;2;0").grade, None);
    }

    #[test]
    fn names_are_keys_of_the_translation_files() {
        let n = name_keys("puzzle", Some("map"));
        assert_eq!(n.template, "xapi.name.puzzle");
        assert_eq!(
            n.args,
            vec![("title", NameArg::Key("puzzle.map.title".into()))]
        );
        let n = name_keys("lesson", Some("occupancy/q2"));
        assert_eq!(n.template, "xapi.name.question");
        assert_eq!(n.args[1], ("n", NameArg::Text("2".into())));
        let n = name_keys("simt-compare", None);
        assert_eq!(
            n.args,
            vec![("widget", NameArg::Key("embed.widget.simt_compare".into()))]
        );
        assert_eq!(
            name_keys("editor", Some("matmul-tiled")).template,
            "xapi.name.stage"
        );
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
        assert_eq!(
            extension(site, "attempt"),
            "https://x.github.io/gpu-playground/xapi/attempt"
        );
    }

    #[test]
    fn the_message_is_an_anonymous_xapi_statement() {
        let o = of_report(&Ok(puzzle(true)), false, Some("x\"y".into()));
        let g = grade(&mut Entry::default(), &o);
        let st = Statement {
            site: "https://a.b/",
            widget: "puzzle",
            lang: "zh",
            verb: Both {
                en: "passed".into(),
                zh: "通过".into(),
            },
            name: Both {
                en: "GPU Playground puzzle: Map".into(),
                zh: "GPU 游乐场谜题：映射".into(),
            },
            seconds: 12.34,
        };
        let m = message(Some(&Id::Str("r1".into())), &st, &o, &g);
        assert_eq!(
            m,
            r#"{"api":"gpu-playground","version":1,"type":"outcome","id":"r1","widget":"puzzle","statement":{"verb":{"id":"http://adlnet.gov/expapi/verbs/passed","display":{"en-US":"passed","zh-CN":"通过"}},"object":{"objectType":"Activity","id":"https://a.b/embed/puzzle#map","definition":{"type":"http://adlnet.gov/expapi/activities/cmi.interaction","interactionType":"long-fill-in","name":{"en-US":"GPU Playground puzzle: Map","zh-CN":"GPU 游乐场谜题：映射"}}},"result":{"success":true,"score":{"scaled":1},"completion":true,"response":"x\"y","duration":"PT12.3S"},"context":{"platform":"GPU Playground","language":"zh","extensions":{"https://a.b/xapi/grading-policy":"best-attempt","https://a.b/xapi/attempt":1,"https://a.b/xapi/solution-shown":false}}}}"#
        );
        assert!(!m.contains("actor"));
        let a = of_report(&Err("x".into()), false, None);
        let st = Statement {
            widget: "race",
            lang: "en",
            seconds: 1.0,
            ..st
        };
        let m = message(None, &st, &a, &grade(&mut Entry::default(), &a));
        assert!(
            m.contains(r#""result":{"success":false,"completion":false,"duration":"PT1S"}"#),
            "{m}"
        );
    }
}

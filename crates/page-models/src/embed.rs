//! Embedding, the pure part: the embed URL's own parameters (`parentOrigin=`, `hide=`,
//! `theme=`), the origin check, and the postMessage API v1 (requests parsed and validated,
//! replies written as JSON), the registry of embeddable widgets (`WIDGETS`: what a host may
//! set, hide and press), the text parts each needs, and the `run-finished` reports widgets
//! send through [`report`]. No DOM here: `components/embed.rs` only wires it to `window`
//! and says how each widget renders.
//! The protocol is documented in `docs/embedding.md`; keep the two in step.

use std::cell::RefCell;
use std::fmt::Write as _;

use crate::query::Query;
use crate::run_family::Problem;

/// The `api` field every message of ours carries, in both directions.
pub const API: &str = "gpu-playground";
/// The protocol version; a request naming another version is answered with an error.
pub const VERSION: u32 = 1;
/// Parameters of the embed itself, never a widget's setting (kept by `reset`).
pub const OWN_PARAMS: [&str; 4] = ["lang", "theme", "hide", "parentOrigin"];

/// Longest request id we echo (longer ones are refused, not cut).
const MAX_ID_LEN: usize = 64;
/// Most parameters one `setParams` may carry, and the longest value.
const MAX_PARAMS: usize = 32;
const MAX_VALUE_LEN: usize = 256;

// ---------------------------------------------------------------- origins

/// Why a `parentOrigin=` entry is not an origin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OriginError {
    /// `*`: we never talk to whoever happens to embed us.
    Wildcard,
    /// Not `http(s)://host[:port]` (a path, a query, user info, another scheme…).
    NotAnOrigin(String),
}

/// Normalises `scheme://host[:port]` the way browsers write `MessageEvent.origin`: lower case,
/// default port dropped, no trailing slash. Anything else is refused.
pub fn normalize_origin(s: &str) -> Result<String, OriginError> {
    let s = s.trim();
    if s == "*" {
        return Err(OriginError::Wildcard);
    }
    let bad = || OriginError::NotAnOrigin(s.chars().take(80).collect());
    let lower = s.to_ascii_lowercase();
    let (scheme, rest) = lower.split_once("://").ok_or_else(bad)?;
    let default_port = match scheme {
        "http" => "80",
        "https" => "443",
        _ => return Err(bad()),
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let (inside, after) = v6.split_once(']').ok_or_else(bad)?;
        if inside.is_empty() || !inside.chars().all(|c| c.is_ascii_hexdigit() || c == ':') {
            return Err(bad());
        }
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or_else(bad)?),
        };
        (format!("[{inside}]"), port)
    } else {
        let (host, port) = match rest.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (rest, None),
        };
        let host_ok = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            && !host.starts_with('.')
            && !host.ends_with('.');
        if !host_ok {
            return Err(bad());
        }
        (host.to_string(), port)
    };
    let port = match port {
        None => None,
        Some(p) if !p.is_empty() && p.len() <= 5 && p.chars().all(|c| c.is_ascii_digit()) => {
            match p.parse::<u32>() {
                Ok(n) if n <= 65_535 => Some(n.to_string()),
                _ => return Err(bad()),
            }
        }
        Some(_) => return Err(bad()),
    };
    Ok(match port {
        Some(p) if p != default_port => format!("{scheme}://{host}:{p}"),
        _ => format!("{scheme}://{host}"),
    })
}

/// `parentOrigin=a,b`: the origins messages are accepted from and sent to. Empty when the
/// parameter is absent (then the embed neither sends nor accepts anything).
pub fn parse_origins(param: Option<&str>) -> Result<Vec<String>, OriginError> {
    let Some(p) = param else {
        return Ok(Vec::new());
    };
    let mut out: Vec<String> = Vec::new();
    for part in p.split(',').filter(|s| !s.trim().is_empty()) {
        let o = normalize_origin(part)?;
        if !out.contains(&o) {
            out.push(o);
        }
    }
    Ok(out)
}

/// Exact match against the named origins; `MessageEvent.origin` is already normalised.
pub fn origin_allowed(allowed: &[String], origin: &str) -> bool {
    allowed.iter().any(|a| a == origin)
}

// ---------------------------------------------------------------- hide= and theme=

/// `theme=`: `auto` follows the host's `prefers-color-scheme`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Theme {
    Light,
    Dark,
    Auto,
}

impl Theme {
    /// None for an unknown value (the caller says so in the page and uses `auto`).
    pub fn parse(s: Option<&str>) -> Option<Theme> {
        match s.map(str::trim) {
            None | Some("") | Some("auto") => Some(Theme::Auto),
            Some("light") => Some(Theme::Light),
            Some("dark") => Some(Theme::Dark),
            Some(_) => None,
        }
    }

    pub fn code(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
            Theme::Auto => "auto",
        }
    }
}

/// `hide=a,b`: the names a widget knows, in its order, and the names it does not.
pub fn parse_hide(param: Option<&str>, known: &[&'static str]) -> (Vec<&'static str>, Vec<String>) {
    let asked: Vec<&str> = param
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let hidden = known
        .iter()
        .copied()
        .filter(|k| asked.contains(k))
        .collect();
    let unknown = asked
        .iter()
        .filter(|a| !known.contains(a))
        .map(|a| a.chars().take(40).collect())
        .collect();
    (hidden, unknown)
}

// ---------------------------------------------------------------- requests

/// A request id, echoed in the reply: a short string or an integer.
#[derive(Clone, Debug, PartialEq)]
pub enum Id {
    Str(String),
    Num(i64),
}

/// A JSON-like value as read from a message (only what the protocol uses).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    /// An object's own fields (strings only; anything else is refused where it matters).
    Object(Vec<(String, Value)>),
    /// An array, a function or anything else we never accept.
    Other,
}

impl Value {
    fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object(fields) => fields.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Run,
    SetParams(Vec<(String, String)>),
    GetState,
    Reset,
    /// The learner's progress as the text of a progress file (`learner_file::export`).
    GetProgress,
    /// A progress file's text to add to the learner's progress (`learner_file::merge`).
    SetProgress(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub id: Option<Id>,
    pub command: Command,
}

/// Why a request of ours is refused; the reply is an `error` with this code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestError {
    Version,
    UnknownType(String),
    BadId,
    BadParams,
    UnknownParam(String),
    /// A whole-number parameter was given something else: (parameter, value).
    NotWhole(String, String),
    NotRunnable,
    Busy,
    /// A value the widget's own settings parser refuses: the page's message, already in the
    /// embed's language (the component translates [`ParamError`]).
    Refused(String),
    /// `setProgress` without a file's text, or with one `learner_file::parse` refuses (why).
    BadProgress(String),
}

impl RequestError {
    pub fn code(&self) -> &'static str {
        match self {
            RequestError::Version => "unsupported-version",
            RequestError::UnknownType(_) => "unknown-type",
            RequestError::BadId => "bad-id",
            RequestError::BadParams => "bad-params",
            RequestError::UnknownParam(_) => "unknown-param",
            RequestError::NotWhole(..) => "bad-params",
            RequestError::NotRunnable => "not-runnable",
            RequestError::Busy => "busy",
            RequestError::Refused(_) => "bad-params",
            RequestError::BadProgress(_) => "bad-progress",
        }
    }

    /// An English sentence for the host's developer (the page itself shows translated text).
    pub fn message(&self) -> String {
        match self {
            RequestError::Version => format!("this embed speaks version {VERSION} of the API"),
            RequestError::UnknownType(t) => {
                format!(
                    "unknown request type {t:?}; expected run, setParams, getState, reset, \
                     getProgress or setProgress"
                )
            }
            RequestError::BadId => {
                format!("id must be a string of at most {MAX_ID_LEN} characters or an integer")
            }
            RequestError::BadParams => format!(
                "params must be an object of at most {MAX_PARAMS} string or number values \
                 (each at most {MAX_VALUE_LEN} characters)"
            ),
            RequestError::UnknownParam(p) => {
                format!("this widget has no parameter {p:?}")
            }
            RequestError::NotWhole(p, v) => {
                format!("parameter {p:?} must be a whole number, not {v:?}")
            }
            RequestError::NotRunnable => {
                "the widget cannot run now (invalid settings, no WebGPU, or nothing to run)".into()
            }
            RequestError::Busy => "a run requested by the host is still going".into(),
            RequestError::Refused(m) => m.clone(),
            RequestError::BadProgress(m) => m.clone(),
        }
    }
}

/// What to do with a message that arrived from an allowed origin.
#[derive(Clone, Debug, PartialEq)]
pub enum Parsed {
    /// Not addressed to us (no `api: "gpu-playground"`): ignored silently.
    NotOurs,
    Request(Request),
    /// Ours but invalid: answered with an `error` echoing the id, when it had a usable one.
    Invalid(Option<Id>, RequestError),
}

fn parse_id(v: Option<&Value>) -> Result<Option<Id>, RequestError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Str(s)) if s.chars().count() <= MAX_ID_LEN => Ok(Some(Id::Str(s.clone()))),
        Some(Value::Num(n)) if n.is_finite() && n.fract() == 0.0 && n.abs() < 9.0e15 => {
            Ok(Some(Id::Num(*n as i64)))
        }
        _ => Err(RequestError::BadId),
    }
}

/// Parses a message's data. `params` is the widget's list of settable URL parameters.
pub fn parse_request(data: &Value, params: &[&str]) -> Parsed {
    if data.field("api") != Some(&Value::Str(API.into())) {
        return Parsed::NotOurs;
    }
    let id = match parse_id(data.field("id")) {
        Ok(id) => id,
        Err(e) => return Parsed::Invalid(None, e),
    };
    match data.field("version") {
        None => {}
        Some(Value::Num(v)) if *v == VERSION as f64 => {}
        Some(_) => return Parsed::Invalid(id, RequestError::Version),
    }
    let kind = match data.field("type") {
        Some(Value::Str(s)) => s.as_str(),
        _ => return Parsed::Invalid(id, RequestError::UnknownType(String::new())),
    };
    let command = match kind {
        "run" => Command::Run,
        "getState" => Command::GetState,
        "reset" => Command::Reset,
        "getProgress" => Command::GetProgress,
        "setProgress" => match data.field("file") {
            Some(Value::Str(text)) => Command::SetProgress(text.clone()),
            _ => {
                return Parsed::Invalid(
                    id,
                    RequestError::BadProgress(
                        "file must be the text of a progress file (getProgress's file, or a \
                         saved gpu-playground-progress .json)"
                            .into(),
                    ),
                )
            }
        },
        "setParams" => match parse_params(data.field("params"), params) {
            Ok(p) => Command::SetParams(p),
            Err(e) => return Parsed::Invalid(id, e),
        },
        other => {
            return Parsed::Invalid(
                id,
                RequestError::UnknownType(other.chars().take(40).collect()),
            )
        }
    };
    Parsed::Request(Request { id, command })
}

fn parse_params(v: Option<&Value>, known: &[&str]) -> Result<Vec<(String, String)>, RequestError> {
    let Some(Value::Object(fields)) = v else {
        return Err(RequestError::BadParams);
    };
    if fields.len() > MAX_PARAMS {
        return Err(RequestError::BadParams);
    }
    let mut out = Vec::with_capacity(fields.len());
    for (k, v) in fields {
        if !known.contains(&k.as_str()) {
            return Err(RequestError::UnknownParam(k.chars().take(40).collect()));
        }
        let text = match v {
            Value::Str(s) if s.chars().count() <= MAX_VALUE_LEN => s.clone(),
            Value::Num(n) if n.is_finite() => format_num(*n),
            Value::Bool(b) => b.to_string(),
            _ => return Err(RequestError::BadParams),
        };
        out.push((k.clone(), text));
    }
    Ok(out)
}

fn format_num(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

// ---------------------------------------------------------------- replies and events

/// One measured result field of `run-finished` (`results` object).
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    Num(f64),
    Str(String),
    Bool(bool),
    /// An array of objects (a sweep's points, a batch experiment's rows).
    List(Vec<Report>),
}

/// What a widget reports when a run has finished (in the order given).
pub type Report = Vec<(&'static str, Field)>;

/// A message the embed sends to its host.
#[derive(Clone, Debug, PartialEq)]
pub enum Out<'a> {
    Ready {
        widget: &'a str,
        lang: &'a str,
        params: &'a [(String, String)],
    },
    Resize {
        height: u32,
    },
    State {
        id: Option<&'a Id>,
        widget: &'a str,
        params: &'a [(String, String)],
        /// The learner's work (the reply to `getState` only): written as an object with
        /// `version` ([`WORK_VERSION`]) first, then these fields.
        work: Option<&'a [(&'static str, Field)]>,
    },
    RunStarted {
        id: Option<&'a Id>,
        widget: &'a str,
    },
    RunFinished {
        id: Option<&'a Id>,
        widget: &'a str,
        results: &'a [(&'static str, Field)],
    },
    Error {
        id: Option<&'a Id>,
        code: &'a str,
        message: &'a str,
    },
    /// `getProgress`'s reply: the progress file's text.
    Progress {
        id: Option<&'a Id>,
        file: &'a str,
    },
    /// `setProgress`'s reply: what the merge added (puzzles newly solved, drafts added) and
    /// the drafts kept because this device's differ (nothing is overwritten).
    ProgressSet {
        id: Option<&'a Id>,
        solved: usize,
        drafts: usize,
        kept: usize,
    },
}

impl Out<'_> {
    /// The message as JSON (the wiring turns it into an object with `JSON.parse`).
    pub fn to_json(&self) -> String {
        let mut j = Json::new(match self {
            Out::Ready { .. } => "ready",
            Out::Resize { .. } => "resize",
            Out::State { .. } => "state",
            Out::RunStarted { .. } => "run-started",
            Out::RunFinished { .. } => "run-finished",
            Out::Error { .. } => "error",
            Out::Progress { .. } => "progress",
            Out::ProgressSet { .. } => "progress-set",
        });
        match self {
            Out::Ready {
                widget,
                lang,
                params,
            } => {
                j.str("widget", widget);
                j.str("lang", lang);
                j.params("params", params);
            }
            Out::Resize { height } => j.num("height", *height as f64),
            Out::State {
                id,
                widget,
                params,
                work,
            } => {
                j.id(*id);
                j.str("widget", widget);
                j.params("params", params);
                if let Some(work) = work {
                    let mut fields: Report = vec![("version", Field::Num(f64::from(WORK_VERSION)))];
                    fields.extend(work.iter().cloned());
                    j.key("work");
                    push_object(&mut j.0, &fields);
                }
            }
            Out::RunStarted { id, widget } => {
                j.id(*id);
                j.str("widget", widget);
            }
            Out::RunFinished {
                id,
                widget,
                results,
            } => {
                j.id(*id);
                j.str("widget", widget);
                j.key("results");
                push_object(&mut j.0, results);
            }
            Out::Error { id, code, message } => {
                j.id(*id);
                j.str("code", code);
                j.str("message", message);
            }
            Out::Progress { id, file } => {
                j.id(*id);
                j.str("file", file);
            }
            Out::ProgressSet {
                id,
                solved,
                drafts,
                kept,
            } => {
                j.id(*id);
                j.num("solved", *solved as f64);
                j.num("drafts", *drafts as f64);
                j.num("kept", *kept as f64);
            }
        }
        j.0.push('}');
        j.0
    }
}

/// Canvas LMS resizes an LTI iframe on this message (a JSON string, as Canvas expects).
pub fn lti_frame_resize(height: u32) -> String {
    format!(r#"{{"subject":"lti.frameResize","height":{height}}}"#)
}

struct Json(String);

impl Json {
    fn new(kind: &str) -> Self {
        let mut s = String::from("{");
        quote(&mut s, "api");
        s.push(':');
        quote(&mut s, API);
        let _ = write!(s, r#","version":{VERSION},"type":"#);
        quote(&mut s, kind);
        Json(s)
    }
    fn key(&mut self, k: &str) {
        self.0.push(',');
        quote(&mut self.0, k);
        self.0.push(':');
    }
    fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        quote(&mut self.0, v);
    }
    fn num(&mut self, k: &str, v: f64) {
        self.key(k);
        push_num(&mut self.0, v);
    }
    fn id(&mut self, id: Option<&Id>) {
        match id {
            None => {}
            Some(Id::Str(s)) => self.str("id", s),
            Some(Id::Num(n)) => {
                self.key("id");
                let _ = write!(self.0, "{n}");
            }
        }
    }
    fn params(&mut self, k: &str, params: &[(String, String)]) {
        self.key(k);
        self.0.push('{');
        for (i, (k, v)) in params.iter().enumerate() {
            if i > 0 {
                self.0.push(',');
            }
            quote(&mut self.0, k);
            self.0.push(':');
            quote(&mut self.0, v);
        }
        self.0.push('}');
    }
}

/// `{"k":v,…}` of a report; lists nest (objects inside arrays).
fn push_object(s: &mut String, fields: &[(&'static str, Field)]) {
    s.push('{');
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        quote(s, k);
        s.push(':');
        match v {
            Field::Num(n) => push_num(s, *n),
            Field::Str(t) => quote(s, t),
            Field::Bool(b) => s.push_str(if *b { "true" } else { "false" }),
            Field::List(items) => {
                s.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    push_object(s, item);
                }
                s.push(']');
            }
        }
    }
    s.push('}');
}

pub(crate) fn push_num(s: &mut String, n: f64) {
    if n.is_finite() {
        let _ = write!(s, "{n}");
    } else {
        s.push_str("null");
    }
}

pub(crate) fn quote(s: &mut String, v: &str) {
    s.push('"');
    for c in v.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            '\t' => s.push_str("\\t"),
            // U+2028/9 and other controls: escaped so the JSON is also valid JavaScript.
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(s, "\\u{:04x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s.push('"');
}

/// The widget's settings as the host sees them: the query without the embed's own parameters.
pub fn widget_params(query: &[(String, String)], known: &[&str]) -> Vec<(String, String)> {
    query
        .iter()
        .filter(|(k, _)| known.contains(&k.as_str()) && !OWN_PARAMS.contains(&k.as_str()))
        .cloned()
        .collect()
}

/// The iframe snippet for a widget in its current state (the "Embed" button's panel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snippet {
    /// The embed's address (for the live preview).
    pub src: String,
    /// The HTML to paste into a course page.
    pub html: String,
    /// The iframe's height before (or without) the widget's first `resize` (CSS px).
    pub height: u32,
}

/// What the snippet needs to know about a widget (from the embed registry).
pub struct SnippetWidget<'a> {
    pub id: &'a str,
    /// Its settable parameters, in the registry's order.
    pub params: &'a [&'a str],
    /// `hide=` names the snippet sets.
    pub hide: &'a [&'a str],
    /// The fallback height (`Widget::height`).
    pub height: u32,
    /// The iframe's `title`, in words (screen readers announce it).
    pub title: &'a str,
}

/// `scheme://host[:port]` of an address (the site's origin, which the host's script checks
/// `MessageEvent.origin` against); `None` for anything that is not http(s).
pub fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    normalize_origin(&format!("{scheme}://{authority}")).ok()
}

/// What an instructor types into the Embed panel's origin field, as the origin to name: an
/// origin as it is, or the address of their course page (what they most often have at hand),
/// cut down to its scheme, host and port. The `parentOrigin=` URL parameter stays strict
/// ([`normalize_origin`]): it says exactly which page may talk to the widget.
pub fn origin_typed(s: &str) -> Result<String, OriginError> {
    normalize_origin(s).or_else(|e| match e {
        OriginError::Wildcard => Err(e),
        OriginError::NotAnOrigin(_) => origin_of(s.trim()).ok_or(e),
    })
}

/// The host page's script of the snippet: sets the height of the iframe that sent a `resize`
/// (matched by its window, so several embeds share it), at most once per animation frame, only
/// for messages from the site's origin. Written once per snippet; a second copy on a page only
/// repeats the same assignment.
fn resize_script(site_origin: &str) -> String {
    format!(
        concat!(
            "<script>\n",
            "(function () {{\n",
            "  var site = \"{}\", next = new Map();\n",
            "  addEventListener(\"message\", function (e) {{\n",
            "    var d = e.data;\n",
            "    if (e.origin !== site || !d || d.api !== \"gpu-playground\" || d.type !== \"resize\") return;\n",
            "    document.querySelectorAll(\"iframe\").forEach(function (f) {{\n",
            "      if (f.contentWindow !== e.source) return;\n",
            "      if (!next.size) requestAnimationFrame(function () {{\n",
            "        next.forEach(function (h, frame) {{ frame.height = String(h); }});\n",
            "        next.clear();\n",
            "      }});\n",
            "      next.set(f, Math.max(50, Math.ceil(Number(d.height) || 0)));\n",
            "    }});\n",
            "  }});\n",
            "}})();\n",
            "</script>"
        ),
        site_origin
    )
}

/// Builds the snippet: the widget's settable parameters from `query`, the language, the
/// host's origin when the instructor named one (`parent`, already normalised: see
/// [`normalize_origin`]). The iframe is as wide as its column (`width="100%"`) and starts at
/// the widget's fallback height; with an origin, a small script sets the height from the
/// widget's `resize` messages (a host that strips scripts keeps the fallback, and the frame
/// scrolls). `base` is the site's address (no hash).
pub fn snippet(
    base: &str,
    w: &SnippetWidget,
    lang: &str,
    query: &[(String, String)],
    parent: Option<&str>,
) -> Snippet {
    let (widget, params, hide, height, title) = (w.id, w.params, w.hide, w.height, w.title);
    let mut q = crate::query::Query::default();
    for p in params {
        if let Some((_, v)) = query.iter().find(|(k, _)| k == p) {
            q.set(p, v);
        }
    }
    q.set("lang", lang);
    if !hide.is_empty() {
        q.set("hide", &hide.join(","));
    }
    if let Some(o) = parent {
        q.set("parentOrigin", o);
    }
    let src = format!("{base}#/embed/{widget}?{}", q.encode());
    let attr = |s: &str| {
        s.replace('&', "&amp;")
            .replace('"', "&quot;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut html = format!(
        r#"<iframe src="{}" width="100%" height="{height}" title="{}" loading="lazy" frameborder="0"></iframe>"#,
        attr(&src),
        attr(title)
    );
    if let (Some(_), Some(site)) = (parent, origin_of(base)) {
        html.push('\n');
        html.push_str(&resize_script(&site));
    }
    Snippet { src, html, height }
}

// ---------------------------------------------------------------- the widget registry

/// One embeddable widget: what the host may set, hide and press. Adding a widget (a conv view,
/// the editor, a puzzle) is one entry here and one arm of `components/embed.rs`'s `render`.
pub struct Widget {
    pub id: &'static str,
    /// What it is, for the embed index (locale key).
    pub title_key: &'static str,
    /// URL parameters the host may change with `setParams` (read by the widget as if typed
    /// into the address, so its own validation applies).
    pub params: &'static [&'static str],
    /// Parameters this widget always has (which view of a page it is).
    pub forced: &'static [(&'static str, &'static str)],
    /// Parameters it starts with unless the address says otherwise.
    pub defaults: &'static [(&'static str, &'static str)],
    /// Controls `hide=` can hide; each has a rule in `www/css/embed.css`.
    pub hideable: &'static [&'static str],
    /// The button a `run` request presses (a CSS selector), if the widget runs anything.
    pub run_button: Option<&'static str>,
    /// Whether a `run` while the host's run is going presses the button again, to stop it
    /// (training: Play, then Pause ends the run and reports it). Otherwise it is `busy`.
    pub run_stops: bool,
    /// The height the "Embed" button's snippet gives the iframe until the widget's first
    /// `resize` (and for hosts that strip scripts), in CSS px; its width is always 100 %.
    pub height: u32,
    /// Parameters whose value is always a whole number: `setParams` with anything else is
    /// `bad-params` at once, before `validate` runs.
    pub whole: &'static [&'static str],
    /// The page's own URL-settings parser, as named errors: `setParams` is refused when the
    /// new settings have an error the old ones had not (see [`Widget::check_params`]).
    pub validate: fn(&Query) -> Vec<ParamError>,
}

/// A URL value the page's settings parser refuses, as that page names it: its translation
/// key and placeholder values (the component fills them in the embed's language).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    pub key: &'static str,
    pub args: Vec<(&'static str, String)>,
}

impl ParamError {
    /// The words for a refused `setParams`: the page's own, except where they name a value
    /// it would use instead (true of an address, not of a request, which changes nothing).
    pub fn for_request(self) -> ParamError {
        let arg = |n: &str| {
            self.args
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let name = match self.key {
            "race.bad_param" | "vis.bad_param" | "vis.clamped" => arg("name"),
            "conv.error.url" | "gpt.error.url" => arg("key"),
            _ => return self,
        };
        let value = arg("value");
        pe(
            "embed.refused_unchanged",
            vec![("name", name), ("value", value)],
        )
    }
}

fn pe(key: &'static str, args: Vec<(&'static str, String)>) -> ParamError {
    ParamError { key, args }
}

fn no_checks(_: &Query) -> Vec<ParamError> {
    Vec::new()
}

/// The training page's parser (`train::settings`, i.e. `mlp::Spec::from_params`).
fn check_train(q: &Query) -> Vec<ParamError> {
    crate::train::settings::Settings::from_query(Some(|k: &str| q.get(k)))
        .errors
        .iter()
        .map(|e| pe(e.key(), e.args()))
        .collect()
}

fn check_cnn(q: &Query) -> Vec<ParamError> {
    ::cnn::Spec::from_params(|k| q.get(k))
        .1
        .iter()
        .map(|e| pe(e.key(), e.args()))
        .collect()
}

/// The GPT page's one URL setting: the text it trains on, `data=names|poems` (left out: the
/// language's). Its message is the page's own (`gpt.error.url`).
fn check_gpt(q: &Query) -> Vec<ParamError> {
    match q.get("data") {
        None | Some("names" | "poems") => Vec::new(),
        Some(v) => {
            let default = if q.get("lang") == Some("zh") {
                "poems"
            } else {
                "names"
            };
            vec![pe(
                "gpt.error.url",
                vec![
                    ("key", "data".to_string()),
                    ("value", v.to_string()),
                    ("default", default.to_string()),
                ],
            )]
        }
    }
}

/// The race page's parser; the defaults only change the value it would use instead, which
/// is the same on both sides of the comparison.
fn check_race(q: &Query) -> Vec<ParamError> {
    crate::race::params::RaceParams::parse(q, 4, false)
        .1
        .into_iter()
        .map(|i| {
            pe(
                "race.bad_param",
                vec![
                    ("name", i.name.to_string()),
                    ("value", i.value),
                    ("used", i.used),
                ],
            )
        })
        .collect()
}

/// The race page's conv view: its own parser after the race's.
fn check_conv_race(q: &Query) -> Vec<ParamError> {
    let mut out = check_race(q);
    out.extend(crate::race::conv_params::parse(q).1.into_iter().map(|i| {
        pe(
            "race.bad_param",
            vec![
                ("name", i.name.to_string()),
                ("value", i.value),
                ("used", i.used),
            ],
        )
    }));
    out
}

/// The conv page's parsers (the filter's settings, then the receptive-field layers).
fn check_conv_page(q: &Query) -> Vec<ParamError> {
    let (_, mut bad) = crate::conv_page::Settings::from_query(q);
    bad.extend(crate::conv_layers::LayerSettings::from_query(q).1);
    bad.into_iter()
        .map(|b| {
            pe(
                "conv.error.url",
                vec![
                    ("key", b.key.to_string()),
                    ("value", b.value),
                    ("default", b.default),
                ],
            )
        })
        .collect()
}

/// The visualiser's parser: refused text and clamped numbers both count (the page would not
/// run the value asked for).
fn check_simt(q: &Query) -> Vec<ParamError> {
    let p = crate::vis_params::VisParams::from_query(q);
    let mut out: Vec<ParamError> = p
        .rejected
        .into_iter()
        .map(|(name, value)| {
            pe(
                "vis.bad_param",
                vec![("name", name.into()), ("value", value)],
            )
        })
        .collect();
    out.extend(p.clamped.into_iter().map(|c| {
        pe(
            "vis.clamped",
            vec![
                ("name", c.name.into()),
                ("value", c.given),
                ("min", c.range.0.to_string()),
                ("max", c.range.1.to_string()),
                ("used", c.used.to_string()),
            ],
        )
    }));
    out
}

/// A Run widget's size fields (`run_family`'s parser), with the Run page's size messages.
fn check_family(family: crate::run_family::RunFamily, q: &Query) -> Vec<ParamError> {
    use crate::run_family::FieldError;
    use gpu_runtime::workload::SizeError;
    let parsed = family.parse(&family.field_values(q));
    let mut out = Vec::new();
    for (spec, err) in family.fields().iter().zip(parsed.fields) {
        let name = ("name", spec.key.to_string());
        let value = ("value", q.get(spec.key).unwrap_or(spec.default).to_string());
        out.push(match err {
            None => continue,
            Some(FieldError::Size(SizeError::Empty)) => pe("size.empty", vec![name]),
            Some(FieldError::Size(SizeError::OutOfRange { min, max })) => pe(
                "size.out_of_range",
                vec![
                    name,
                    ("min", min.to_string()),
                    ("max", numbers::count(max as u64)),
                ],
            ),
            // Not a number, or a shape the family cannot have (a zero stride…).
            Some(_) => pe("size.not_integer", vec![name, value]),
        });
    }
    out
}

fn check_matmul(q: &Query) -> Vec<ParamError> {
    check_family(crate::run_family::RunFamily::Matmul, q)
}

fn check_conv(q: &Query) -> Vec<ParamError> {
    check_family(crate::run_family::RunFamily::Conv, q)
}

impl Widget {
    /// The `setParams` values this widget cannot take whatever its state: a non-number for a
    /// whole-number parameter.
    pub fn check_values(&self, params: &[(String, String)]) -> Result<(), RequestError> {
        match params
            .iter()
            .find(|(k, v)| self.whole.contains(&k.as_str()) && v.parse::<u64>().is_err())
        {
            Some((k, v)) => Err(RequestError::NotWhole(
                k.clone(),
                v.chars().take(MAX_VALUE_LEN).collect(),
            )),
            None => Ok(()),
        }
    }

    /// Whether `setParams` may turn the settings `old` into `new`: the first error of the
    /// page's parser that `new` has and `old` had not (an address that was already bad
    /// does not block every later request).
    pub fn check_params(&self, old: &Query, new: &Query) -> Result<(), ParamError> {
        let before = (self.validate)(old);
        match (self.validate)(new)
            .into_iter()
            .find(|e| !before.contains(e))
        {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

const MATMUL: &[&str] = &["stage", "m", "n", "k"];
/// A conv stage's Run: its shape fields (the stage is fixed by the widget).
const CONV: &[&str] = &["n", "h", "w", "c", "k", "r", "s", "stride", "pad", "dil"];
/// The conv shape fields, all whole numbers.
const CONV_WHOLE: &[&str] = &["n", "h", "w", "c", "k", "r", "s", "stride", "pad", "dil"];
const CONV_LADDER: &[&str] = &[
    "stage", "n", "h", "w", "c", "k", "r", "s", "stride", "pad", "dil",
];

macro_rules! conv_stage_widget {
    ($id:literal, $title:literal) => {
        Widget {
            id: $id,
            validate: check_conv,
            title_key: $title,
            params: CONV,
            forced: &[("family", "conv"), ("stage", $id)],
            defaults: &[],
            hideable: &["title", "notes"],
            height: 760,
            run_button: Some("#run-button"),
            run_stops: false,
            whole: CONV_WHOLE,
        }
    };
}
const CONV_PAGE: &[&str] = &[
    "img", "filter", "size", "stage", "stride", "pad", "dil", "w", "k1", "k2", "init", "seed",
];
const RACE: &[&str] = &["n", "cpu", "workers", "gpu", "from", "to", "at"];
const CONV_RACE: &[&str] = &[
    "batch", "h", "w", "c", "k", "r", "s", "stride", "pad", "dil", "ccpu", "cgpu", "workers",
];
const SIMT: &[&str] = &[
    "stage", "compare", "size", "wg", "sg", "step", "wgx", "wgy", "t",
];
const TRAIN: &[&str] = &[
    "data", "layers", "act", "opt", "loss", "lr", "noise", "seed", "split", "n", "features", "add",
    "batch",
];

pub const WIDGETS: &[Widget] = &[
    Widget {
        id: "matmul",
        validate: check_matmul,
        title_key: "embed.widget.matmul",
        params: MATMUL,
        forced: &[],
        defaults: &[],
        hideable: &["title", "notes"],
        height: 560,
        run_button: Some("#run-button"),
        run_stops: false,
        whole: &["m", "n", "k"],
    },
    Widget {
        id: "ladder",
        validate: check_matmul,
        title_key: "embed.widget.ladder",
        params: MATMUL,
        forced: &[],
        defaults: &[],
        hideable: &["stages", "source", "run-all"],
        height: 900,
        run_button: Some("#run-all-button"),
        run_stops: false,
        whole: &["m", "n", "k"],
    },
    Widget {
        id: "conv-ladder",
        validate: check_conv,
        title_key: "embed.widget.conv_ladder",
        params: CONV_LADDER,
        forced: &[("family", "conv")],
        defaults: &[],
        hideable: &["stages", "source", "run-all"],
        height: 1000,
        run_button: Some("#run-all-button"),
        run_stops: false,
        whole: CONV_WHOLE,
    },
    conv_stage_widget!("conv-direct", "embed.widget.conv_direct"),
    conv_stage_widget!("conv-tiled", "embed.widget.conv_tiled"),
    conv_stage_widget!("conv-im2col-gemm", "embed.widget.conv_im2col_gemm"),
    conv_stage_widget!("conv-implicit-gemm", "embed.widget.conv_implicit_gemm"),
    conv_stage_widget!("conv-pointwise", "embed.widget.conv_pointwise"),
    Widget {
        id: "race",
        validate: check_race,
        title_key: "embed.widget.race",
        params: RACE,
        forced: &[("view", "race")],
        defaults: &[],
        hideable: &["heading", "tabs"],
        height: 700,
        run_button: Some("#race-start"),
        run_stops: false,
        whole: &["n", "workers", "from", "to", "at"],
    },
    Widget {
        id: "conv-race",
        validate: check_conv_race,
        title_key: "embed.widget.conv_race",
        params: CONV_RACE,
        forced: &[("view", "conv")],
        defaults: &[],
        hideable: &["heading", "tabs"],
        height: 900,
        run_button: Some("#race-start"),
        run_stops: false,
        whole: &[
            "batch", "h", "w", "c", "k", "r", "s", "stride", "pad", "dil", "workers",
        ],
    },
    Widget {
        id: "sweep",
        validate: check_race,
        title_key: "embed.widget.sweep",
        params: RACE,
        forced: &[("view", "sweep")],
        defaults: &[],
        hideable: &["heading", "tabs"],
        height: 820,
        run_button: Some("#sweep-start"),
        run_stops: false,
        whole: &["n", "workers", "from", "to", "at"],
    },
    Widget {
        id: "claim",
        validate: check_race,
        title_key: "embed.widget.claim",
        params: RACE,
        forced: &[("view", "claim")],
        defaults: &[],
        hideable: &["heading", "tabs"],
        height: 760,
        run_button: Some("#claim-start"),
        run_stops: false,
        whole: &["n", "workers", "from", "to", "at"],
    },
    Widget {
        id: "simt",
        validate: check_simt,
        title_key: "embed.widget.simt",
        params: SIMT,
        forced: &[],
        defaults: &[],
        hideable: &["heading", "replay", "counts"],
        height: 900,
        run_button: Some("#vis-play"),
        run_stops: false,
        whole: &[],
    },
    Widget {
        id: "simt-compare",
        validate: check_simt,
        title_key: "embed.widget.simt_compare",
        params: SIMT,
        forced: &[],
        defaults: &[("stage", "naive"), ("compare", "tiled")],
        hideable: &["heading", "replay", "counts"],
        height: 1000,
        run_button: Some("#vis-play"),
        run_stops: false,
        whole: &[],
    },
    Widget {
        id: "schedule",
        validate: no_checks,
        title_key: "embed.widget.schedule",
        params: &[],
        forced: &[],
        defaults: &[],
        hideable: &[],
        height: 600,
        run_button: Some("#real-record"),
        run_stops: false,
        whole: &[],
    },
    Widget {
        id: "train",
        validate: check_train,
        title_key: "embed.widget.train",
        params: TRAIN,
        forced: &[],
        defaults: &[],
        hideable: &["heading", "kernels", "experiment"],
        height: 1000,
        run_button: Some("#train-play"),
        run_stops: true,
        whole: &["seed", "n", "batch"],
    },
    Widget {
        id: "cnn",
        validate: check_cnn,
        title_key: "embed.widget.cnn",
        params: ::cnn::spec::PARAMS,
        forced: &[],
        defaults: &[],
        hideable: &["heading", "inside", "draw", "kernels"],
        height: 1400,
        run_button: Some("#cnn-play"),
        run_stops: true,
        whole: ::cnn::spec::WHOLE,
    },
    Widget {
        id: "gpt",
        validate: check_gpt,
        title_key: "embed.widget.gpt",
        params: &["data"],
        forced: &[],
        defaults: &[],
        hideable: &["heading", "data", "tally", "experiments", "inside"],
        height: 3000,
        run_button: Some("#gpt-train-toggle"),
        run_stops: true,
        whole: &[],
    },
    Widget {
        id: "batch",
        validate: check_train,
        title_key: "embed.widget.batch",
        params: TRAIN,
        forced: &[],
        defaults: &[],
        hideable: &["heading", "playground"],
        height: 600,
        run_button: Some("#train-exp-run"),
        run_stops: false,
        whole: &["seed", "n", "batch"],
    },
    Widget {
        id: "conv-filter",
        validate: check_conv_page,
        title_key: "embed.widget.conv_filter",
        params: CONV_PAGE,
        forced: &[],
        defaults: &[],
        hideable: &["heading", "controls"],
        height: 900,
        run_button: Some("#conv-run"),
        run_stops: false,
        whole: &[],
    },
    Widget {
        id: "conv-field",
        validate: check_conv_page,
        title_key: "embed.widget.conv_field",
        params: CONV_PAGE,
        forced: &[],
        defaults: &[],
        hideable: &["heading", "controls"],
        height: 1100,
        run_button: Some("#conv-layers-run"),
        run_stops: false,
        whole: &[],
    },
    Widget {
        id: "lesson",
        validate: no_checks,
        title_key: "embed.widget.lesson",
        params: &["lesson"],
        forced: &[],
        defaults: &[],
        hideable: &["heading", "prose"],
        height: 900,
        run_button: Some("button.measure"),
        run_stops: false,
        whole: &[],
    },
    Widget {
        id: "editor",
        validate: check_matmul,
        title_key: "embed.widget.editor",
        params: &["stage", "m", "n", "k", "src"],
        forced: &[],
        defaults: &[],
        hideable: &["heading", "stages"],
        height: 1000,
        run_button: Some("#editor-run"),
        run_stops: false,
        whole: &["m", "n", "k"],
    },
    Widget {
        id: "puzzle",
        validate: no_checks,
        title_key: "embed.widget.puzzle",
        params: &["id"],
        forced: &[],
        defaults: &[],
        hideable: &["hints", "solution", "progress"],
        height: 1000,
        run_button: Some("#puzzle-run"),
        run_stops: false,
        whole: &[],
    },
    Widget {
        id: "gpu",
        validate: no_checks,
        title_key: "embed.widget.gpu",
        params: &[],
        forced: &[],
        defaults: &[],
        hideable: &[],
        height: 640,
        run_button: None,
        run_stops: false,
        whole: &[],
    },
];

pub fn widget(id: &str) -> Option<&'static Widget> {
    WIDGETS.iter().find(|w| w.id == id)
}

// ---------------------------------------------------------------- run reports

/// What the embed host does with a finished run's report (posts `run-finished`).
pub type Reporter = Box<dyn Fn(Result<Report, String>)>;

thread_local! {
    /// Set while an embed host is mounted; widgets report finished runs through it.
    static REPORTER: RefCell<Option<Reporter>> = const { RefCell::new(None) };
}

/// Installs the mounted embed host's reporter (`None` when it unmounts).
pub fn set_reporter(f: Option<Reporter>) {
    REPORTER.with(|r| *r.borrow_mut() = f);
}

/// Called by a widget when a run has finished (or failed); does nothing outside an embed.
pub fn report(result: Result<Report, String>) {
    REPORTER.with(|r| {
        if let Some(f) = r.borrow().as_ref() {
            f(result);
        }
    });
}

// ---------------------------------------------------------------- the learner's work

/// The version of `getState`'s `work` object (docs/embedding.md, "The learner's work"): a
/// field is only ever added under the same version; a change of meaning is a new version.
pub const WORK_VERSION: u32 = 1;

thread_local! {
    /// What the learner has made in the mounted widget so far (its code, its answers, how far
    /// its training got), as the widget last noted it; empty for a widget with nothing of the
    /// learner's.
    static WORK: RefCell<Report> = const { RefCell::new(Vec::new()) };
}

/// Called by a widget whenever its learner's work changes (the whole of it, replacing what was
/// noted before). Kept whether or not an embed host is mounted yet: a widget's first effects
/// run before its host's.
pub fn note_work(work: Report) {
    WORK.with(|w| *w.borrow_mut() = work);
}

/// The learner's work as last noted (for `getState`'s reply).
pub fn work() -> Report {
    WORK.with(|w| w.borrow().clone())
}

/// Forgets the work: the host mounts a widget afresh (new settings, a reset, unmounting), and
/// the new widget notes its own.
pub fn clear_work() {
    WORK.with(|w| w.borrow_mut().clear());
}

/// The work of a code-writing widget (a puzzle, the kernel editor): which one, and the code as
/// its editor holds it now, run or not.
pub fn code_work(what: (&'static str, &str), code: &str) -> Report {
    vec![
        (what.0, Field::Str(what.1.into())),
        ("code", Field::Str(code.into())),
    ]
}

/// The results of a verified matmul run, as `run-finished` carries them.
pub fn matmul_report(
    kernel: &str,
    v: &gpu_runtime::VerifiedRun,
    size: cpu_kernels::matmul::MatmulSize,
) -> Report {
    vec![
        ("kernel", Field::Str(kernel.into())),
        ("m", Field::Num(size.m as f64)),
        ("n", Field::Num(size.n as f64)),
        ("k", Field::Num(size.k as f64)),
        ("kernelMs", Field::Num(v.timing.kernel_ms())),
        ("uploadMs", Field::Num(v.timing.upload_ms)),
        ("gflops", Field::Num(v.gflops())),
        (
            "timing",
            Field::Str(
                match v.timing.method {
                    gpu_runtime::TimingMethod::Timestamps => "gpu-timestamps",
                    gpu_runtime::TimingMethod::WallClock => "wall-clock",
                }
                .into(),
            ),
        ),
        ("verified", Field::Bool(v.verdict.ok)),
        ("maxRelError", Field::Num(v.verdict.max_rel_error)),
        ("checked", Field::Num(v.checked as f64)),
    ]
}

/// The results of a verified run of any family's stage, as `run-finished` carries them: the
/// matmul fields as before, or a conv stage's shape.
pub fn stage_report(stage: &str, v: &gpu_runtime::VerifiedRun, problem: &Problem) -> Report {
    match problem {
        Problem::Matmul(size) => matmul_report(stage, v, *size),
        Problem::Conv(s) => {
            let mut r = matmul_report(stage, v, cpu_kernels::matmul::MatmulSize::new(0, 0, 0));
            r.retain(|(k, _)| !matches!(*k, "m" | "n" | "k"));
            let dims = [
                ("n", s.n),
                ("h", s.h),
                ("w", s.w),
                ("c", s.c),
                ("k", s.k),
                ("r", s.r),
                ("s", s.s),
                ("stride", s.stride),
                ("pad", s.pad),
                ("dil", s.dilation),
            ];
            for (i, (k, d)) in dims.into_iter().enumerate() {
                r.insert(1 + i, (k, Field::Num(d as f64)));
            }
            r.insert(1, ("family", Field::Str("conv".into())));
            r
        }
    }
}

/// How one stage of a Run all ended, for its report.
pub enum RunAllRow<'a> {
    Done(&'a gpu_runtime::VerifiedRun),
    /// Not run: the adapter cannot run it, or the problem is past its limits (why, in words).
    Skipped(&'a str),
    Failed(&'a str),
    /// Not reached: the run was cancelled or the device lost first.
    NotRun,
}

/// `run-finished` of a Run all: every stage in the ladder's order, each as a single run's report
/// (`stage_report`) or with why it has none, and whether the run ended early.
pub fn run_all_report(rows: &[(&str, RunAllRow)], problem: &Problem, ended_early: bool) -> Report {
    let stages = rows
        .iter()
        .map(|(id, row)| match row {
            RunAllRow::Done(v) => stage_report(id, v, problem),
            RunAllRow::Skipped(why) => vec![
                ("kernel", Field::Str((*id).into())),
                ("skipped", Field::Str((*why).into())),
            ],
            RunAllRow::Failed(e) => vec![
                ("kernel", Field::Str((*id).into())),
                ("error", Field::Str((*e).into())),
            ],
            RunAllRow::NotRun => vec![
                ("kernel", Field::Str((*id).into())),
                ("notRun", Field::Bool(true)),
            ],
        })
        .collect();
    vec![
        ("stages", Field::List(stages)),
        ("endedEarly", Field::Bool(ended_early)),
    ]
}

/// The results of a conv race: the shape, both end-to-end times, the winner, verification.
pub fn conv_race_report(
    shape: &cpu_kernels::conv::ConvShape,
    cpu_ms: Option<f64>,
    gpu_ms: Option<f64>,
    verified: Option<bool>,
) -> Report {
    let mut r = race_report(
        cpu_kernels::matmul::MatmulSize::new(0, 0, 0),
        None,
        None,
        verified,
    );
    r.retain(|(k, _)| *k != "n");
    let rate = |ms: f64| shape.flops() / (ms * 1e6);
    let mut front = vec![
        ("family", Field::Str("conv".into())),
        ("n", Field::Num(shape.n as f64)),
        ("h", Field::Num(shape.h as f64)),
        ("w", Field::Num(shape.w as f64)),
        ("c", Field::Num(shape.c as f64)),
        ("k", Field::Num(shape.k as f64)),
        ("r", Field::Num(shape.r as f64)),
        ("s", Field::Num(shape.s as f64)),
    ];
    if let Some(c) = cpu_ms {
        front.push(("cpuMs", Field::Num(c)));
        front.push(("cpuGflops", Field::Num(rate(c))));
    }
    if let Some(g) = gpu_ms {
        front.push(("gpuMs", Field::Num(g)));
        front.push(("gpuGflops", Field::Num(rate(g))));
    }
    if let (Some(c), Some(g)) = (cpu_ms, gpu_ms) {
        front.push((
            "winner",
            Field::Str(if g < c { "gpu" } else { "cpu" }.into()),
        ));
    }
    front.extend(r);
    front
}

/// The results of a race: both end-to-end times, the winner (the duel's own rule: the
/// shorter time), and whether both results were verified.
pub fn race_report(
    size: cpu_kernels::matmul::MatmulSize,
    cpu_ms: Option<f64>,
    gpu_ms: Option<f64>,
    verified: Option<bool>,
) -> Report {
    let mut r = vec![("n", Field::Num(size.n as f64))];
    let rate = |ms: f64| size.flops() / (ms * 1e6);
    if let Some(c) = cpu_ms {
        r.push(("cpuMs", Field::Num(c)));
        r.push(("cpuGflops", Field::Num(rate(c))));
    }
    if let Some(g) = gpu_ms {
        r.push(("gpuMs", Field::Num(g)));
        r.push(("gpuGflops", Field::Num(rate(g))));
    }
    if let (Some(c), Some(g)) = (cpu_ms, gpu_ms) {
        r.push((
            "winner",
            Field::Str(if g < c { "gpu" } else { "cpu" }.into()),
        ));
    }
    r.push(("verified", Field::Bool(verified == Some(true))));
    r
}

#[cfg(test)]
mod tests {

    /// `setParams` settings as the widget would see them: `old` with `pairs` set.
    fn with(old: &Query, pairs: &[(&str, &str)]) -> Query {
        let mut q = old.clone();
        for (k, v) in pairs {
            q.set(k, v);
        }
        q
    }

    #[test]
    fn a_refused_request_names_no_value_used_instead() {
        let base = Query::default();
        let race = widget("race").expect("race widget");
        let e = race
            .check_params(&base, &with(&base, &[("n", "999999")]))
            .expect_err("n out of range")
            .for_request();
        assert_eq!(e.key, "embed.refused_unchanged");
        assert_eq!(
            e.args,
            vec![("name", "n".to_string()), ("value", "999999".to_string())]
        );
        // Messages that name no substitute are the page's own.
        let train = widget("train").expect("train widget");
        let e = train
            .check_params(&base, &with(&base, &[("batch", "999999")]))
            .expect_err("batch out of range")
            .for_request();
        assert_eq!(e.key, "train.err.batch");
    }

    #[test]
    fn set_params_is_judged_by_the_pages_own_parser() {
        let base = Query::default();
        let train = widget("train").expect("train widget");
        let e = train
            .check_params(&base, &with(&base, &[("batch", "999999")]))
            .expect_err("batch out of range");
        assert_eq!(e.key, "train.err.batch");
        assert!(e.args.contains(&("value", "999999".to_string())), "{e:?}");
        assert_eq!(
            train
                .check_params(&base, &with(&base, &[("act", "sigmoidish")]))
                .map_err(|e| e.key),
            Err("train.err.act")
        );
        assert_eq!(
            train.check_params(&base, &with(&base, &[("batch", "16")])),
            Ok(())
        );
        // The batch experiment shares the training page's settings.
        assert!(widget("batch")
            .expect("batch widget")
            .check_params(&base, &with(&base, &[("batch", "999999")]))
            .is_err());

        let race = widget("race").expect("race widget");
        let e = race
            .check_params(&base, &with(&base, &[("cpu", "abacus")]))
            .expect_err("unknown cpu");
        assert_eq!(e.key, "race.bad_param");
        assert_eq!(
            race.check_params(&base, &with(&base, &[("n", "256")])),
            Ok(())
        );

        let matmul = widget("matmul").expect("matmul widget");
        assert_eq!(
            matmul
                .check_params(&base, &with(&base, &[("m", "99999999")]))
                .map_err(|e| e.key),
            Err("size.out_of_range")
        );
        assert_eq!(
            matmul.check_params(&base, &with(&base, &[("m", "64")])),
            Ok(())
        );
        let conv = widget("conv-direct").expect("conv widget");
        assert!(conv
            .check_params(&base, &with(&base, &[("stride", "0")]))
            .is_err());

        let filter = widget("conv-filter").expect("conv page widget");
        assert_eq!(
            filter
                .check_params(&base, &with(&base, &[("img", "nope")]))
                .map_err(|e| e.key),
            Err("conv.error.url")
        );
        let simt = widget("simt").expect("simt widget");
        assert!(simt
            .check_params(&base, &with(&base, &[("size", "100000")]))
            .is_err());
    }

    #[test]
    fn an_address_that_was_already_bad_does_not_block_other_settings() {
        let bad = with(&Query::default(), &[("batch", "999999")]);
        let train = widget("train").expect("train widget");
        assert_eq!(
            train.check_params(&bad, &with(&bad, &[("seed", "7")])),
            Ok(())
        );
        // A second bad value still is refused.
        assert!(train
            .check_params(&bad, &with(&bad, &[("act", "nope")]))
            .is_err());
    }

    #[test]
    fn a_whole_number_parameter_refuses_anything_else() {
        let race = widget("race").expect("race widget");
        let p = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert_eq!(race.check_values(&p("n", "256")), Ok(()));
        assert_eq!(
            race.check_values(&p("cpu", "simd")),
            Ok(()),
            "not a number field"
        );
        for bad in ["abc", "", "-3", "2.5", "1e3"] {
            let e = race.check_values(&p("n", bad)).expect_err(bad);
            assert_eq!(e, RequestError::NotWhole("n".into(), bad.into()));
            assert_eq!(e.code(), "bad-params");
            assert!(e.message().contains("whole number"), "{}", e.message());
        }
        // Every whole-number parameter is one the widget takes.
        for w in WIDGETS {
            for k in w.whole {
                assert!(w.params.contains(k), "{}: {k} is not a parameter", w.id);
            }
        }
    }
    use super::*;

    fn obj(fields: &[(&str, Value)]) -> Value {
        Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }
    fn s(v: &str) -> Value {
        Value::Str(v.into())
    }

    #[test]
    fn origins_are_normalised_like_the_browser_writes_them() {
        assert_eq!(
            normalize_origin("HTTPS://Course.Example.edu/").as_deref(),
            Ok("https://course.example.edu")
        );
        assert_eq!(
            normalize_origin("https://a.b:443").as_deref(),
            Ok("https://a.b")
        );
        assert_eq!(
            normalize_origin("http://127.0.0.1:8080").as_deref(),
            Ok("http://127.0.0.1:8080")
        );
        assert_eq!(
            normalize_origin("http://[::1]:3000").as_deref(),
            Ok("http://[::1]:3000")
        );
        assert_eq!(normalize_origin("*"), Err(OriginError::Wildcard));
        for bad in [
            "",
            "null",
            "example.edu",
            "ftp://example.edu",
            "javascript://x",
            "https://example.edu/course",
            "https://user@example.edu",
            "https://example.edu:99999",
            "https://example.edu:",
            "https://exa mple.edu",
            "https://.edu",
            "http://[zz]",
        ] {
            assert!(
                matches!(normalize_origin(bad), Err(OriginError::NotAnOrigin(_))),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn origin_check_is_exact() {
        let allowed = parse_origins(Some("https://a.edu, http://127.0.0.1:9000")).unwrap();
        assert_eq!(allowed, ["https://a.edu", "http://127.0.0.1:9000"]);
        assert!(origin_allowed(&allowed, "https://a.edu"));
        assert!(origin_allowed(&allowed, "http://127.0.0.1:9000"));
        for other in [
            "http://a.edu",
            "https://a.edu.evil.com",
            "https://sub.a.edu",
            "http://127.0.0.1:9001",
            "null",
            "*",
            "",
        ] {
            assert!(!origin_allowed(&allowed, other), "{other} was let in");
        }
        assert_eq!(parse_origins(None), Ok(vec![]));
        assert!(!origin_allowed(&[], "https://a.edu"));
        assert_eq!(
            parse_origins(Some("https://a.edu,*")),
            Err(OriginError::Wildcard)
        );
    }

    #[test]
    fn hide_keeps_known_names_and_reports_the_rest() {
        let (hidden, unknown) = parse_hide(Some("source, sizes,,bogus"), &["sizes", "source"]);
        assert_eq!(hidden, ["sizes", "source"]);
        assert_eq!(unknown, ["bogus"]);
        assert_eq!(parse_hide(None, &["sizes"]), (vec![], vec![]));
    }

    #[test]
    fn theme_values() {
        assert_eq!(Theme::parse(None), Some(Theme::Auto));
        assert_eq!(Theme::parse(Some("dark")), Some(Theme::Dark));
        assert_eq!(Theme::parse(Some("light")), Some(Theme::Light));
        assert_eq!(Theme::parse(Some("neon")), None);
    }

    #[test]
    fn requests_parse_and_echo_ids() {
        let params = ["m", "n", "k"];
        let run = obj(&[("api", s(API)), ("type", s("run")), ("id", s("r1"))]);
        assert_eq!(
            parse_request(&run, &params),
            Parsed::Request(Request {
                id: Some(Id::Str("r1".into())),
                command: Command::Run
            })
        );
        let set = obj(&[
            ("api", s(API)),
            ("version", Value::Num(1.0)),
            ("type", s("setParams")),
            ("id", Value::Num(7.0)),
            ("params", obj(&[("m", Value::Num(128.0)), ("k", s("64"))])),
        ]);
        assert_eq!(
            parse_request(&set, &params),
            Parsed::Request(Request {
                id: Some(Id::Num(7)),
                command: Command::SetParams(vec![
                    ("m".into(), "128".into()),
                    ("k".into(), "64".into())
                ])
            })
        );
        for (t, c) in [
            ("getState", Command::GetState),
            ("reset", Command::Reset),
            ("getProgress", Command::GetProgress),
        ] {
            let r = obj(&[("api", s(API)), ("type", s(t))]);
            assert_eq!(
                parse_request(&r, &params),
                Parsed::Request(Request {
                    id: None,
                    command: c
                })
            );
        }
    }

    #[test]
    fn progress_goes_out_as_a_file_and_comes_in_as_one() {
        let r = obj(&[
            ("api", s(API)),
            ("id", s("p")),
            ("type", s("setProgress")),
            ("file", s("{\"format\":1}")),
        ]);
        assert_eq!(
            parse_request(&r, &[]),
            Parsed::Request(Request {
                id: Some(Id::Str("p".into())),
                command: Command::SetProgress("{\"format\":1}".into())
            })
        );
        // No file, or not a string: refused by name, the id echoed.
        for file in [None, Some(Value::Num(1.0)), Some(obj(&[("items", s("x"))]))] {
            let mut f = vec![("api", s(API)), ("id", s("p")), ("type", s("setProgress"))];
            if let Some(v) = file {
                f.push(("file", v));
            }
            match parse_request(&obj(&f), &[]) {
                Parsed::Invalid(Some(Id::Str(id)), e) => {
                    assert_eq!((id.as_str(), e.code()), ("p", "bad-progress"));
                    assert!(e.message().contains("progress file"), "{}", e.message());
                }
                other => panic!("{other:?}"),
            }
        }
        let id = Id::Num(7);
        assert_eq!(
            Out::Progress {
                id: Some(&id),
                file: "{\"a\":\"b\"}"
            }
            .to_json(),
            format!(
                r#"{{"api":"{API}","version":{VERSION},"type":"progress","id":7,"file":"{{\"a\":\"b\"}}"}}"#
            )
        );
        assert_eq!(
            Out::ProgressSet {
                id: None,
                solved: 2,
                drafts: 1,
                kept: 0
            }
            .to_json(),
            format!(
                r#"{{"api":"{API}","version":{VERSION},"type":"progress-set","solved":2,"drafts":1,"kept":0}}"#
            )
        );
    }

    #[test]
    fn foreign_and_bad_requests() {
        let params = ["m"];
        // Other libraries' messages (and strings, arrays…) are none of our business.
        for v in [
            s("run"),
            Value::Other,
            obj(&[("type", s("run"))]),
            obj(&[("api", s("other")), ("type", s("run"))]),
        ] {
            assert_eq!(parse_request(&v, &params), Parsed::NotOurs);
        }
        let with = |extra: &[(&str, Value)]| {
            let mut f = vec![("api", s(API)), ("id", s("x"))];
            f.extend(extra.iter().cloned());
            parse_request(&obj(&f), &params)
        };
        let id = Some(Id::Str("x".into()));
        assert_eq!(
            with(&[("type", s("eval"))]),
            Parsed::Invalid(id.clone(), RequestError::UnknownType("eval".into()))
        );
        assert_eq!(
            with(&[("type", s("run")), ("version", Value::Num(2.0))]),
            Parsed::Invalid(id.clone(), RequestError::Version)
        );
        assert_eq!(
            with(&[
                ("type", s("setParams")),
                ("params", obj(&[("evil", s("1"))]))
            ]),
            Parsed::Invalid(id.clone(), RequestError::UnknownParam("evil".into()))
        );
        assert_eq!(
            with(&[
                ("type", s("setParams")),
                ("params", obj(&[("m", Value::Other)]))
            ]),
            Parsed::Invalid(id.clone(), RequestError::BadParams)
        );
        assert_eq!(
            with(&[
                ("type", s("setParams")),
                ("params", obj(&[("m", s(&"9".repeat(300)))]))
            ]),
            Parsed::Invalid(id.clone(), RequestError::BadParams)
        );
        assert_eq!(
            with(&[("type", s("setParams"))]),
            Parsed::Invalid(id, RequestError::BadParams)
        );
        let long_id = obj(&[
            ("api", s(API)),
            ("type", s("run")),
            ("id", s(&"i".repeat(65))),
        ]);
        assert_eq!(
            parse_request(&long_id, &params),
            Parsed::Invalid(None, RequestError::BadId)
        );
        let frac_id = obj(&[("api", s(API)), ("type", s("run")), ("id", Value::Num(1.5))]);
        assert_eq!(
            parse_request(&frac_id, &params),
            Parsed::Invalid(None, RequestError::BadId)
        );
    }

    #[test]
    fn replies_are_json_with_the_id() {
        let id = Id::Str("a\"b".into());
        let results = vec![
            ("gflops", Field::Num(1.5)),
            ("verified", Field::Bool(true)),
            ("kernel", Field::Str("matmul-naive".into())),
            ("bad", Field::Num(f64::NAN)),
            (
                "points",
                Field::List(vec![
                    vec![("n", Field::Num(32.0))],
                    vec![("n", Field::Num(64.0)), ("ok", Field::Bool(false))],
                ]),
            ),
            ("none", Field::List(vec![])),
        ];
        let out = Out::RunFinished {
            id: Some(&id),
            widget: "matmul",
            results: &results,
        }
        .to_json();
        assert_eq!(
            out,
            r#"{"api":"gpu-playground","version":1,"type":"run-finished","id":"a\"b","widget":"matmul","results":{"gflops":1.5,"verified":true,"kernel":"matmul-naive","bad":null,"points":[{"n":32},{"n":64,"ok":false}],"none":[]}}"#
        );
        let p = vec![("m".to_string(), "1\n2".to_string())];
        assert_eq!(
            Out::State {
                id: Some(&Id::Num(3)),
                widget: "w",
                params: &p,
                work: None,
            }
            .to_json(),
            r#"{"api":"gpu-playground","version":1,"type":"state","id":3,"widget":"w","params":{"m":"1\n2"}}"#
        );
        let work = code_work(("puzzle", "map"), "fn main() {\n}\n");
        assert_eq!(
            Out::State {
                id: None,
                widget: "puzzle",
                params: &[],
                work: Some(&work),
            }
            .to_json(),
            r#"{"api":"gpu-playground","version":1,"type":"state","widget":"puzzle","params":{},"work":{"version":1,"puzzle":"map","code":"fn main() {\n}\n"}}"#
        );
        assert_eq!(
            Out::State {
                id: None,
                widget: "race",
                params: &[],
                work: Some(&[]),
            }
            .to_json(),
            r#"{"api":"gpu-playground","version":1,"type":"state","widget":"race","params":{},"work":{"version":1}}"#
        );
        assert_eq!(
            Out::Resize { height: 412 }.to_json(),
            r#"{"api":"gpu-playground","version":1,"type":"resize","height":412}"#
        );
        assert_eq!(
            Out::Error {
                id: None,
                code: "busy",
                message: "\u{2028}"
            }
            .to_json(),
            r#"{"api":"gpu-playground","version":1,"type":"error","code":"busy","message":"\u2028"}"#
        );
        assert_eq!(
            lti_frame_resize(300),
            r#"{"subject":"lti.frameResize","height":300}"#
        );
    }

    #[test]
    fn snippet_carries_the_state_and_escapes_it() {
        let q = vec![
            ("k".to_string(), "32".to_string()),
            ("m".to_string(), "64".to_string()),
            ("lang".to_string(), "en".to_string()),
            ("other".to_string(), "x".to_string()),
        ];
        let w = SnippetWidget {
            id: "matmul",
            params: &["m", "n", "k"],
            hide: &["title"],
            height: 520,
            title: "A \"run\" <widget>",
        };
        let s = snippet("https://a.edu/gp/", &w, "zh", &q, None);
        assert_eq!(
            s.src,
            "https://a.edu/gp/#/embed/matmul?m=64&k=32&lang=zh&hide=title"
        );
        // As wide as its column, the fallback height, no script without an origin to talk to.
        assert_eq!(
            s.html,
            r#"<iframe src="https://a.edu/gp/#/embed/matmul?m=64&amp;k=32&amp;lang=zh&amp;hide=title" width="100%" height="520" title="A &quot;run&quot; &lt;widget&gt;" loading="lazy" frameborder="0"></iframe>"#
        );
        assert_eq!(s.height, 520);
    }

    #[test]
    fn a_snippet_with_the_hosts_origin_sizes_itself_from_resize() {
        let w = SnippetWidget {
            id: "race",
            params: &["n"],
            hide: &[],
            height: 700,
            title: "GPU Playground: the race",
        };
        let q = vec![("n".to_string(), "256".to_string())];
        let s = snippet(
            "http://127.0.0.1:8080/course/gp/index.html",
            &w,
            "en",
            &q,
            Some("https://course.example.edu"),
        );
        assert_eq!(
            s.src,
            "http://127.0.0.1:8080/course/gp/index.html#/embed/race?n=256&lang=en&parentOrigin=https%3A%2F%2Fcourse.example.edu"
        );
        let (frame, script) = s.html.split_once('\n').expect("iframe, then the script");
        assert!(frame.starts_with("<iframe ") && frame.ends_with("</iframe>"));
        assert!(frame.contains(r#" width="100%" height="700" "#), "{frame}");
        assert!(
            !frame.contains("640") && !frame.contains("style="),
            "{frame}"
        );
        // The script trusts only the site's origin, sets the height of the frame that sent the
        // message, and applies at most one height per frame per animation frame.
        assert!(script.starts_with("<script>") && script.ends_with("</script>"));
        assert!(
            script.contains(r#"var site = "http://127.0.0.1:8080""#),
            "{script}"
        );
        assert!(script.contains("e.origin !== site"));
        assert!(script.contains("f.contentWindow !== e.source"));
        assert!(script.contains("d.type !== \"resize\""));
        assert!(script.contains("requestAnimationFrame"));
        assert_eq!(script.matches("addEventListener").count(), 1);
    }

    #[test]
    fn a_course_page_address_typed_as_the_origin_is_cut_to_its_origin() {
        assert_eq!(
            origin_typed(" https://Course.example.edu/week3/lesson.html?x=1#top "),
            Ok("https://course.example.edu".into())
        );
        assert_eq!(
            origin_typed("http://127.0.0.1:8000/"),
            Ok("http://127.0.0.1:8000".into())
        );
        assert_eq!(origin_typed("*"), Err(OriginError::Wildcard));
        assert!(matches!(
            origin_typed("course.example.edu/week3"),
            Err(OriginError::NotAnOrigin(_))
        ));
        assert!(matches!(
            origin_typed("ftp://course.example.edu/x"),
            Err(OriginError::NotAnOrigin(_))
        ));
    }

    #[test]
    fn origin_of_is_the_sites_scheme_host_and_port() {
        assert_eq!(
            origin_of("https://You.github.io/gpu-playground/").as_deref(),
            Some("https://you.github.io")
        );
        assert_eq!(
            origin_of("http://127.0.0.1:8080/x?y#z").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            origin_of("https://a.edu:443").as_deref(),
            Some("https://a.edu")
        );
        assert_eq!(origin_of("file:///home/x/index.html"), None);
        assert_eq!(origin_of("index.html"), None);
    }

    #[test]
    fn widget_params_leave_out_the_embeds_own() {
        let q = vec![
            ("lang".to_string(), "zh".to_string()),
            ("m".to_string(), "64".to_string()),
            ("parentOrigin".to_string(), "https://a.edu".to_string()),
            ("x".to_string(), "1".to_string()),
        ];
        assert_eq!(
            widget_params(&q, &["m", "n"]),
            [("m".to_string(), "64".to_string())]
        );
    }
}

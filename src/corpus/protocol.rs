//! The reader protocol (`conformance/PROTOCOL.md`): the request a runner sends to an adapter,
//! the answer it reads back, the reference adapter, and the judgement of one answer.

use serde_json::{json, Value};
use std::path::Path;

use super::manifest::{CaseEntry, Outcome};
use super::observe;
use crate::error::{Error, ErrorClass, Result};
use crate::gguf::{Id42Policy, Mode, RuleLayer};

/// Version of `conformance/PROTOCOL.md` this code speaks (3: rule layers and persistent mode).
pub const PROTOCOL_VERSION: u32 = 3;

/// The argument a runner passes, in place of the case file, to start a persistent adapter
/// (PROTOCOL.md §4.6).
pub const PERSISTENT_ARG: &str = "--persistent";

/// An adapter's answer for one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The reader accepted the file; `observation` is what it read (§4).
    Accept {
        /// The observation object of the request's kind.
        observation: Value,
    },
    /// The reader refused the file.
    Reject {
        /// The `spec/errors.json` class id, if the reader speaks the registry.
        class: Option<String>,
        /// The reader's message.
        message: String,
    },
    /// The reader does not support a feature the case needs.
    Unsupported {
        /// The feature (`kind:ninfer`, `ggml_type:142`, ...).
        feature: String,
    },
}

impl Answer {
    /// The answer as the protocol's JSON object.
    pub fn to_json(&self) -> Value {
        match self {
            Answer::Accept { observation } => {
                json!({"result": "accept", "observation": observation})
            }
            Answer::Reject { class, message } => {
                json!({"result": "reject", "class": class, "message": message})
            }
            Answer::Unsupported { feature } => json!({"result": "unsupported", "feature": feature}),
        }
    }

    /// Parses one adapter answer; `Err` explains why the text is garbage.
    pub fn parse(stdout: &str) -> std::result::Result<Answer, String> {
        let text = stdout.trim();
        if text.is_empty() {
            return Err("empty stdout".into());
        }
        let v: Value = serde_json::from_str(text).map_err(|e| {
            let head: String = text.chars().take(80).collect();
            format!("stdout is not one JSON object ({e}): {head:?}")
        })?;
        let obj = v.as_object().ok_or("answer is not a JSON object")?;
        match obj.get("result").and_then(Value::as_str) {
            Some("accept") => match obj.get("observation") {
                Some(o @ Value::Object(_)) => Ok(Answer::Accept {
                    observation: o.clone(),
                }),
                _ => Err("accept without an observation object".into()),
            },
            Some("reject") => {
                let class = match obj.get("class") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => Some(s.clone()),
                    Some(_) => return Err("reject.class is not a string".into()),
                };
                let message = obj
                    .get("message")
                    .and_then(Value::as_str)
                    .ok_or("reject without a message string")?
                    .to_string();
                Ok(Answer::Reject { class, message })
            }
            Some("unsupported") => Ok(Answer::Unsupported {
                feature: obj
                    .get("feature")
                    .and_then(Value::as_str)
                    .ok_or("unsupported without a feature string")?
                    .to_string(),
            }),
            _ => Err("result is not one of accept / reject / unsupported".into()),
        }
    }

    /// The exit code the protocol requires with this answer.
    pub fn exit_code(&self) -> i32 {
        match self {
            Answer::Reject { .. } => 1,
            _ => 0,
        }
    }
}

impl From<Error> for Answer {
    fn from(e: Error) -> Answer {
        Answer::Reject {
            class: Some(e.class().id().to_string()),
            message: e.to_string(),
        }
    }
}

/// The reference adapter: answers a request of `kind` on `file`, reading the named extra
/// inputs (pack cases) through `input`.
pub fn respond(
    kind: &str,
    params: &Value,
    file: &[u8],
    input: &dyn Fn(&str) -> Result<Vec<u8>>,
) -> Answer {
    match respond_inner(kind, params, file, input) {
        Ok(Some(observation)) => Answer::Accept { observation },
        Ok(None) => Answer::Unsupported {
            feature: format!("kind:{kind}"),
        },
        Err(e) => e.into(),
    }
}

fn respond_inner(
    kind: &str,
    params: &Value,
    file: &[u8],
    input: &dyn Fn(&str) -> Result<Vec<u8>>,
) -> Result<Option<Value>> {
    let p_str = |k: &str| params.get(k).and_then(Value::as_str);
    let p_u64 = |k: &str| params.get(k).and_then(Value::as_u64);
    let usage = |w: &str| Error::new(ErrorClass::ProtocolParams, "params", w.to_string());
    Ok(Some(match kind {
        "codec" => observe::observe_codec(
            p_str("codec").ok_or_else(|| usage("codec"))?,
            file,
            p_u64("rows").ok_or_else(|| usage("rows"))?,
            p_u64("cols").ok_or_else(|| usage("cols"))?,
        )?,
        "gguf" => {
            let mode = match p_str("mode").unwrap_or("strict") {
                "spec" => Mode::Spec,
                _ => Mode::Strict,
            };
            let consumer = params
                .get("consumer")
                .map(observe::consumer_from_json)
                .transpose()?;
            let id42 = match p_str("id42") {
                None | Some("auto") => Id42Policy::Auto,
                Some("g64") => Id42Policy::Mainline,
                Some("g128") => Id42Policy::LegacyPrism,
                Some(_) => return Err(usage("id42 must be auto, g64 or g128")),
            };
            observe::observe_gguf_with(file, mode, id42, consumer.as_ref())?
        }
        "ninfer" => observe::observe_ninfer(file)?,
        "rows" => observe::observe_rows(file, params)?,
        "kernel" => crate::cuda::cases::observe(file)?,
        "pack" => {
            let t = p_str("template").ok_or_else(|| usage("template"))?;
            observe::observe_pack(file, &input(t)?)?
        }
        "verify" => {
            let g = input(p_str("gguf").ok_or_else(|| usage("gguf"))?)?;
            let t = p_str("template").map(input).transpose()?;
            let d = p_str("dumps").map(input).transpose()?;
            let obs =
                crate::corpus::families::verify::observe(file, &g, t.as_deref(), d.as_deref())?;
            // A mutant must fail exactly the gates the spec names (checked here so the
            // generator refuses to write a corpus whose truth contradicts spec/gates.json).
            if let Some(want) = params.get("must_fail").and_then(Value::as_array) {
                let mut want: Vec<&str> = want.iter().filter_map(Value::as_str).collect();
                let mut got: Vec<&str> = obs["gates"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .filter(|(_, s)| *s == "FAIL")
                            .map(|(k, _)| k.as_str())
                            .collect()
                    })
                    .unwrap_or_default();
                want.sort_unstable();
                got.sort_unstable();
                if want != got {
                    return Err(Error::new(
                        ErrorClass::ProtocolParams,
                        "params.must_fail",
                        format!("verifier failed {got:?}, spec/gates.json says {want:?}"),
                    ));
                }
            }
            obs
        }
        _ => return Ok(None),
    }))
}

/// Answers one parsed request for `case_file` (the reference adapter's work for one case).
pub fn answer_request(case_file: &Path, req: &Value) -> Answer {
    let kind = req.get("kind").and_then(Value::as_str).unwrap_or("");
    let params = req.get("params").cloned().unwrap_or(json!({}));
    let inputs = req.get("inputs").cloned().unwrap_or(json!({}));
    match crate::fsio::read_input(case_file) {
        Err(e) => Answer::from(e),
        Ok(bytes) => {
            let input = |name: &str| -> Result<Vec<u8>> {
                let p = inputs
                    .get(name)
                    .and_then(Value::as_str)
                    .map(std::path::PathBuf::from)
                    .ok_or_else(|| {
                        Error::new(
                            ErrorClass::ProtocolParams,
                            format!("inputs.{name}"),
                            "input not given in the request",
                        )
                    })?;
                crate::fsio::read_input(&p)
            };
            let mut answer = respond(kind, &params, &bytes, &input);
            if let (Some(l), Answer::Accept { observation }) = (req.get("localize"), &mut answer) {
                let tensor = l.get("tensor").and_then(Value::as_str);
                if let (Some(v), Some(m)) = (
                    localize_values(kind, &params, &bytes, tensor),
                    observation.as_object_mut(),
                ) {
                    m.insert("localize".into(), v);
                }
            }
            answer
        }
    }
}

/// The reference adapter's answer to a `localize` request (PROTOCOL.md §4.7): the decoded
/// values of the codec vector (or of GGUF tensor / ternary `.ninfer` object `tensor`) as f32
/// bit patterns, with the per-row digests.
pub fn localize_values(
    kind: &str,
    params: &Value,
    bytes: &[u8],
    tensor: Option<&str>,
) -> Option<Value> {
    let (values, cols) = match kind {
        "codec" => {
            let c = crate::codec::Codec::from_name(params.get("codec")?.as_str()?)?;
            let cols = usize::try_from(params.get("cols")?.as_u64()?).ok()?;
            (c.decode_to_vec(bytes).ok()?, cols)
        }
        "gguf" => {
            let mode = match params.get("mode").and_then(Value::as_str) {
                Some("spec") => Mode::Spec,
                _ => Mode::Strict,
            };
            let g = crate::gguf::parse_with(
                bytes,
                crate::gguf::Options {
                    mode,
                    id42: Id42Policy::Auto,
                },
            )
            .ok()?;
            let t = g.tensors.iter().find(|t| Some(t.name) == tensor)?;
            let c = crate::codec::Codec::for_ggml_type(t.ggml)?;
            let cols = usize::try_from(t.dims().first().copied().unwrap_or(0)).ok()?;
            (c.decode_to_vec(g.tensor_data(t)).ok()?, cols)
        }
        "ninfer" => {
            let t = observe::ninfer_ternary(bytes, tensor?).ok()??;
            let all = t.codec.decode_to_vec(&t.blocks).ok()?;
            (t.logical(&all), t.k)
        }
        _ => return None,
    };
    let rows: Vec<String> = values
        .chunks(cols.max(1))
        .map(observe::values_sha256)
        .collect();
    Some(json!({
        "tensor": tensor,
        "rows_sha256": rows,
        "f32_bits": values.iter().map(|v| v.to_bits()).collect::<Vec<u32>>(),
    }))
}

/// `ninfer-ternary reader-adapter CASEFILE`: reads the request JSON from stdin (or
/// `--request FILE`), prints one answer line, exits 0 (accept/unsupported) or 1 (reject).
pub fn run_adapter(case_file: &Path, request: Option<&Path>) -> i32 {
    let req_text = match request {
        Some(p) => crate::fsio::read_input_string(p).unwrap_or_default(),
        None => {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut s);
            s
        }
    };
    let req: Value = serde_json::from_str(&req_text).unwrap_or(Value::Null);
    let answer = answer_request(case_file, &req);
    println!("{}", answer.to_json());
    answer.exit_code()
}

/// The handshake line a persistent adapter prints before its first answer (PROTOCOL.md §4.6).
pub fn handshake_json() -> Value {
    json!({"protocol": PROTOCOL_VERSION, "persistent": true})
}

/// One answer line of a persistent adapter: the answer with the request's `id` (PROTOCOL.md §4.6).
pub fn persistent_answer_json(id: &str, answer: &Answer) -> Value {
    let mut v = answer.to_json();
    if let Some(m) = v.as_object_mut() {
        m.insert("id".into(), Value::String(id.to_string()));
    }
    v
}

/// `ninfer-ternary reader-adapter --persistent`: prints the handshake, then answers every
/// request line of `input` with one answer line on `output` until end of input. A line that
/// is not a request object is answered with a `protocol.params` reject naming its line number.
pub fn serve_persistent(input: impl std::io::BufRead, mut output: impl std::io::Write) -> i32 {
    let mut write = |v: Value| writeln!(output, "{v}").and_then(|_| output.flush());
    if write(handshake_json()).is_err() {
        return 1;
    }
    for (n, line) in input.lines().enumerate() {
        let Ok(line) = line else { return 1 };
        if line.trim().is_empty() {
            continue;
        }
        let req: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let id = req
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let answer = match req.get("file").and_then(Value::as_str) {
            Some(file) => answer_request(Path::new(file), &req),
            None => Answer::from(Error::new(
                ErrorClass::ProtocolParams,
                format!("request line {}", n + 1),
                "not a request object with a string member 'file'",
            )),
        };
        if write(persistent_answer_json(&id, &answer)).is_err() {
            return 1;
        }
    }
    0
}

/// The request a runner writes to an adapter's stdin.
pub fn request_json(case: &CaseEntry, corpus_root: &Path) -> Value {
    let abs = |rel: &str| corpus_root.join(rel).display().to_string();
    let mut inputs = serde_json::Map::new();
    for name in &case.inputs {
        inputs.insert(name.clone(), abs(name).into());
    }
    json!({
        "protocol": PROTOCOL_VERSION,
        "id": case.id,
        "kind": case.kind,
        "file": abs(&case.file),
        "params": case.params,
        "inputs": inputs,
    })
}

/// Whether `actual` contains `expected`: objects member-wise (extra members allowed),
/// arrays element-wise with equal length, scalars equal. Returns the first mismatch, written
/// below `path` ([`mismatch`] gives it as data).
pub fn contains(expected: &Value, actual: &Value, path: &str) -> std::result::Result<(), String> {
    match mismatch(expected, actual) {
        None => Ok(()),
        Some(m) => Err(m.render(path, None)),
    }
}

/// One step of a path into a JSON value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// An object member.
    Member(String),
    /// An array element.
    Index(usize),
}

/// The first place where an observation does not contain what was expected: the path to it,
/// as data, and what differs there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// From the compared roots down to the differing value.
    pub at: Vec<Step>,
    /// What differs there.
    pub what: Difference,
}

/// What differs at a [`Mismatch`]'s path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Difference {
    /// An expected member is absent.
    Missing,
    /// An array of `got` elements where `want` were expected.
    Length {
        /// Elements observed.
        got: usize,
        /// Elements expected.
        want: usize,
    },
    /// Another value (each shown as JSON, at most 70 characters).
    Value {
        /// The observed value.
        got: String,
        /// The expected value.
        want: String,
    },
}

impl Mismatch {
    /// The mismatch in words, its path written below `root`. With `want` (the expected
    /// observation), an index into its top-level `tensors` / `objects` array also names the
    /// object (`observation.tensors[0] (tensor "w").ne: ...`), looked up by the typed path.
    pub fn render(&self, root: &str, want: Option<&Value>) -> String {
        let mut path = root.to_string();
        for (depth, step) in self.at.iter().enumerate() {
            match step {
                Step::Member(k) => {
                    path.push('.');
                    path.push_str(k);
                }
                Step::Index(i) => {
                    path.push_str(&format!("[{i}]"));
                    if depth == 1 {
                        if let Some(named) = want.and_then(|w| object_name(w, &self.at[0], *i)) {
                            path.push_str(&named);
                        }
                    }
                }
            }
        }
        match &self.what {
            Difference::Missing => format!("{path} missing"),
            Difference::Length { got, want } => format!("{path}: {got} elements, expected {want}"),
            Difference::Value { got, want } => format!("{path}: {got}, expected {want}"),
        }
    }
}

/// ` (tensor "w")` for element `i` of `want`'s top-level `tensors` (or `objects`) array.
fn object_name(want: &Value, member: &Step, i: usize) -> Option<String> {
    let Step::Member(member) = member else {
        return None;
    };
    let what = match member.as_str() {
        "tensors" => "tensor",
        "objects" => "object",
        _ => return None,
    };
    let name = want
        .get(member)?
        .as_array()?
        .get(i)?
        .get("name")?
        .as_str()?;
    Some(format!(" ({what} {name:?})"))
}

/// The first mismatch of `actual` against `expected` ([`contains`]'s rule), if any.
pub fn mismatch(expected: &Value, actual: &Value) -> Option<Mismatch> {
    let below = |step: Step, m: Option<Mismatch>| {
        m.map(|mut m| {
            m.at.insert(0, step);
            m
        })
    };
    let here = |what: Difference| {
        Some(Mismatch {
            at: Vec::new(),
            what,
        })
    };
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e.iter().find_map(|(k, ev)| match a.get(k) {
            None => below(Step::Member(k.clone()), here(Difference::Missing)),
            Some(av) => below(Step::Member(k.clone()), mismatch(ev, av)),
        }),
        (Value::Array(e), Value::Array(a)) if e.len() != a.len() => here(Difference::Length {
            got: a.len(),
            want: e.len(),
        }),
        (Value::Array(e), Value::Array(a)) => (e.iter().zip(a).enumerate())
            .find_map(|(i, (ev, av))| below(Step::Index(i), mismatch(ev, av))),
        (Value::Number(e), Value::Number(a)) => {
            if e == a || (e.as_f64().is_some() && e.as_f64() == a.as_f64()) {
                None
            } else {
                here(Difference::Value {
                    got: a.to_string(),
                    want: e.to_string(),
                })
            }
        }
        _ if expected == actual => None,
        _ => {
            // At most 70 characters of each value (cut on a character boundary).
            let show = |v: &Value| {
                let s = v.to_string();
                match s.char_indices().nth(70) {
                    Some((cut, _)) => format!("{}…", &s[..cut]),
                    None => s,
                }
            };
            here(Difference::Value {
                got: show(actual),
                want: show(expected),
            })
        }
    }
}

/// How strictly the runner checks reject classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClassCheck {
    /// The class must equal the manifest's (the adapter speaks the `spec/errors.json` registry).
    Strict,
    /// Any reject counts (foreign readers have their own error taxonomy).
    Lenient,
}

/// The judgement of one well-formed answer (process-level failures are judged by the runner).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judgement {
    /// The answer is what the case requires.
    Pass,
    /// It is not; the text says why.
    Fail(String),
    /// The reader answered `unsupported` for this feature.
    Unsupported(String),
}

/// What a reader declared in its capabilities that changes how answers are judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judging {
    /// How reject classes are checked.
    pub classes: ClassCheck,
    /// The rule layers the reader implements (PROTOCOL.md §5.3): an `n_` case of another
    /// layer is judged like an `i_` case (either outcome; never a crash).
    pub rule_layers: Vec<RuleLayer>,
    /// GGUF observations compared without file order: `keys` and `tensors` sorted, and
    /// `metadata_unordered_sha256` instead of `metadata_sha256`.
    pub order_insensitive: bool,
}

impl Judging {
    /// Every rule layer, file order: the defaults when capabilities say nothing.
    pub fn new(classes: ClassCheck) -> Judging {
        Judging {
            classes,
            rule_layers: RuleLayer::ALL.to_vec(),
            order_insensitive: false,
        }
    }

    /// Whether `case` must be rejected by this reader: an `n_` case of a declared layer. The
    /// declarable layers (`mainline`, `loader`, `recommended`, `spec`) are GGUF rule layers
    /// and waive GGUF cases only: an `n_` case of another kind (`.ninfer`, rows, pack) is of
    /// its own layer ([`case_rule_layer`]), which declaring GGUF layers never waives.
    pub fn must_reject(&self, case: &CaseEntry) -> bool {
        case.expect.outcome == Outcome::Reject
            && (case.kind != "gguf"
                || case
                    .rule_layer
                    .as_deref()
                    .and_then(RuleLayer::from_name)
                    .is_none_or(|l| self.rule_layers.contains(&l)))
    }

    /// The undeclared rule layer an `n_` case is judged leniently by (either outcome passes),
    /// or `None` when the reader must reject it (or it is no `n_` case).
    pub fn lenient_layer(&self, case: &CaseEntry) -> Option<String> {
        (case.expect.outcome == Outcome::Reject && !self.must_reject(case))
            .then(|| case_rule_layer(case))
    }
}

/// The rule layer of a case as reports name it: the GGUF layer for GGUF cases (`loader`),
/// the kind and layer for others (`ninfer.spec`, `rows.spec`), `-` when it has none.
pub fn case_rule_layer(case: &CaseEntry) -> String {
    match (case.kind.as_str(), case.rule_layer.as_deref()) {
        (_, None) => "-".into(),
        ("gguf", Some(l)) => l.to_string(),
        (k, Some(l)) => format!("{k}.{l}"),
    }
}

/// Normalizes a GGUF observation for comparison (PROTOCOL.md §4.2): `ne` without trailing 1s
/// (ggml keeps no n_dims) and, for order-insensitive readers, `keys` and `tensors` sorted.
pub fn normalize_gguf(obs: &Value, order_insensitive: bool) -> Value {
    let mut v = obs.clone();
    if let Some(ts) = v.get_mut("tensors").and_then(Value::as_array_mut) {
        for t in ts.iter_mut() {
            if let Some(ne) = t.get_mut("ne").and_then(Value::as_array_mut) {
                while ne.last().and_then(Value::as_u64) == Some(1) {
                    ne.pop();
                }
            }
        }
        if order_insensitive {
            ts.sort_by(|a, b| {
                let name = |x: &Value| x.get("name").and_then(Value::as_str).map(str::to_owned);
                name(a).cmp(&name(b))
            });
        }
    }
    if order_insensitive {
        if let Some(keys) = v.get_mut("keys").and_then(Value::as_array_mut) {
            keys.sort_by(|a, b| a.as_str().unwrap_or("").cmp(b.as_str().unwrap_or("")));
        }
    }
    v
}

/// Judges `answer` for `case` with every rule layer and file order (`Judging::new`).
pub fn judge(case: &CaseEntry, answer: &Answer, classes: ClassCheck) -> Judgement {
    judge_with(case, answer, &Judging::new(classes))
}

/// Judges `answer` for `case` as the reader's capabilities say (`j`).
pub fn judge_with(case: &CaseEntry, answer: &Answer, j: &Judging) -> Judgement {
    let exp = &case.expect;
    // An n_ case of a layer the reader does not implement: either outcome.
    let outcome = match exp.outcome {
        Outcome::Reject if !j.must_reject(case) => Outcome::Either,
        o => o,
    };
    match (outcome, answer) {
        (_, Answer::Unsupported { feature }) => Judgement::Unsupported(feature.clone()),
        (Outcome::Accept | Outcome::Either, Answer::Accept { observation }) => {
            match &exp.observation {
                Some(want) => {
                    let (want, got) = if case.kind == "gguf" {
                        let mut w = normalize_gguf(want, j.order_insensitive);
                        // Each reader is held to one of the two metadata digests.
                        if let Some(m) = w.as_object_mut() {
                            m.remove(if j.order_insensitive {
                                "metadata_sha256"
                            } else {
                                "metadata_unordered_sha256"
                            });
                        }
                        (w, normalize_gguf(observation, j.order_insensitive))
                    } else {
                        (want.clone(), observation.clone())
                    };
                    match mismatch(&want, &got) {
                        None => Judgement::Pass,
                        Some(m) => Judgement::Fail(format!(
                            "accepted, but {}",
                            m.render("observation", Some(&want))
                        )),
                    }
                }
                None => Judgement::Pass,
            }
        }
        (Outcome::Accept, Answer::Reject { class, message }) => Judgement::Fail(format!(
            "rejected a case that must be accepted: [{}] {}",
            class.as_deref().unwrap_or("-"),
            first_line(message)
        )),
        (Outcome::Reject, Answer::Accept { .. }) => Judgement::Fail(format!(
            "accepted a case that must be rejected with {} (rule layer {})",
            exp.class.as_deref().unwrap_or("an error"),
            case_rule_layer(case)
        )),
        (Outcome::Reject, Answer::Reject { class, message }) => {
            if j.classes == ClassCheck::Strict && class.as_deref() != exp.class.as_deref() {
                Judgement::Fail(format!(
                    "rejected with class {}, expected {} ({})",
                    class.as_deref().unwrap_or("none"),
                    exp.class.as_deref().unwrap_or("none"),
                    first_line(message)
                ))
            } else {
                Judgement::Pass
            }
        }
        (Outcome::Either, Answer::Reject { .. }) => Judgement::Pass,
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").chars().take(160).collect()
}

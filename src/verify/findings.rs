//! Findings are data: every gate returns one [`Finding`]; the text report and `--json` are two
//! renderings of the same list (see `report.rs`).

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// A gate's verdict: the suite's one pass/fail vocabulary.
pub use crate::verdict::Verdict;

/// One gate's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// Step key from `spec/gates.json`.
    pub step: String,
    /// The verdict.
    pub status: Verdict,
    /// One line: what was checked and the verdict in words.
    pub detail: String,
    /// Sub-results (sections, audits, controls, cases), one line each.
    pub lines: Vec<String>,
    /// Measured numbers (flattened into the JSON result object).
    pub numbers: BTreeMap<String, Value>,
    /// What failed, structured (gates that locate a failure fill this; the JSON report
    /// falls back to the gate's detail line for a failed gate that gave none).
    pub failures: Vec<Failure>,
}

/// One located failure of a gate: the `failures` entries of the JSON report.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Failure {
    /// The check inside the gate, `<step>.<check>` (e.g. `row_order.section`).
    pub check: String,
    /// The artifact object or GGUF tensor, when the failure is in one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The row, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row: Option<u64>,
    /// The element (within the row, or of the object), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element: Option<u64>,
    /// What the rule expects there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<Value>,
    /// What the artifact holds there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<Value>,
    /// The same in words (one line).
    pub message: String,
}

impl Failure {
    /// A failure with only its message (fill the rest with struct update syntax).
    pub fn new(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            ..Failure::default()
        }
    }
}

impl Finding {
    /// A finding of `step`, PASS until the gate calls `set_ok`.
    pub fn new(step: &str) -> Finding {
        Finding {
            step: step.into(),
            status: Verdict::Pass,
            detail: String::new(),
            lines: Vec::new(),
            numbers: BTreeMap::new(),
            failures: Vec::new(),
        }
    }

    /// A SKIP finding with its reason.
    pub fn skip(step: &str, detail: impl Into<String>) -> Finding {
        Finding {
            status: Verdict::Skip,
            detail: detail.into(),
            ..Finding::new(step)
        }
    }

    /// A FAIL finding with its reason.
    pub fn fail(step: &str, detail: impl Into<String>) -> Finding {
        Finding {
            status: Verdict::Fail,
            detail: detail.into(),
            ..Finding::new(step)
        }
    }

    /// Records a number (floats rounded to 6 significant digits so reports are stable).
    pub fn num(&mut self, key: &str, v: impl Into<Num>) -> &mut Self {
        self.numbers.insert(key.into(), v.into().0);
        self
    }

    /// Adds one sub-result line.
    pub fn line(&mut self, s: impl Into<String>) -> &mut Self {
        self.lines.push(s.into());
        self
    }

    /// Records a structured failure (the gate's own verdict still decides the status; the
    /// JSON report lists failures of failed gates only).
    pub fn failure(&mut self, f: Failure) -> &mut Self {
        self.failures.push(f);
        self
    }

    /// Marks the finding failed (keeps any earlier failure).
    pub fn set_ok(&mut self, ok: bool) {
        if !ok {
            self.status = Verdict::Fail;
        }
    }
}

/// A JSON number or string for [`Finding::num`].
pub struct Num(pub Value);

impl From<u64> for Num {
    fn from(v: u64) -> Num {
        Num(Value::from(v))
    }
}
impl From<usize> for Num {
    fn from(v: usize) -> Num {
        Num(Value::from(v as u64))
    }
}
impl From<i32> for Num {
    fn from(v: i32) -> Num {
        Num(Value::from(v))
    }
}
impl From<i64> for Num {
    fn from(v: i64) -> Num {
        Num(Value::from(v))
    }
}
impl From<bool> for Num {
    fn from(v: bool) -> Num {
        Num(Value::from(v))
    }
}
impl From<&str> for Num {
    fn from(v: &str) -> Num {
        Num(Value::from(v))
    }
}
impl From<String> for Num {
    fn from(v: String) -> Num {
        Num(Value::from(v))
    }
}
impl From<f64> for Num {
    fn from(v: f64) -> Num {
        Num(round6(v))
    }
}

/// 6 significant digits; non-finite values become strings ("inf", "NaN").
pub fn round6(v: f64) -> Value {
    if !v.is_finite() {
        return Value::from(format!("{v}"));
    }
    let r: f64 = format!("{v:.5e}").parse().unwrap_or(v);
    serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number)
}

/// The whole verification outcome.
#[derive(Clone, Debug)]
pub struct Report {
    /// Artifact file name (no directories, so reports are machine-independent).
    pub artifact: String,
    /// Source GGUF file name.
    pub gguf: String,
    /// The ternary format of both files.
    pub format: String,
    /// The model profile.
    pub profile: String,
    /// Said before any gate (e.g. a format mismatch note).
    pub preamble: Vec<String>,
    /// One finding per gate, in spec order.
    pub findings: Vec<Finding>,
    /// What the run cost (for a stats line; never in the JSON report, which stays
    /// deterministic).
    pub stats: Stats,
}

/// Statistics of one verification run, returned in its [`Report`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Payload bytes of the artifact and the GGUF the gates read (the same bytes read by two
    /// gates count twice).
    pub payload_bytes_read: u64,
    /// Of those, the bytes read directly from disk rather than through the page cache.
    pub direct_bytes_read: u64,
    /// Wall seconds per gate, in spec order. The gates run concurrently, so they overlap.
    pub gate_seconds: Vec<(String, f64)>,
}

impl Report {
    /// How many findings have status `s`.
    pub fn count(&self, s: Verdict) -> usize {
        self.findings.iter().filter(|f| f.status == s).count()
    }
    /// True when no gate failed.
    pub fn ok(&self) -> bool {
        self.count(Verdict::Fail) == 0
    }
    /// Step keys of failed gates, in report order.
    pub fn failed_steps(&self) -> Vec<String> {
        self.findings
            .iter()
            .filter(|f| f.status == Verdict::Fail)
            .map(|f| f.step.clone())
            .collect()
    }
}

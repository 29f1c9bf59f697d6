//! `conformance/MANIFEST.json`: the truth beside every corpus file (PROTOCOL.md §2).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Bumped when the manifest's shape changes.
pub const SCHEMA_VERSION: u32 = 2;

/// What a reader must do with a case, from its name's prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// `y_`: must accept, and the observation must match.
    Accept,
    /// `n_`: must reject.
    Reject,
    /// `i_`: either; an accepted observation must match; never crash.
    Either,
}

impl Outcome {
    /// The outcome a case name's `y_` / `n_` / `i_` prefix declares.
    pub fn from_name(name: &str) -> Option<Outcome> {
        match name.get(..2) {
            Some("y_") => Some(Outcome::Accept),
            Some("n_") => Some(Outcome::Reject),
            Some("i_") => Some(Outcome::Either),
            _ => None,
        }
    }
}

/// The expected result of one case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Accept, reject or either.
    pub outcome: Outcome,
    /// Rejects: parse, validate or decode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Rejects: the `spec/errors.json` class id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Accepts (and `i_` cases the reference accepts): the observation to contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<Value>,
    /// `i_` cases: what the reference reader does (`accept`, or `reject <class>`), for information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// One case of MANIFEST.json.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaseEntry {
    /// `family/name`, name starting with `y_`, `n_` or `i_`.
    pub id: String,
    /// Path relative to the corpus root.
    pub file: String,
    /// sha256 of the case file.
    pub sha256: String,
    /// Size of the case file.
    pub bytes: u64,
    /// The family (codec, gguf, ninfer, pack, verify). Not a rule layer: see `rule_layer`.
    pub layer: String,
    /// `n_` cases: the rule layer that refuses the input — `mainline`, `loader`,
    /// `recommended` or `spec` (PROTOCOL.md §2.1). Absent on `y_` and `i_` cases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_layer: Option<String>,
    /// The request kind (codec, gguf, ninfer, rows, pack).
    pub kind: String,
    /// The request's parameters (PROTOCOL.md), passed to adapters as given.
    pub params: Value,
    /// Extra corpus files the case reads (relative paths), passed to adapters as `inputs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<String>,
    /// Feature tags a reader may declare unsupported (capabilities.json).
    pub features: Vec<String>,
    /// The expected result.
    pub expect: Expect,
    /// The case this one was derived from by a mutation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_from: Option<String>,
    /// How the case's bytes were made, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipe: Option<String>,
    /// The spec/ sections the case exercises.
    pub spec_refs: Vec<String>,
    /// Free-form remark for readers of the manifest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Case counts of one family.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyCount {
    /// All cases.
    pub cases: usize,
    /// `y_` (must accept) cases.
    pub y: usize,
    /// `n_` (must reject) cases.
    pub n: usize,
    /// `i_` (either) cases.
    pub i: usize,
}

/// A family whose cases are not generated yet, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pending {
    /// The family.
    pub family: String,
    /// What would generate it.
    pub hook: String,
    /// Why it is pending.
    pub why: String,
}

/// MANIFEST.json: every case of the corpus with its expected result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The manifest schema version ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The reader protocol version (PROTOCOL.md).
    pub protocol_version: u32,
    /// `sha256:` of the spec tables the corpus was generated from.
    pub spec_version: String,
    /// The generator that wrote the corpus.
    pub generator: String,
    /// Case counts per family.
    pub families: BTreeMap<String, FamilyCount>,
    /// Families not generated yet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<Pending>,
    /// Every case, in generation order.
    pub cases: Vec<CaseEntry>,
}

impl Manifest {
    /// Reads and parses a MANIFEST.json.
    pub fn load(path: &std::path::Path) -> crate::Result<Manifest> {
        let text = crate::fsio::read_input_string(path)?;
        serde_json::from_str(&text).map_err(|e| {
            crate::Error::new(
                crate::ErrorClass::CorpusManifest,
                path.display().to_string(),
                format!("line {} column {}: {e}", e.line(), e.column()),
            )
        })
    }
}

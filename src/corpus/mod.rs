//! The conformance corpus (`conformance/`): deterministic case files, `MANIFEST.json`, the
//! reader protocol and the `check-reader` runner.
//!
//! Families live in one module each and return [`Case`]s; [`generate`] runs every case
//! through the reference adapter ([`protocol::respond`]) to record the expected observation
//! and refuses to write a corpus in which the reference disagrees with a case's name
//! (`y_` must accept, `n_` must reject with the declared class).
//!
//! Adding a family: write `fn cases() -> Vec<Case>` and list it in `FAMILIES`. The verifier
//! family checks artifact verifiers (PROTOCOL.md §8).
//!
//! ```
//! use ninfer_ternary::corpus::manifest::Manifest;
//!
//! // The checked-in corpus: every case names its file, its kind and what a reader must do.
//! let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance");
//! let m = Manifest::load(&root.join("MANIFEST.json")).unwrap();
//! assert!(m.cases.len() > 300);
//! assert!(m.cases.iter().all(|c| root.join(&c.file).is_file()));
//! ```

#[cfg(feature = "internals")]
pub mod catalogs;
#[cfg(not(feature = "internals"))]
pub(crate) mod catalogs;
#[cfg(feature = "internals")]
pub mod content_tags;
#[cfg(not(feature = "internals"))]
pub(crate) mod content_tags;
#[cfg(feature = "internals")]
pub mod differential;
#[cfg(not(feature = "internals"))]
pub(crate) mod differential;
#[cfg(feature = "internals")]
pub mod families;
#[cfg(not(feature = "internals"))]
pub(crate) mod families;
#[cfg(feature = "internals")]
pub mod features;
#[cfg(not(feature = "internals"))]
pub(crate) mod features;
#[cfg(feature = "internals")]
pub mod integrity;
#[cfg(not(feature = "internals"))]
pub(crate) mod integrity;
#[cfg(feature = "internals")]
pub mod known;
#[cfg(not(feature = "internals"))]
pub(crate) mod known;
#[cfg(feature = "internals")]
pub mod localize;
#[cfg(not(feature = "internals"))]
pub(crate) mod localize;
pub mod manifest;
#[cfg(feature = "internals")]
pub mod matrix;
#[cfg(not(feature = "internals"))]
pub(crate) mod matrix;
#[cfg(feature = "internals")]
pub mod observe;
#[cfg(not(feature = "internals"))]
pub(crate) mod observe;
#[cfg(feature = "internals")]
pub mod persistent;
#[cfg(not(feature = "internals"))]
pub(crate) mod persistent;
#[cfg(feature = "internals")]
pub mod process;
#[cfg(not(feature = "internals"))]
pub(crate) mod process;
pub mod protocol;
pub mod runner;

/// A generator inconsistency (a bug in this tool, never an input): `internal.invariant`.
macro_rules! inv {
    ($($t:tt)*) => {
        crate::Error::new(ErrorClass::InternalInvariant, "corpus generate", format!($($t)*))
    };
}
macro_rules! bail_inv {
    ($($t:tt)*) => {
        return Err(inv!($($t)*))
    };
}
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

use manifest::{CaseEntry, Expect, FamilyCount, Manifest, Outcome, Pending, SCHEMA_VERSION};

use crate::error::ErrorClass;

/// One case before its expected outcome is computed.
#[derive(Clone, Debug)]
pub struct Case {
    /// The family (the case id's first part and its folder).
    pub layer: &'static str,
    /// The case name, starting with `y_`, `n_` or `i_`.
    pub name: String,
    /// File extension of a case that brings its own bytes.
    pub ext: &'static str,
    /// `Some`: the case's own file. `None`: it reads `file` written by another case.
    pub bytes: Option<Vec<u8>>,
    /// Relative path of the file when `bytes` is `None`.
    pub shared_file: Option<String>,
    /// The request kind (codec, gguf, ninfer, rows, pack, …).
    pub kind: &'static str,
    /// The request's parameters.
    pub params: serde_json::Map<String, Value>,
    /// Extra corpus files the case reads.
    pub inputs: Vec<String>,
    /// Feature tags a reader may declare unsupported.
    pub features: Vec<String>,
    /// The spec/ sections the case exercises.
    pub spec_refs: Vec<String>,
    /// `n_` cases: the error class the reference must refuse it with.
    pub class: Option<ErrorClass>,
    /// `n_` cases: the rule layer that refuses the input (PROTOCOL.md §2.1). GGUF cases set it
    /// from `spec/gguf.json` `rule_layers`; other families' rules are their own spec (`spec`).
    pub rule_layer: Option<crate::gguf::RuleLayer>,
    /// `n_` cases: the phase that refuses it (parse, validate, decode).
    pub phase: Option<&'static str>,
    /// The case this one was mutated from.
    pub derived_from: Option<String>,
    /// How the bytes were made, in words.
    pub recipe: Option<String>,
    /// Free-form remark copied into the manifest.
    pub note: Option<String>,
    /// An expected partial observation computed by the generator independently of the reference
    /// decoder; `generate` refuses a corpus whose reference observation does not contain it.
    pub check: Option<Value>,
}

impl Case {
    /// A case of family `layer` with its own file `<layer>/<name>.<ext>` holding `bytes`.
    pub fn new(
        layer: &'static str,
        name: impl Into<String>,
        kind: &'static str,
        ext: &'static str,
        bytes: Vec<u8>,
    ) -> Case {
        Case {
            layer,
            name: name.into(),
            ext,
            bytes: Some(bytes),
            shared_file: None,
            kind,
            params: Default::default(),
            inputs: Vec::new(),
            features: vec![format!("kind:{kind}")],
            spec_refs: Vec::new(),
            class: None,
            rule_layer: None,
            phase: None,
            derived_from: None,
            recipe: None,
            note: None,
            check: None,
        }
    }

    /// A case over a file another case writes (e.g. a pack case over the nano GGUF).
    pub fn shared(
        layer: &'static str,
        name: impl Into<String>,
        kind: &'static str,
        file: impl Into<String>,
    ) -> Case {
        let mut c = Case::new(layer, name, kind, "", Vec::new());
        c.bytes = None;
        c.shared_file = Some(file.into());
        c
    }

    /// Adds request parameter `k`.
    pub fn param(mut self, k: &str, v: impl Into<Value>) -> Case {
        self.params.insert(k.into(), v.into());
        self
    }
    /// Adds a feature tag (once).
    pub fn feature(mut self, f: impl Into<String>) -> Case {
        let f = f.into();
        if !self.features.contains(&f) {
            self.features.push(f);
        }
        self
    }
    /// Adds a spec/ reference.
    pub fn spec(mut self, r: impl Into<String>) -> Case {
        self.spec_refs.push(r.into());
        self
    }
    /// Declares the error class the case must be refused with.
    pub fn reject(mut self, class: ErrorClass) -> Case {
        self.class = Some(class);
        self
    }
    /// Declares the rule layer that refuses the case.
    pub fn rule_layer(mut self, l: crate::gguf::RuleLayer) -> Case {
        self.rule_layer = Some(l);
        self
    }
    /// Declares the phase that refuses the case.
    pub fn phase(mut self, p: &'static str) -> Case {
        self.phase = Some(p);
        self
    }
    /// Records the case it was mutated from and how.
    pub fn derived(mut self, from: impl Into<String>, recipe: impl Into<String>) -> Case {
        self.derived_from = Some(from.into());
        self.recipe = Some(recipe.into());
        self
    }
    /// Records how the bytes were made.
    pub fn recipe(mut self, r: impl Into<String>) -> Case {
        self.recipe = Some(r.into());
        self
    }
    /// Sets the independently computed partial observation that `generate` checks.
    pub fn check(mut self, v: Value) -> Case {
        self.check = Some(v);
        self
    }

    /// Adds a remark.
    pub fn note(mut self, n: impl Into<String>) -> Case {
        self.note = Some(n.into());
        self
    }
    /// Adds an extra corpus file the case reads.
    pub fn input(mut self, rel: impl Into<String>) -> Case {
        self.inputs.push(rel.into());
        self
    }

    /// `family/name`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.layer, self.name)
    }

    /// The case file's path relative to the corpus root.
    pub fn file(&self) -> String {
        match &self.shared_file {
            Some(f) => f.clone(),
            None => format!("{}/{}.{}", self.layer, self.name, self.ext),
        }
    }
}

/// A family: its name and its case builder.
pub(crate) type Family = (&'static str, fn() -> crate::Result<Vec<Case>>);

/// Every family, in manifest order.
pub(crate) const FAMILIES: &[Family] = &[
    ("codec", families::codec::cases),
    ("gguf", families::gguf::cases),
    ("ninfer", families::ninfer::cases),
    ("pack", families::pack::cases),
    ("verify", families::verify::cases),
    ("kernel", families::kernel::cases),
    ("boundaries", families::boundaries::cases),
];

/// The generated corpus: manifest plus files by relative path.
pub struct Corpus {
    /// The manifest.
    pub manifest: Manifest,
    /// Every file, by path relative to the corpus root.
    pub files: BTreeMap<String, Vec<u8>>,
}

/// Identifies the spec tables a corpus was generated from.
pub fn spec_version() -> String {
    let mut all = Vec::new();
    for (name, text) in crate::spec::SOURCES {
        all.extend_from_slice(name.as_bytes());
        all.push(0);
        all.extend_from_slice(text.as_bytes());
        all.push(0);
    }
    format!("sha256:{}", &observe::sha256_hex(&all)[..16])
}

fn phase_of(class: ErrorClass) -> String {
    crate::spec::get()
        .errors
        .classes
        .iter()
        .find(|c| c.id == class.id())
        .map(|c| c.phase.clone())
        .unwrap_or_else(|| "parse".into())
}

/// Builds every case, runs it through the reference adapter and assembles the manifest.
pub fn generate() -> crate::Result<Corpus> {
    let mut cases = Vec::new();
    for (fam, build) in FAMILIES {
        for c in build()? {
            if c.layer != *fam {
                bail_inv!("case {} is listed under family {fam}", c.id());
            }
            cases.push(c);
        }
    }
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut ids = std::collections::BTreeSet::new();
    for c in &cases {
        if !ids.insert(c.id()) {
            bail_inv!("duplicate case id {}", c.id());
        }
        if Outcome::from_name(&c.name).is_none() {
            bail_inv!("case {} does not start with y_, n_ or i_", c.id());
        }
        if let Some(b) = &c.bytes {
            let f = c.file();
            if let Some(old) = files.insert(f.clone(), b.clone()) {
                if &old != b {
                    bail_inv!("two cases write {f} with different bytes");
                }
            }
        }
    }
    let mut entries = Vec::new();
    let mut families: BTreeMap<String, FamilyCount> = FAMILIES
        .iter()
        .map(|(f, _)| (f.to_string(), FamilyCount::default()))
        .collect();
    for c in &cases {
        let file = c.file();
        let bytes = files
            .get(&file)
            .ok_or_else(|| inv!("{}: file {file} is written by no case", c.id()))?;
        for i in &c.inputs {
            if !files.contains_key(i) {
                bail_inv!("{}: input {i} is written by no case", c.id());
            }
        }
        let params = Value::Object(c.params.clone());
        let lookup = |name: &str| -> crate::Result<Vec<u8>> {
            files
                .get(name)
                .cloned()
                .ok_or_else(|| crate::Error::new(ErrorClass::IoRead, name, "not in the corpus"))
        };
        let answer = protocol::respond(c.kind, &params, bytes, &lookup);
        let Some(outcome) = Outcome::from_name(&c.name) else {
            bail_inv!("case {} does not start with y_, n_ or i_", c.id());
        };
        let expect = expect_of(c, outcome, &answer)?;
        let rule_layer = rule_layer_of(c, outcome)?;
        let fc = families.entry(c.layer.to_string()).or_default();
        fc.cases += 1;
        match outcome {
            Outcome::Accept => fc.y += 1,
            Outcome::Reject => fc.n += 1,
            Outcome::Either => fc.i += 1,
        }
        entries.push(CaseEntry {
            id: c.id(),
            file: file.clone(),
            sha256: observe::sha256_hex(bytes),
            bytes: bytes.len() as u64,
            layer: c.layer.to_string(),
            rule_layer,
            kind: c.kind.to_string(),
            params,
            inputs: c.inputs.clone(),
            // A case a reader may accept is tagged with every format its file holds (its
            // observation covers every object); an n_ case keeps its family's tags.
            features: if outcome == Outcome::Reject {
                c.features.clone()
            } else {
                content_tags::retag(&c.features, bytes)
            },
            expect,
            derived_from: c.derived_from.clone(),
            recipe: c.recipe.clone(),
            spec_refs: c.spec_refs.clone(),
            note: c.note.clone(),
        });
    }
    // Families still waiting for their generator would be listed here (none are).
    let pending: Vec<Pending> = Vec::new();
    Ok(Corpus {
        manifest: Manifest {
            schema_version: SCHEMA_VERSION,
            protocol_version: protocol::PROTOCOL_VERSION,
            spec_version: spec_version(),
            generator: format!(
                "ninfer-ternary {} corpus generate",
                env!("CARGO_PKG_VERSION")
            ),
            families,
            pending,
            cases: entries,
        },
        files,
    })
}

/// What the manifest expects of case `c`, from the reference adapter's `answer` (checked
/// against the case's own declaration and its independent expectation).
fn expect_of(c: &Case, outcome: Outcome, answer: &protocol::Answer) -> crate::Result<Expect> {
    let mut expect = Expect {
        outcome,
        phase: None,
        class: None,
        observation: None,
        reference: None,
    };
    use protocol::Answer;
    match (outcome, answer) {
        (Outcome::Accept, Answer::Accept { observation }) => {
            if let Some(chk) = &c.check {
                protocol::contains(chk, observation, "observation").map_err(|e| {
                    inv!(
                        "{}: the reference disagrees with the independent expectation: {e}",
                        c.id()
                    )
                })?;
            }
            expect.observation = Some(observation.clone())
        }
        (Outcome::Reject, Answer::Reject { class, message }) => {
            let want = c
                .class
                .ok_or_else(|| inv!("{}: n_ case without an error class", c.id()))?;
            if class.as_deref() != Some(want.id()) {
                bail_inv!(
                    "{}: reference rejects with {class:?}, case declares {want}: {message}",
                    c.id()
                );
            }
            expect.class = Some(want.id().to_string());
            expect.phase = Some(
                c.phase
                    .map(str::to_string)
                    .unwrap_or_else(|| phase_of(want)),
            );
        }
        (Outcome::Either, Answer::Accept { observation }) => {
            expect.observation = Some(observation.clone());
            expect.reference = Some("accept".into());
        }
        (Outcome::Either, Answer::Reject { class, .. }) => {
            expect.reference = Some(format!("reject {}", class.as_deref().unwrap_or("-")));
        }
        (_, a) => bail_inv!(
            "{}: the reference answers {} for a case named {}",
            c.id(),
            a.to_json(),
            c.name
        ),
    }
    Ok(expect)
}

/// The rule layer an `n_` case is held to (`None` for the others).
fn rule_layer_of(c: &Case, outcome: Outcome) -> crate::Result<Option<String>> {
    Ok(match (outcome, c.rule_layer) {
        (Outcome::Reject, Some(l)) => Some(l.name().to_string()),
        (Outcome::Reject, None) if c.layer != "gguf" => {
            Some(crate::gguf::RuleLayer::Spec.name().to_string())
        }
        (Outcome::Reject, None) => bail_inv!(
            "{}: a gguf n_ case needs a rule layer (spec/gguf.json rule_layers)",
            c.id()
        ),
        (_, Some(_)) => bail_inv!("{}: only n_ cases name a rule layer", c.id()),
        (_, None) => None,
    })
}

impl Corpus {
    /// `MANIFEST.json` text (pretty, trailing newline, deterministic).
    pub fn manifest_text(&self) -> String {
        // A manifest is strings, numbers and JSON values: serde_json cannot fail on it; an
        // empty text would be caught by every comparison against a real corpus.
        let mut s = serde_json::to_string_pretty(&self.manifest).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Every generated file, `MANIFEST.json` included, by relative path.
    pub fn all_files(&self) -> BTreeMap<String, Vec<u8>> {
        let mut m = self.files.clone();
        m.insert("MANIFEST.json".into(), self.manifest_text().into_bytes());
        m
    }

    /// Writes the corpus under `dir` and returns the files there it left alone (it did not
    /// write them). `dir` must be absent, empty, or a corpus this tool wrote (its MANIFEST.json
    /// names this generator): any other folder is refused (`io.foreign_output`) before anything
    /// is written. A stale file is removed only when the previous MANIFEST.json listed it (this
    /// tool wrote it); a file the tool did not write is never removed, and one at a path the
    /// corpus needs is refused (`io.foreign_output`), again before anything is written. A
    /// family folder that is a symlink is refused: the tool never writes through a link.
    pub fn write(&self, dir: &Path) -> crate::Result<Vec<String>> {
        let all = self.all_files();
        let owned = owned_files(dir)?;
        let cmp = self.compare(dir)?;
        // Claim everything first: nothing is written or removed unless all of it may be.
        for rel in all.keys().chain(cmp.extra.iter()) {
            let p = dir.join(rel);
            if let Some(parent) = p.parent() {
                refuse_link(dir, parent)?;
            }
            match std::fs::symlink_metadata(&p) {
                Err(_) => {}
                Ok(m) if m.is_file() && owned.contains(rel.as_str()) => {}
                // Not ours: a stale path is left alone, a needed path is refused.
                Ok(_) if !all.contains_key(rel) => {}
                Ok(_) => {
                    return Err(crate::Error::new(
                        crate::ErrorClass::IoForeignOutput,
                        p.display().to_string(),
                        format!(
                            "exists, and the corpus MANIFEST.json in {} does not list it: this \
                             tool did not write it, so it is never replaced — move it away",
                            dir.display()
                        ),
                    ));
                }
            }
        }
        let mut left = Vec::new();
        for stale in cmp.extra {
            let p = dir.join(&stale);
            if owned.contains(stale.as_str()) {
                std::fs::remove_file(&p).map_err(crate::fsio::write_err(&stale))?;
            } else {
                left.push(stale);
            }
        }
        for (rel, bytes) in &all {
            let p = dir.join(rel);
            if std::fs::read(&p).ok().as_deref() == Some(bytes.as_slice()) {
                continue;
            }
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).map_err(crate::fsio::write_err(rel))?;
            }
            // Replace only what the previous manifest listed; anything that appeared since
            // the claim above survives.
            let replace = if owned.contains(rel.as_str()) {
                crate::fsio::Replace::Allow
            } else {
                crate::fsio::Replace::Never
            };
            crate::fsio::write_file(&p, bytes, replace)?;
        }
        Ok(left)
    }

    /// Byte-compares with the corpus under `dir`.
    pub fn compare(&self, dir: &Path) -> crate::Result<Comparison> {
        let all = self.all_files();
        let mut cmp = Comparison::default();
        for (rel, bytes) in &all {
            match std::fs::read(dir.join(rel)) {
                Ok(b) if &b == bytes => {}
                Ok(_) => cmp.differ.push(rel.clone()),
                Err(_) => cmp.missing.push(rel.clone()),
            }
        }
        for (fam, _) in FAMILIES {
            let d = dir.join(fam);
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut names: Vec<String> = rd
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .map(|e| format!("{fam}/{}", e.file_name().to_string_lossy()))
                .collect();
            names.sort();
            cmp.extra
                .extend(names.into_iter().filter(|n| !all.contains_key(n)));
        }
        Ok(cmp)
    }

    /// Total bytes of the generated files.
    pub fn total_bytes(&self) -> u64 {
        self.all_files().values().map(|b| b.len() as u64).sum()
    }
}

/// The files of the corpus this tool wrote under `dir`: `MANIFEST.json` and every case file
/// it lists, when its `generator` is this tool. An absent or empty `dir` has none; any other
/// non-empty folder is not a corpus of this tool and is refused (`io.foreign_output`).
fn owned_files(dir: &Path) -> crate::Result<std::collections::BTreeSet<String>> {
    let mut owned = std::collections::BTreeSet::new();
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return Ok(owned);
    };
    if !meta.is_dir() {
        return Err(crate::Error::new(
            crate::ErrorClass::IoNotRegular,
            dir.display().to_string(),
            "is not a directory; the corpus output must be a directory",
        ));
    }
    let manifest = dir.join("MANIFEST.json");
    let text = std::fs::symlink_metadata(&manifest)
        .ok()
        .filter(|m| m.is_file())
        .and_then(|_| std::fs::read_to_string(&manifest).ok());
    let parsed: Option<Value> = text.and_then(|t| serde_json::from_str(&t).ok());
    let ours = parsed.as_ref().is_some_and(|v| {
        v["generator"]
            .as_str()
            .is_some_and(|g| g.starts_with("ninfer-ternary ") && g.ends_with(" corpus generate"))
    });
    if !ours {
        if crate::fsio::is_ours_or_empty(dir) {
            return Ok(owned);
        }
        return Err(crate::Error::new(
            crate::ErrorClass::IoForeignOutput,
            dir.display().to_string(),
            "is a non-empty folder without a corpus MANIFEST.json written by this tool; \
             `corpus generate` writes only into a new or empty folder or a corpus it wrote",
        ));
    }
    owned.insert("MANIFEST.json".to_string());
    if let Some(cases) = parsed.as_ref().and_then(|v| v["cases"].as_array()) {
        for c in cases {
            if let Some(f) = c["file"].as_str() {
                owned.insert(f.to_string());
            }
        }
    }
    Ok(owned)
}

/// Refuses, before the generation, an output folder [`Corpus::write`] would refuse: a
/// non-directory, or a non-empty folder that is not a corpus this tool wrote.
pub(crate) fn check_output_folder(dir: &Path) -> crate::Result<()> {
    owned_files(dir).map(drop)
}

/// Refuses a folder between `root` and a corpus file that is a symlink (writes would land
/// outside the corpus).
fn refuse_link(root: &Path, folder: &Path) -> crate::Result<()> {
    let mut p = folder;
    while p != root && p.starts_with(root) {
        if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(crate::Error::new(
                crate::ErrorClass::IoNotRegular,
                p.display().to_string(),
                "is a symbolic link; corpus folders must be real folders (the tool never \
                 writes through a link)",
            ));
        }
        match p.parent() {
            Some(q) => p = q,
            None => break,
        }
    }
    Ok(())
}

/// Result of [`Corpus::compare`].
#[derive(Debug, Default)]
pub struct Comparison {
    /// Files present in both with different bytes.
    pub differ: Vec<String>,
    /// Generated files absent on disk.
    pub missing: Vec<String>,
    /// Files on disk the generator does not write.
    pub extra: Vec<String>,
}

impl Comparison {
    /// Whether there is no difference.
    pub fn identical(&self) -> bool {
        self.differ.is_empty() && self.missing.is_empty() && self.extra.is_empty()
    }
}

pub(crate) use crate::rng::Bytes;

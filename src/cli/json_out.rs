//! The one convention for machine-readable reports: `--json PATH|-` (`-` = standard output),
//! a file is claimed before any work (an existing one needs `--force`), written atomically,
//! and every report starts with `{"schema": "ninfer-ternary/<name>/<version>", "tool_version": ...}`;
//! the schemas are `spec/schemas/<name>.schema.json`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, ErrorClass, Result};

/// Where a `--json` report goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum JsonTarget {
    /// Standard output (`--json -`): the report owns it; human lines go to standard error.
    Stdout,
    /// A file, replaced atomically.
    File(PathBuf),
}

impl JsonTarget {
    /// `-` is standard output, anything else a file path.
    pub(crate) fn parse(p: &Path) -> JsonTarget {
        if p == Path::new("-") {
            JsonTarget::Stdout
        } else {
            JsonTarget::File(p.to_path_buf())
        }
    }

    /// Claims the target before any work: an existing file needs `force`, an input of the
    /// command is never the report ([`crate::fsio::claim_output`]).
    pub(crate) fn claim(p: Option<&Path>, force: bool, inputs: &[&Path]) -> Result<Option<Self>> {
        let Some(p) = p else { return Ok(None) };
        let t = JsonTarget::parse(p);
        if let JsonTarget::File(f) = &t {
            crate::fsio::claim_output(f, crate::fsio::OutputKind::File, force, inputs)?;
        }
        Ok(Some(t))
    }

    /// True when the report is written to standard output (human output must use stderr).
    pub(crate) fn is_stdout(&self) -> bool {
        matches!(self, JsonTarget::Stdout)
    }

    /// Writes `body` (an object) under the report header of `schema` (e.g. `verify-report`);
    /// a file replaces an existing one only as its claim allows (`--force`).
    pub(crate) fn write(&self, schema: &str, body: Value) -> Result<()> {
        let replace = match self {
            JsonTarget::File(p) => crate::fsio::replace_for(p),
            JsonTarget::Stdout => crate::fsio::Replace::Never,
        };
        self.write_with(schema, body, replace)
    }

    fn write_with(&self, schema: &str, body: Value, replace: crate::fsio::Replace) -> Result<()> {
        let v = with_header(schema, body)?;
        let mut s = serde_json::to_string_pretty(&v).map_err(|e| {
            Error::new(
                ErrorClass::InternalInvariant,
                schema,
                format!("report not serializable: {e}"),
            )
        })?;
        s.push('\n');
        match self {
            JsonTarget::Stdout => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                out.write_all(s.as_bytes())
                    .and_then(|_| out.flush())
                    .map_err(|e| Error::new(ErrorClass::IoStdout, "standard output", e.to_string()))
            }
            JsonTarget::File(p) => crate::fsio::write_file(p, s.as_bytes(), replace),
        }
    }
}

/// The schema id of report `name`: `ninfer-ternary/<name>/1`.
pub(crate) fn schema_id(name: &str) -> String {
    format!("ninfer-ternary/{name}/1")
}

/// `v` as a JSON value for the report or member `what`. Failing is a bug of this tool (every
/// report type serializes), so it is `internal.invariant`.
pub(crate) fn to_value(what: &str, v: impl serde::Serialize) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| {
        Error::new(
            ErrorClass::InternalInvariant,
            what,
            format!("not serializable: {e}"),
        )
    })
}

/// `body` with `schema` and `tool_version` as its first two members.
pub(crate) fn with_header(schema: &str, body: Value) -> Result<Value> {
    let Value::Object(fields) = body else {
        return Err(Error::new(
            ErrorClass::InternalInvariant,
            schema,
            "a report body must be a JSON object",
        ));
    };
    let mut m = Map::new();
    m.insert("schema".into(), Value::String(schema_id(schema)));
    m.insert(
        "tool_version".into(),
        Value::String(env!("CARGO_PKG_VERSION").into()),
    );
    for (k, v) in fields {
        if k != "schema" && k != "tool_version" {
            m.insert(k, v);
        }
    }
    Ok(Value::Object(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_comes_first_and_a_non_object_is_refused() {
        let v = with_header("x-report", serde_json::json!({"a": 1, "schema": "old"})).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["schema", "tool_version", "a"]);
        assert_eq!(v["schema"], "ninfer-ternary/x-report/1");
        assert!(with_header("x", serde_json::json!([1])).is_err());
    }

    #[test]
    fn an_existing_file_needs_force() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.json");
        std::fs::write(&p, "{}").unwrap();
        let e = JsonTarget::claim(Some(&p), false, &[]).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoOutputExists);
        assert!(JsonTarget::claim(Some(&p), true, &[]).unwrap().is_some());
        assert_eq!(
            JsonTarget::claim(Some(Path::new("-")), false, &[]).unwrap(),
            Some(JsonTarget::Stdout)
        );
    }
}

/// Where a command's `--json` report would have gone, recorded before the command runs, so a
/// command that stops on an error can still leave a machine-readable report there.
#[derive(Clone, Debug)]
pub(crate) struct ErrorReportTarget {
    /// The subcommand's name, e.g. `inspect`.
    pub(crate) command: &'static str,
    target: JsonTarget,
    /// A file target that did not exist when the command started: the only kind of file the
    /// error report may be written to (never one that existed, which could be an input or a
    /// file the user kept; those get the stderr line only).
    fresh_file: bool,
}

impl ErrorReportTarget {
    /// Records `--json p` of `command` (`None` when the command has no `--json` or none given).
    pub(crate) fn record(command: &'static str, p: Option<&Path>) -> Option<Self> {
        let p = p?;
        let target = JsonTarget::parse(p);
        let fresh_file = match &target {
            JsonTarget::Stdout => false,
            JsonTarget::File(f) => std::fs::symlink_metadata(f).is_err(),
        };
        Some(ErrorReportTarget {
            command,
            target,
            fresh_file,
        })
    }

    /// Writes the error report for `class` / `err` (the first crate error of the chain, if any)
    /// and the stderr `message`; returns whether it was written. A failure to write it is not
    /// reported over the original error.
    pub(crate) fn write(&self, class: ErrorClass, err: Option<&Error>, message: &str) -> bool {
        if matches!(self.target, JsonTarget::File(_)) && !self.fresh_file {
            return false;
        }
        let body = error_body(self.command, class, err, message);
        // Never over a file that appeared since the command started.
        self.target
            .write_with("error-report", body, crate::fsio::Replace::Never)
            .is_ok()
    }
}

/// The body of `spec/schemas/error-report.schema.json`.
pub(crate) fn error_body(
    command: &str,
    class: ErrorClass,
    err: Option<&Error>,
    message: &str,
) -> Value {
    let phase = crate::spec::get()
        .errors
        .classes
        .iter()
        .find(|c| c.id == class.id())
        .map(|c| c.phase.clone());
    let mut e = Map::new();
    e.insert("class".into(), Value::String(class.id().into()));
    if let Some(p) = phase {
        e.insert("phase".into(), Value::String(p));
    }
    e.insert(
        "field".into(),
        Value::String(err.map(|x| x.field().to_string()).unwrap_or_default()),
    );
    if let Some(off) = err.and_then(|x| x.offset()) {
        e.insert("offset".into(), Value::from(off));
    }
    e.insert(
        "detail".into(),
        Value::String(
            err.map(|x| x.detail().to_string())
                .unwrap_or_else(|| message.to_string()),
        ),
    );
    e.insert("message".into(), Value::String(message.to_string()));
    let mut m = Map::new();
    m.insert("command".into(), Value::String(command.into()));
    m.insert("exit_code".into(), Value::from(class.exit_code()));
    m.insert("error".into(), Value::Object(e));
    Value::Object(m)
}

#[cfg(test)]
mod error_report_tests {
    use super::*;

    #[test]
    fn an_existing_file_never_receives_the_error_report() {
        let d = tempfile::tempdir().unwrap();
        let kept = d.path().join("kept.json");
        std::fs::write(&kept, "mine").unwrap();
        let t = ErrorReportTarget::record("inspect", Some(&kept)).unwrap();
        let e = Error::at(ErrorClass::GgufMagic, 0, "header.magic", "not GGUF");
        assert!(!t.write(e.class(), Some(&e), "[gguf.magic] ..."));
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "mine");
        // A fresh file gets the report, with class, phase, field and offset.
        let fresh = d.path().join("fresh.json");
        let t = ErrorReportTarget::record("inspect", Some(&fresh)).unwrap();
        assert!(t.write(
            e.class(),
            Some(&e),
            "[gguf.magic] header.magic at byte 0: not GGUF"
        ));
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&fresh).unwrap()).unwrap();
        assert_eq!(v["schema"], "ninfer-ternary/error-report/1");
        assert_eq!(v["error"]["class"], "gguf.magic");
        assert_eq!(v["error"]["phase"], "parse");
        assert_eq!(v["error"]["offset"], 0);
        assert_eq!(v["exit_code"], 2);
        assert!(ErrorReportTarget::record("inspect", None).is_none());
    }
}

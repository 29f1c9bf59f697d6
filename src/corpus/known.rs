//! Known failures pinned to their reason (`check-reader --known-failures`, PROTOCOL.md §5.2).
//!
//! Each entry names a case and the reason it fails: `ID  REASON  # comment`. The reason is a
//! short key derived from the failure ([`reason_of`]): `accepted`, `rejected:CLASS`,
//! `class:CLASS`, `missing:PATH`, `mismatch:PATH`, `count:PATH`, `timeout`, `crash`,
//! `garbage`, `protocol`, `unsupported:FEATURE`, ... A listed case that fails for another
//! reason is `XFAIL-CHANGED`: a new bug can no longer hide behind an old entry.

use std::collections::BTreeMap;
use std::path::Path;

/// The entries of a known-failures file: case id -> pinned reason.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KnownFailures {
    /// Case id -> the reason key it is expected to fail with.
    pub entries: BTreeMap<String, String>,
}

impl KnownFailures {
    /// Reads a known-failures file (see [`KnownFailures::parse`]).
    pub fn load(path: &Path) -> crate::Result<KnownFailures> {
        let text = crate::fsio::read_input_string(path)?;
        KnownFailures::parse(&text, &path.display().to_string())
    }

    /// Parses `ID  REASON  # comment` lines; blank lines and `#` comments are skipped. An entry
    /// without a reason, or a case listed twice, is refused (class `reader.capabilities`).
    pub fn parse(text: &str, source: &str) -> crate::Result<KnownFailures> {
        let mut entries = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            let body = line.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let where_ = || format!("--known-failures {source}:{}", n + 1);
            let (id, reason) = match body.split_once(char::is_whitespace) {
                Some((id, r)) if !r.trim().is_empty() => (id, r.trim()),
                _ => {
                    return Err(crate::Error::new(
                        crate::ErrorClass::ReaderCapabilities,
                        where_(),
                        format!(
                            "'{}' records no reason; write `{}  REASON` with the reason key \
                             `check-reader --verbose` prints as `[reason: KEY]` on the case's \
                             FAIL line (`reason` in --json; e.g. `accepted`, `timeout`, \
                             `mismatch:PATH`)",
                            crate::text::escape(body),
                            crate::text::escape(body)
                        ),
                    ));
                }
            };
            if entries.insert(id.to_string(), reason.to_string()).is_some() {
                return Err(crate::Error::new(
                    crate::ErrorClass::ReaderCapabilities,
                    where_(),
                    format!("'{}' is listed twice", crate::text::escape(id)),
                ));
            }
        }
        Ok(KnownFailures { entries })
    }

    /// Whether `id` is listed.
    pub fn contains(&self, id: &str) -> bool {
        self.entries.contains_key(id)
    }

    /// The reason pinned for `id`.
    pub fn reason(&self, id: &str) -> Option<&str> {
        self.entries.get(id).map(String::as_str)
    }

    /// The listed ids.
    pub fn ids(&self) -> impl Iterator<Item = &String> {
        self.entries.keys()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The reason key of a failure detail as the runner writes it: the kind of failure and,
/// where there is one, the class, observation path or feature it concerns. Values (hashes,
/// messages, stderr tails, times) are left out, so the key is stable across runs.
pub fn reason_of(detail: &str) -> String {
    const PLAIN: &[(&str, &str)] = &[
        ("accepted a case that must be rejected", "accepted"),
        ("timeout after", "timeout"),
        ("crash:", "crash"),
        ("garbage answer", "garbage"),
        ("protocol error", "protocol"),
        ("could not start the adapter", "spawn"),
        ("left ", "leftovers"),
        ("persistent adapter", "persistent"),
        ("internal:", "internal"),
    ];
    if let Some(rest) = detail.strip_prefix("accepted, but observation.") {
        return observation_reason(rest);
    }
    if let Some(rest) = detail.strip_prefix("rejected a case that must be accepted: [") {
        return format!("rejected:{}", rest.split(']').next().unwrap_or("-"));
    }
    if let Some(rest) = detail.strip_prefix("rejected with class ") {
        return format!("class:{}", rest.split(',').next().unwrap_or("none"));
    }
    if let Some(rest) = detail
        .strip_prefix("undeclared unsupported: ")
        .or_else(|| detail.strip_prefix("answered unsupported ("))
    {
        let f = rest.split([')', ' ']).next().unwrap_or("");
        return format!("unsupported:{f}");
    }
    for (prefix, key) in PLAIN {
        if detail.starts_with(prefix) {
            return (*key).to_string();
        }
    }
    // Anything else: its words up to the first colon, joined (never empty).
    let head: Vec<&str> = detail
        .split(':')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .take(4)
        .collect();
    if head.is_empty() {
        "other".into()
    } else {
        format!("other:{}", head.join("-"))
    }
}

/// `missing:PATH`, `count:PATH` or `mismatch:PATH` for a mismatch `PATH missing`,
/// `PATH: N elements, expected M` or `PATH: GOT, expected WANT` (PATH after `observation.`,
/// with the object name `protocol::Mismatch::render` inserted kept: `tensors[0] (tensor "w").ne`).
fn observation_reason(rest: &str) -> String {
    // The path ends at the first ": " outside a quoted name, or at " missing".
    let mut in_quote = false;
    let bytes = rest.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => in_quote = !in_quote,
            b':' if !in_quote && bytes.get(i + 1) == Some(&b' ') => {
                let path = &rest[..i];
                let kind = if rest[i + 2..]
                    .split(',')
                    .next()
                    .unwrap_or("")
                    .ends_with(" elements")
                {
                    "count"
                } else {
                    "mismatch"
                };
                return format!("{kind}:{path}");
            }
            b' ' if !in_quote && rest[i..].starts_with(" missing") => {
                return format!("missing:{}", &rest[..i]);
            }
            _ => {}
        }
    }
    format!("mismatch:{rest}")
}

/// How a listed case's failure compares to its pinned reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    /// It failed with the reason the list records.
    Same,
    /// It failed with another reason (the one it failed with now).
    Changed(String),
}

/// Compares a failure `detail` of case `id` with the reason `known` pins for it.
pub fn compare(known: &KnownFailures, id: &str, detail: &str) -> Match {
    let now = reason_of(detail);
    match known.reason(id) {
        Some(r) if r == now => Match::Same,
        _ => Match::Changed(now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runner_failure_form_has_its_own_key() {
        let cases = [
            (
                "accepted a case that must be rejected with gguf.key_empty (rule layer mainline)",
                "accepted",
            ),
            (
                "rejected a case that must be accepted: [gguf.truncated] short read",
                "rejected:gguf.truncated",
            ),
            (
                "rejected a case that must be accepted: [-] no class",
                "rejected:-",
            ),
            (
                "rejected with class gguf.x, expected gguf.y (msg)",
                "class:gguf.x",
            ),
            (
                "accepted, but observation.objects[3] (object \"w/q4\").values_sha256 missing",
                "missing:objects[3] (object \"w/q4\").values_sha256",
            ),
            (
                "accepted, but observation.objects[1] (object \"w\").values_sha256: \"ab\", expected \"cd\"\n  tensor w row 3",
                "mismatch:objects[1] (object \"w\").values_sha256",
            ),
            (
                "accepted, but observation.tensors: 2 elements, expected 3",
                "count:tensors",
            ),
            (
                "accepted, but observation.tensors[0] (tensor \"a: b\").ne[0]: 4, expected 8",
                "mismatch:tensors[0] (tensor \"a: b\").ne[0]",
            ),
            ("timeout after 10.0s", "timeout"),
            ("crash: killed by signal 11 boom", "crash"),
            ("crash: exit 134 (signal 6) abort", "crash"),
            ("garbage answer (exit 101): stdout is not one JSON object", "garbage"),
            ("protocol error: exit 0 with a reject answer", "protocol"),
            ("could not start the adapter: ENOENT", "spawn"),
            (
                "left 2 processes running after it exited, holding its pipes",
                "leftovers",
            ),
            ("undeclared unsupported: ggml_type:142", "unsupported:ggml_type:142"),
            (
                "answered unsupported (codec:q1_0), declared, but the case does not carry that feature",
                "unsupported:codec:q1_0",
            ),
            ("persistent adapter handshake failed: eof", "persistent"),
            ("something new: with detail", "other:something-new"),
            ("", "other"),
        ];
        for (detail, key) in cases {
            assert_eq!(reason_of(detail), key, "{detail}");
        }
    }

    #[test]
    fn a_changed_reason_is_reported_with_the_new_key() {
        let k = KnownFailures::parse(
            "# c\nninfer/y_a  missing:objects[3] (object \"w/q4\").values_sha256  # plane\n",
            "t",
        )
        .unwrap();
        let old = "accepted, but observation.objects[3] (object \"w/q4\").values_sha256 missing";
        let new = "accepted, but observation.objects[1] (object \"w\").values_sha256: \"1\", expected \"2\"";
        assert_eq!(compare(&k, "ninfer/y_a", old), Match::Same);
        assert_eq!(
            compare(&k, "ninfer/y_a", new),
            Match::Changed("mismatch:objects[1] (object \"w\").values_sha256".into())
        );
    }

    #[test]
    fn entries_without_a_reason_or_listed_twice_are_refused() {
        let e = KnownFailures::parse("a/b  # only a comment\n", "f.txt").unwrap_err();
        assert_eq!(e.class(), crate::ErrorClass::ReaderCapabilities);
        assert!(e.to_string().contains("f.txt:1"), "{e}");
        assert!(e.to_string().contains("records no reason"), "{e}");
        let e = KnownFailures::parse("a/b accepted\na/b timeout\n", "f.txt").unwrap_err();
        assert!(
            e.to_string().contains("f.txt:2") && e.to_string().contains("twice"),
            "{e}"
        );
        // Unusual but valid: tabs, a reason with spaces and quotes, comment-only lines.
        let k = KnownFailures::parse(
            "\n# x\na/b\tmismatch:tensors[0] (tensor \"w\").ne\t# why\n",
            "f",
        )
        .unwrap();
        assert_eq!(
            k.reason("a/b"),
            Some("mismatch:tensors[0] (tensor \"w\").ne")
        );
    }
}

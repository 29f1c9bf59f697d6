//! A dump directory as one byte string, for the `dumps_parse` fuzz target and its seeds:
//! records of `u16 name length, name, u32 data length, data` (little-endian), read until the
//! first record that does not fit. [`parse_all`](crate::verify::dump_bundle::parse_all) runs every dump parser `verify` uses on such a
//! bundle — the native embedding and kernel-oracle manifests with their array files, and the
//! engine embedding dump — so the fuzzer drives exactly the code the gates run.

use super::dumps::{self, DumpFiles, EmbeddingManifest};
use std::collections::BTreeMap;

/// Encodes `files` as a bundle (names longer than `u16::MAX` or data over `u32::MAX` bytes are
/// not representable and are skipped).
pub fn encode(files: &BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, data) in files {
        let (Ok(n), Ok(d)) = (u16::try_from(name.len()), u32::try_from(data.len())) else {
            continue;
        };
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&d.to_le_bytes());
        out.extend_from_slice(data);
    }
    out
}

/// Decodes the records of a bundle that fit; a later record with the same name replaces an
/// earlier one.
pub fn decode(mut b: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    while let Some((n, rest)) = take_len(b, 2) {
        let Some((name, rest)) = rest.split_at_checked(n) else {
            break;
        };
        let Some((d, rest)) = take_len(rest, 4) else {
            break;
        };
        let Some((data, rest)) = rest.split_at_checked(d) else {
            break;
        };
        files.insert(String::from_utf8_lossy(name).into_owned(), data.to_vec());
        b = rest;
    }
    files
}

fn take_len(b: &[u8], width: usize) -> Option<(usize, &[u8])> {
    let (head, rest) = b.split_at_checked(width)?;
    let mut le = [0u8; 8];
    le[..width].copy_from_slice(head);
    Some((usize::try_from(u64::from_le_bytes(le)).ok()?, rest))
}

/// What [`parse_all`] accepted (for the fuzz target's invariants and the seed test).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The embedding dump parsed (manifest and both arrays).
    pub embedding: bool,
    /// Oracle cases whose arrays parsed.
    pub oracle_cases: usize,
    /// The engine embedding dump (`embedding.bin`) parsed.
    pub engine: bool,
}

/// Runs every dump parser on the bundle `data`. Errors are expected (hostile input); a panic,
/// an array longer than the bytes behind it, or an unbounded allocation is a bug. Arrays that
/// parse are checked against their manifests' sizes here, so the fuzzer also finds a parser
/// that accepts a length it should not.
pub fn parse_all(data: &[u8]) -> Parsed {
    let files = decode(data);
    let mut out = Parsed::default();
    let ds = crate::spec::dumps();
    // The embedding manifest names its own object and width; the gate passes the artifact's.
    if let Ok(m) = dumps::read_manifest::<EmbeddingManifest>(&files, &ds.embedding.manifest) {
        if let Ok(e) = dumps::parse_embedding(&files, &m.object, m.k) {
            assert_eq!(e.ids.len(), e.tokens, "ids vs manifest tokens");
            assert_eq!(
                Some(e.h.len()),
                m.k.checked_mul(e.tokens),
                "h vs k * tokens"
            );
            out.embedding = true;
        }
    }
    if let Ok(m) = dumps::parse_oracle_manifest(&files) {
        for c in &m.cases {
            if let Ok(a) = dumps::parse_oracle_arrays(&files, c) {
                assert_eq!(
                    Some(a.y.len()),
                    c.n.checked_mul(c.tokens),
                    "y vs n * tokens"
                );
                if let Some(x) = &a.x {
                    assert_eq!(Some(x.len()), c.k.checked_mul(c.tokens), "x vs k * tokens");
                }
                if let Some(ids) = &a.ids {
                    assert_eq!(ids.len(), c.tokens, "ids vs tokens");
                }
                out.oracle_cases += 1;
            }
        }
    }
    if let Ok(b) = files.read("embedding.bin") {
        if let Ok(e) = super::engine_dump::parse(&b) {
            assert_eq!(e.ids.len(), e.tokens);
            assert_eq!(Some(e.h.len()), e.tokens.checked_mul(e.hidden));
            out.engine = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip_and_truncation_stops_cleanly() {
        let mut files = BTreeMap::new();
        files.insert("manifest.json".to_string(), b"{}".to_vec());
        files.insert("h.f32".to_string(), vec![1, 2, 3, 4]);
        let b = encode(&files);
        assert_eq!(decode(&b), files);
        // Every truncation decodes to a prefix of the records, never a panic.
        for cut in 0..b.len() {
            let d = decode(&b[..cut]);
            assert!(d.len() < files.len());
            assert!(d.iter().all(|(k, v)| files.get(k) == Some(v)));
        }
    }

    /// The committed seeds (written from dump-reference output) must parse fully: a seed the
    /// parsers refuse would start the fuzzer from nothing. The negative control: the same
    /// seeds with one array file cut by 4 bytes parse less.
    #[test]
    fn committed_seeds_parse_and_a_shortened_array_does_not() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/dumps_parse");
        let mut seen = Parsed::default();
        for e in std::fs::read_dir(&dir).unwrap() {
            let bytes = std::fs::read(e.unwrap().path()).unwrap();
            let p = parse_all(&bytes);
            let required = crate::spec::dumps().kernel_oracles.required_cases.len();
            if decode(&bytes).contains_key(&crate::spec::dumps().kernel_oracles.manifest)
                && !p.embedding
            {
                assert_eq!(p.oracle_cases, required, "every required case parses");
            }
            seen.embedding |= p.embedding;
            seen.engine |= p.engine;
            seen.oracle_cases += p.oracle_cases;
            let mut files = decode(&bytes);
            let Some(name) = files
                .keys()
                .find(|k| k.ends_with(".f32") || k.ends_with(".bin"))
                .cloned()
            else {
                continue;
            };
            let v = files.get_mut(&name).unwrap();
            v.truncate(v.len().saturating_sub(4));
            let q = parse_all(&encode(&files));
            let before = (p.embedding, p.oracle_cases, p.engine);
            let after = (q.embedding, q.oracle_cases, q.engine);
            assert_ne!(before, after, "cutting {name} went unnoticed");
        }
        assert!(seen.embedding && seen.engine, "{seen:?}");
        assert!(seen.oracle_cases > 0, "{seen:?}");
    }
}

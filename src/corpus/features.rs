//! The feature vocabulary of the corpus (PROTOCOL.md §5.3): one canonical name per encoding
//! (`encoding:ptq1_0`) with the older per-family tags as aliases (`codec:ptq1_0`,
//! `ggml_type:143`, `format:PTQ1_0_G128`), and every other feature tag as its own name.
//! Declaring a canonical name or any alias unsupported declares the whole encoding.

use std::collections::BTreeMap;

use super::manifest::Manifest;

/// One encoding: its canonical name and its aliases (the tags cases carry).
pub struct Encoding {
    /// `encoding:<codec>`.
    pub name: &'static str,
    /// The per-family tags of the same encoding.
    pub aliases: &'static [&'static str],
}

/// The encodings the corpus tags under more than one family. Id 42 is not here: it has two
/// meanings (`ggml_type:42-g128` / `ggml_type:42-g64`, PROTOCOL.md §2).
pub const ENCODINGS: &[Encoding] = &[
    Encoding {
        name: "encoding:f32",
        aliases: &["codec:f32", "ggml_type:0", "format:FP32"],
    },
    Encoding {
        name: "encoding:f16",
        aliases: &["codec:f16", "ggml_type:1"],
    },
    Encoding {
        name: "encoding:bf16",
        aliases: &["codec:bf16", "ggml_type:30", "format:BF16"],
    },
    Encoding {
        name: "encoding:i32",
        aliases: &["codec:i32", "ggml_type:26", "format:I32"],
    },
    Encoding {
        name: "encoding:q8_0",
        aliases: &["codec:q8_0", "ggml_type:8"],
    },
    Encoding {
        name: "encoding:pq2_0",
        aliases: &["codec:pq2_0", "ggml_type:142", "format:PQ2_0_G128"],
    },
    Encoding {
        name: "encoding:q2_0_g64",
        aliases: &["codec:q2_0_g64", "ggml_type:42-g64"],
    },
    Encoding {
        name: "encoding:ptq1_0",
        aliases: &["codec:ptq1_0", "ggml_type:143", "format:PTQ1_0_G128"],
    },
    Encoding {
        name: "encoding:tq1_0",
        aliases: &["codec:tq1_0", "ggml_type:34"],
    },
    Encoding {
        name: "encoding:tq2_0",
        aliases: &["codec:tq2_0", "ggml_type:35"],
    },
    Encoding {
        name: "encoding:q1_0",
        aliases: &["codec:q1_0", "ggml_type:41"],
    },
];

/// The encoding a name (canonical or alias) belongs to.
pub fn encoding_of(name: &str) -> Option<&'static Encoding> {
    ENCODINGS
        .iter()
        .find(|e| e.name == name || e.aliases.contains(&name))
}

/// The tags a declared name stands for: an encoding's aliases (canonical name or any alias
/// given), else the name itself (a tag or a glob).
pub fn expand(name: &str) -> Vec<String> {
    match encoding_of(name) {
        Some(e) => e.aliases.iter().map(|a| a.to_string()).collect(),
        None => vec![name.to_string()],
    }
}

/// Every vocabulary entry: (canonical name, aliases, case ids carrying it), sorted by name.
pub fn vocabulary(manifest: &Manifest) -> BTreeMap<String, (Vec<String>, Vec<String>)> {
    let mut out: BTreeMap<String, (Vec<String>, Vec<String>)> = BTreeMap::new();
    for c in &manifest.cases {
        for f in &c.features {
            let (name, aliases) = match encoding_of(f) {
                Some(e) => (
                    e.name.to_string(),
                    e.aliases.iter().map(|a| a.to_string()).collect(),
                ),
                None => (f.clone(), Vec::new()),
            };
            let entry = out.entry(name).or_insert_with(|| (aliases, Vec::new()));
            if entry.1.last() != Some(&c.id) {
                entry.1.push(c.id.clone());
            }
        }
    }
    out
}

/// `check-reader --list-features`: one line per canonical name — name, cases covered,
/// aliases, and up to three example case ids.
pub fn vocabulary_text(manifest: &Manifest) -> String {
    let mut s = String::from(
        "# feature (canonical name)  cases  aliases  [examples]\n\
         # declare any of these (or a glob over them) in capabilities.json \"unsupported\"\n",
    );
    for (name, (aliases, cases)) in vocabulary(manifest) {
        let examples: Vec<&str> = cases.iter().take(3).map(String::as_str).collect();
        s.push_str(&format!(
            "{name}  {}  {}  [{}{}]\n",
            cases.len(),
            if aliases.is_empty() {
                "-".to_string()
            } else {
                aliases.join(",")
            },
            examples.join(" "),
            if cases.len() > 3 { " ..." } else { "" }
        ));
    }
    s
}

/// Whether a declared name or glob matches any feature of the corpus (or a canonical name).
pub fn matches_any(manifest: &Manifest, pattern: &str) -> bool {
    let tags = expand(pattern);
    manifest.cases.iter().any(|c| {
        c.features
            .iter()
            .any(|f| tags.iter().any(|t| glob_match(t, f)))
    }) || ENCODINGS.iter().any(|e| glob_match(pattern, e.name))
}

/// Edit distance (for did-you-mean hints).
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev.get(j).copied().unwrap_or(0) + usize::from(ca != *cb);
            let del = prev.get(j + 1).copied().unwrap_or(0) + 1;
            let ins = cur.get(j).copied().unwrap_or(0) + 1;
            cur.push(sub.min(del).min(ins));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

/// The candidate closest to `word` (a did-you-mean), if any is reasonably close.
pub fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let stripped: String = word.chars().filter(|c| !"*?[]!".contains(*c)).collect();
    candidates
        .map(|c| (distance(&stripped, c), c))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, c)| *d <= (c.len() / 2).max(3))
        .map(|(_, c)| c)
}

/// Every feature name of the corpus, canonical names first.
pub fn all_names(manifest: &Manifest) -> Vec<String> {
    let mut v: Vec<String> = ENCODINGS.iter().map(|e| e.name.to_string()).collect();
    for c in &manifest.cases {
        for f in &c.features {
            if !v.contains(f) {
                v.push(f.clone());
            }
        }
    }
    v
}

/// Glob matching: `*` (any run), `?` (one character), `[abc]`, `[a-z]` and `[!x]` (one
/// character of / not of a class). An unclosed `[` matches itself.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    glob_at(&p, &t)
}

/// The class at the start of `p` (just after `[`): (matches `c`, chars consumed incl. `]`).
fn class_match(p: &[char], c: char) -> Option<(bool, usize)> {
    let (neg, mut i) = match p.first() {
        Some('!') | Some('^') => (true, 1),
        _ => (false, 0),
    };
    let mut hit = false;
    let mut first = true;
    loop {
        let x = *p.get(i)?;
        if x == ']' && !first {
            return Some((hit != neg, i + 1));
        }
        first = false;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
            let hi = *p.get(i + 2)?;
            hit |= x <= c && c <= hi;
            i += 3;
        } else {
            hit |= x == c;
            i += 1;
        }
    }
}

fn glob_at(p: &[char], t: &[char]) -> bool {
    let Some((&pc, prest)) = p.split_first() else {
        return t.is_empty();
    };
    match pc {
        '*' => (0..=t.len()).any(|k| t.get(k..).is_some_and(|rest| glob_at(prest, rest))),
        '?' => t.split_first().is_some_and(|(_, tr)| glob_at(prest, tr)),
        '[' => match t.split_first() {
            None => false,
            Some((&c, tr)) => match class_match(prest, c) {
                Some((ok, used)) => ok && prest.get(used..).is_some_and(|pr| glob_at(pr, tr)),
                None => c == '[' && glob_at(prest, tr),
            },
        },
        _ => t
            .split_first()
            .is_some_and(|(&c, tr)| c == pc && glob_at(prest, tr)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_classes_ranges_negation_and_literal_brackets() {
        assert!(glob_match("codec/y_f[13]*", "codec/y_f32_random"));
        assert!(!glob_match("codec/y_f[!3]*", "codec/y_f32_random"));
        assert!(glob_match("a[a-c]z", "abz") && !glob_match("a[a-c]z", "adz"));
        assert!(glob_match("a[]]b", "a]b"));
        // An unclosed class is a literal '['.
        assert!(glob_match("a[b", "a[b") && !glob_match("a[b", "ab"));
        assert!(glob_match("*", "") && glob_match("x*y?z", "xabyqz"));
    }

    #[test]
    fn encoding_names_expand_and_unknown_names_do_not() {
        assert_eq!(expand("ggml_type:143"), expand("encoding:ptq1_0"));
        assert!(expand("codec:ptq1_0").contains(&"format:PTQ1_0_G128".to_string()));
        assert_eq!(expand("kind:gguf"), vec!["kind:gguf".to_string()]);
        assert_eq!(
            closest("unsuported", ["reader", "unsupported"].into_iter()),
            Some("unsupported")
        );
        assert_eq!(closest("zzzzzzzzzzzz", ["reader"].into_iter()), None);
    }
}

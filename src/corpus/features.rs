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

/// The longest glob accepted (characters) in `--filter` and in capabilities: matching costs at
/// most pattern × text steps, so a cap keeps every match small.
pub const MAX_GLOB_LEN: usize = 256;

/// Why `pattern` is refused as a glob (too long), if it is.
pub fn glob_problem(pattern: &str) -> Option<String> {
    let n = pattern.chars().count();
    (n > MAX_GLOB_LEN).then(|| format!("a glob of {n} characters (at most {MAX_GLOB_LEN})"))
}

/// One element of a glob.
#[derive(Debug)]
enum Tok {
    /// Any run of characters.
    Star,
    /// Any one character.
    One,
    /// One character of (or, negated, not of) a class.
    Class { neg: bool, items: Vec<(char, char)> },
    /// This character.
    Lit(char),
}

impl Tok {
    fn matches(&self, c: char) -> bool {
        match self {
            Tok::Star | Tok::One => true,
            Tok::Class { neg, items } => items.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *neg,
            Tok::Lit(x) => *x == c,
        }
    }
}

/// The class at the start of `p` (just after `[`): the token and the chars consumed incl. `]`;
/// `None` when it is not closed.
fn parse_class(p: &[char]) -> Option<(Tok, usize)> {
    let (neg, mut i) = match p.first() {
        Some('!') | Some('^') => (true, 1),
        _ => (false, 0),
    };
    let mut items = Vec::new();
    let mut first = true;
    loop {
        let x = *p.get(i)?;
        if x == ']' && !first {
            return Some((Tok::Class { neg, items }, i + 1));
        }
        first = false;
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
            items.push((x, *p.get(i + 2)?));
            i += 3;
        } else {
            items.push((x, x));
            i += 1;
        }
    }
}

fn tokens(pattern: &str) -> Vec<Tok> {
    let p: Vec<char> = pattern.chars().collect();
    let mut out = Vec::with_capacity(p.len());
    let mut i = 0;
    while let Some(&c) = p.get(i) {
        i += 1;
        out.push(match c {
            '*' => {
                // Runs of stars are one star.
                if matches!(out.last(), Some(Tok::Star)) {
                    continue;
                }
                Tok::Star
            }
            '?' => Tok::One,
            // An unclosed `[` matches itself.
            '[' => match p.get(i..).and_then(parse_class) {
                Some((tok, used)) => {
                    i += used;
                    tok
                }
                None => Tok::Lit('['),
            },
            c => Tok::Lit(c),
        });
    }
    out
}

/// Glob matching: `*` (any run), `?` (one character), `[abc]`, `[a-z]` and `[!x]` (one
/// character of / not of a class). An unclosed `[` matches itself.
///
/// Iterative with one backtrack point (the last `*`): at most pattern × text steps, so no
/// pattern can make a match exponential (`*?*?*?…X` was).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p = tokens(pattern);
    let t: Vec<char> = text.chars().collect();
    let (mut i, mut j) = (0usize, 0usize);
    // The last star seen: the token after it, and the text position it is tried from.
    let mut star: Option<(usize, usize)> = None;
    while i < t.len() {
        match p.get(j) {
            Some(Tok::Star) => {
                star = Some((j + 1, i));
                j += 1;
            }
            Some(tok) if tok.matches(t[i]) => {
                i += 1;
                j += 1;
            }
            _ => match star {
                // Let the star take one more character and retry.
                Some((sj, si)) => {
                    star = Some((sj, si + 1));
                    i = si + 1;
                    j = sj;
                }
                None => return false,
            },
        }
    }
    p[j.min(p.len())..]
        .iter()
        .all(|tok| matches!(tok, Tok::Star))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matching_is_linear_in_the_pattern_not_exponential() {
        // 29 characters of `*?` then a character the text lacks: exponential before (> 60 s).
        let evil = format!("{}X", "*?".repeat(14));
        let text = "gguf/n_tensor_data_out_of_bounds_and_more_text_here";
        let t0 = std::time::Instant::now();
        for _ in 0..100 {
            assert!(!glob_match(&evil, text));
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(1),
            "{:?}",
            t0.elapsed()
        );
        // The same shape that can match does (the star/one semantics kept).
        assert!(glob_match(&format!("{}e", "*?".repeat(14)), text));
        assert!(!glob_match(&format!("{}e", "*?".repeat(40)), "short-e"));
        // At the length cap a pattern of pure stars still answers at once.
        let stars = "*".repeat(MAX_GLOB_LEN);
        assert!(glob_match(&stars, text));
        assert!(glob_problem(&stars).is_none());
        assert!(glob_problem(&format!("{stars}*")).is_some());
    }

    #[test]
    fn glob_backtracking_cases_agree_with_the_definition() {
        for (p, t, want) in [
            ("*", "", true),
            ("", "", true),
            ("", "a", false),
            ("a*", "a", true),
            ("*a", "ba", true),
            ("*a", "ab", false),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXcYb", false),
            ("*ab", "aab", true),
            ("?", "", false),
            ("??", "ab", true),
            ("a*?", "a", false),
            ("a*?", "ab", true),
            ("*[0-9]", "abc7", true),
            ("*[!0-9]", "abc7", false),
            ("codec/*", "codec/y_f32", true),
            ("[", "[", true),
            ("a[b", "a[b", true),
        ] {
            assert_eq!(glob_match(p, t), want, "{p:?} on {t:?}");
        }
    }

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

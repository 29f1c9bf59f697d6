//! Text taken from an input file (tensor names, metadata keys and strings, object names), made
//! safe to print: a hostile file must not be able to move the cursor, clear the screen, start a
//! new log line or reorder what the reader sees.
//!
//! Escaped: every C0 and C1 control and DEL (`char::is_control`: ESC sequences, CR/LF, NEL), the
//! Unicode line/paragraph separators U+2028/U+2029, and the invisible format characters of
//! category Cf that change how text is shown: the bidi embeddings and overrides U+202A–U+202E,
//! the isolates U+2066–U+2069, the marks U+200E/U+200F/U+061C, zero-width characters
//! U+200B–U+200D, U+2060–U+2064, U+FEFF, soft hyphen U+00AD, U+180E and the interlinear
//! annotation characters U+FFF9–U+FFFB (Unicode Standard Annex #9, "Explicit Directional
//! Formatting Characters"; Unicode Technical Report #36, "Bidirectional Text Spoofing").
//! Everything else, including ordinary non-ASCII letters, passes through unchanged.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal raw (see the module comment for the list and why).
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
        )
}

/// `s` with every unsafe character written as a visible escape (`\n`, `\r`, `\t`, otherwise
/// `\u{XXXX}`); borrowed unchanged when there is nothing to escape.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe_char(c) => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// At most `max_chars` characters of `s`, escaped, with `…(N bytes)` appended when cut: a
/// 1 GiB key is shown as its head, never copied whole.
pub fn escape_truncated(s: &str, max_chars: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max_chars) {
        None => escape(s),
        Some((cut, _)) => Cow::Owned(format!("{}…({} bytes)", escape(&s[..cut]), s.len())),
    }
}

/// Serialized JSON with every unsafe character that is still raw (serde_json leaves the bidi
/// and other format characters as UTF-8) written as a JSON `\uXXXX` escape: the document
/// parses to exactly the same strings, and no raw control or bidi character reaches a terminal.
pub fn json_safe(json: &str) -> Cow<'_, str> {
    // Raw controls in serialized JSON are its own layout whitespace (serde_json escapes every
    // control inside a string), so only the non-control unsafe characters need escaping.
    let needs = |c: char| is_unsafe_char(c) && !c.is_control();
    if !json.chars().any(needs) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if needs(c) {
            // Every unsafe character is in the Basic Multilingual Plane: one escape suffices.
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_characters_become_visible_escapes() {
        assert_eq!(escape("a\u{1b}[2Jb"), "a\\u{001b}[2Jb");
        assert_eq!(escape("x\ny\rz\t"), "x\\ny\\rz\\t");
        assert_eq!(escape("abc\u{202E}fed"), "abc\\u{202e}fed");
        assert_eq!(escape("\u{85}\u{9b}\u{7f}"), "\\u{0085}\\u{009b}\\u{007f}");
        assert_eq!(
            escape("\u{2066}\u{2069}\u{200f}\u{feff}\u{2028}"),
            "\\u{2066}\\u{2069}\\u{200f}\\u{feff}\\u{2028}"
        );
        for s in [
            "\u{1b}", "\n", "\u{202a}", "\u{202e}", "\u{2067}", "\u{9b}", "\u{ad}",
        ] {
            assert!(!escape(s).chars().any(is_unsafe_char), "{s:?}");
        }
    }

    #[test]
    fn ordinary_text_is_borrowed_unchanged() {
        for s in ["blk.0.attn_q.weight", "naïve ±1 …", "日本語", "a\\u{1b}"] {
            assert!(matches!(escape(s), Cow::Borrowed(x) if x == s));
        }
    }

    /// Negative control: the predicate is not vacuous — a plain letter is safe, and removing
    /// the escaping (printing raw) would leave the hostile characters in place.
    #[test]
    fn the_check_detects_raw_hostile_text() {
        assert!(!is_unsafe_char('a') && !is_unsafe_char('é'));
        let raw = "t\u{1b}]0;owned\u{7}\u{202e}";
        assert!(raw.chars().any(is_unsafe_char));
    }

    #[test]
    fn json_safe_round_trips_and_hides_bidi() {
        let name = "a\u{202e}b\u{1b}c\nd\u{2066}";
        let v = serde_json::json!({ "name": name, "list": [name] });
        for text in [
            serde_json::to_string(&v).unwrap(),
            serde_json::to_string_pretty(&v).unwrap(),
        ] {
            // Negative control: serde_json alone leaves U+202E raw.
            assert!(text.contains('\u{202e}'));
            let safe = json_safe(&text);
            assert!(
                !safe.chars().any(|c| c != '\n' && is_unsafe_char(c)),
                "{safe}"
            );
            let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
            assert_eq!(back, v);
        }
    }

    #[test]
    fn truncation_keeps_a_char_boundary_and_says_how_long() {
        let long = "é".repeat(100);
        assert_eq!(escape_truncated(&long, 3), "ééé…(200 bytes)");
        assert_eq!(escape_truncated("ab", 3), "ab");
        assert_eq!(escape_truncated("a\nbcd", 2), "a\\n…(5 bytes)");
    }
}

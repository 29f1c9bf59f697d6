//! A JSON value that keeps integer/float distinctions and refuses duplicate members, so that
//! two readers can never disagree about what a directory says (serde_json's map would keep
//! the last duplicate silently).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

/// A parsed JSON value, numbers split by how they were written. Strings and member names
/// without escapes borrow the document's text (no heap per string); every list grows
/// fallibly, so a directory too large for the memory left is refused with `io.memory`.
#[derive(Clone, Debug, PartialEq)]
pub enum Json<'a> {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A non-negative integer literal.
    UInt(u64),
    /// A negative integer literal.
    Int(i64),
    /// Any number with a fraction or exponent, or an integer beyond u64.
    Float(f64),
    /// A string (escapes decoded; borrowed from the text when it has none).
    Str(Cow<'a, str>),
    /// An array, elements in order.
    Array(Vec<Json<'a>>),
    /// Members in document order.
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl Json<'_> {
    /// The JSON type name used in error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "bool",
            Json::UInt(_) | Json::Int(_) => "integer",
            Json::Float(_) => "float",
            Json::Str(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }
}

/// Objects with up to this many members check duplicates by a scan; larger ones by a set.
const SMALL_OBJECT: usize = 16;

/// Prefix of the serde error message for a duplicated member (mapped to `ninfer.dir_members`).
pub const DUPLICATE_MEMBER: &str = "duplicate member";

/// Prefix of the serde error message for a tree that could not get memory (mapped to
/// `io.memory`).
pub const OUT_OF_MEMORY: &str = "out of memory";

/// The refusal of a growth of `what` (holding `len` entries of `T`) that could not get memory.
fn oom<T, E: de::Error>(what: &str, len: usize) -> E {
    E::custom(format!(
        "{OUT_OF_MEMORY} for the directory's JSON tree: {what} after {len} entries ({} B each on the heap)",
        std::mem::size_of::<T>()
    ))
}

/// Makes room for one more entry in `v`, doubling as `push` would, or refuses with `io.memory`.
fn grow<T, E: de::Error>(v: &mut Vec<T>, what: &str) -> Result<(), E> {
    if v.len() == v.capacity() {
        v.try_reserve(v.len().max(4))
            .map_err(|_| oom::<T, E>(what, v.len()))?;
    }
    Ok(())
}

/// `s` copied to the heap, or a refusal with `io.memory`.
fn owned<'a, E: de::Error>(s: &str) -> Result<Cow<'a, str>, E> {
    let mut o = String::new();
    o.try_reserve_exact(s.len())
        .map_err(|_| oom::<u8, E>("string", 0))?;
    o.push_str(s);
    Ok(Cow::Owned(o))
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json<'de>, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

/// A member name, borrowed from the text when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key<'de>, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                owned(v).map(Key)
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
        Ok(Json::UInt(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
        Ok(if v >= 0 {
            Json::UInt(v as u64)
        } else {
            Json::Int(v)
        })
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json<'de>, E> {
        Ok(Json::Float(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Json<'de>, E> {
        owned(v).map(Json::Str)
    }
    fn visit_string<E>(self, v: String) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element()? {
            grow(&mut out, "array")?;
            out.push(v);
        }
        out.shrink_to_fit();
        Ok(Json::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut out: Vec<(Cow<'de, str>, Json<'de>)> = Vec::new();
        // Small objects (every directory entry) scan their few members; past that a hash set
        // keeps the check linear, so 200,000 members cost 200,000 lookups, not 2 * 10^10.
        let mut seen: Option<HashSet<Cow<'de, str>>> = None;
        while let Some(Key(k)) = map.next_key::<Key<'de>>()? {
            let duplicate = match &mut seen {
                Some(set) => {
                    set.try_reserve(1)
                        .map_err(|_| oom::<Cow<str>, A::Error>("member set", set.len()))?;
                    !set.insert(k.clone())
                }
                None => {
                    let dup = out.iter().any(|(s, _)| *s == k);
                    if !dup && out.len() >= SMALL_OBJECT {
                        let mut set: HashSet<Cow<'de, str>> = HashSet::new();
                        set.try_reserve(2 * out.len())
                            .map_err(|_| oom::<Cow<str>, A::Error>("member set", 0))?;
                        set.extend(out.iter().map(|(s, _)| s.clone()));
                        set.insert(k.clone());
                        seen = Some(set);
                    }
                    dup
                }
            };
            if duplicate {
                return Err(de::Error::custom(format!(
                    "{DUPLICATE_MEMBER} '{}'",
                    crate::text::escape(&k)
                )));
            }
            let v = map.next_value()?;
            grow(&mut out, "object")?;
            out.push((k, v));
        }
        out.shrink_to_fit();
        Ok(Json::Object(out))
    }
}

/// One step of a path into a JSON document: a member name or an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// The value of member `name` of an object.
    Key(String),
    /// Element `i` of an array.
    Index(usize),
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end (exclusive) of the string literal starting at `b[i] == '"'`.
fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

/// The end (exclusive) of the value starting at `b[i]`; iterative, so depth costs no stack.
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            Some(j)
        }
    }
}

/// Byte offset in `text` of the first byte of the value at `path`, or `None` when the path
/// does not exist. Meant for locating an error in text that already parsed: one linear pass
/// that skips every value off the path without building it.
pub fn locate(text: &str, path: &[Step]) -> Option<usize> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    for step in path {
        match step {
            Step::Key(want) => {
                if b.get(i) != Some(&b'{') {
                    return None;
                }
                i = skip_ws(b, i + 1);
                loop {
                    if b.get(i) != Some(&b'"') {
                        return None;
                    }
                    let end = skip_string(b, i)?;
                    // Keys may be written with escapes; compare the decoded text.
                    let key: String = serde_json::from_str(&text[i..end]).ok()?;
                    i = skip_ws(b, end);
                    if b.get(i) != Some(&b':') {
                        return None;
                    }
                    i = skip_ws(b, i + 1);
                    if key == *want {
                        break;
                    }
                    i = skip_ws(b, skip_value(b, i)?);
                    if b.get(i) != Some(&b',') {
                        return None;
                    }
                    i = skip_ws(b, i + 1);
                }
            }
            Step::Index(n) => {
                if b.get(i) != Some(&b'[') {
                    return None;
                }
                i = skip_ws(b, i + 1);
                for _ in 0..*n {
                    if matches!(b.get(i), None | Some(b']')) {
                        return None;
                    }
                    i = skip_ws(b, skip_value(b, i)?);
                    if b.get(i) != Some(&b',') {
                        return None;
                    }
                    i = skip_ws(b, i + 1);
                }
                if matches!(b.get(i), None | Some(b']')) {
                    return None;
                }
            }
        }
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> Step {
        Step::Key(s.into())
    }

    #[test]
    fn locate_finds_nested_values_past_strings_with_brackets_and_escapes() {
        let t = r#" {"a": "x]}\"{", "b" : [ 1 , {"c":[2,3]}, "\u0064"], "\u0064" :7}"#;
        let at = |p: &[Step]| locate(t, p).map(|i| &t[i..i + 1]);
        assert_eq!(at(&[k("a")]), Some("\""));
        assert_eq!(at(&[k("b"), Step::Index(0)]), Some("1"));
        assert_eq!(
            at(&[k("b"), Step::Index(1), k("c"), Step::Index(1)]),
            Some("3")
        );
        assert_eq!(at(&[k("b"), Step::Index(2)]), Some("\""));
        assert_eq!(at(&[k("d")]), Some("7"));
        assert_eq!(locate(t, &[k("b"), Step::Index(3)]), None);
        assert_eq!(locate(t, &[k("zz")]), None);
        assert_eq!(locate(t, &[]), Some(1));
    }

    #[test]
    fn duplicate_members_are_refused_in_small_and_large_objects() {
        for n in [3usize, 100] {
            let mut body: Vec<String> = (0..n).map(|i| format!("\"m{i}\":{i}")).collect();
            assert!(serde_json::from_str::<Json>(&format!("{{{}}}", body.join(","))).is_ok());
            body.push("\"m1\":0".into());
            let e = serde_json::from_str::<Json>(&format!("{{{}}}", body.join(","))).unwrap_err();
            assert!(e.to_string().starts_with("duplicate member 'm1'"), "{e}");
        }
    }
}

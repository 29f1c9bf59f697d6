//! The kernel sources compiled into the crate and a small textual `#include "..."` resolver,
//! so NVRTC and the host compiler both see one self-contained translation unit.

use crate::error::{Error, ErrorClass, Result};

/// Every `.cu` / `.cuh` file under `src/cuda/kernels/`, by path relative to that folder
/// (listed by build.rs, so none can be forgotten).
pub const FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/kernel_files.rs"));

/// The CUDA-on-CPU shim the host tier prepends.
pub const HOST_SHIM: &str = include_str!("kernels/host_shim.h");

/// Half/bf16/vector types and math intrinsics for the host tier (prepended before the shim).
pub const HOST_TYPES: &str = include_str!("kernels/host_types.h");

/// A built-in file by relative path.
pub fn builtin(path: &str) -> Option<&'static str> {
    FILES.iter().find(|(p, _)| *p == path).map(|(_, t)| *t)
}

/// A built-in source with its includes resolved.
pub fn builtin_resolved(path: &str) -> Result<String> {
    let text = builtin(path)
        .ok_or_else(|| Error::new(ErrorClass::CliUsage, path, "no such built-in kernel source"))?;
    resolve(
        text,
        path,
        &|p, _| {
            Ok(match builtin(p) {
                Some(t) => Lookup::Text(t.to_string()),
                None => Lookup::Missing,
            })
        },
        &[],
    )
}

/// What looking an include candidate up gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The file's text.
    Text(String),
    /// No such file (the next candidate is tried).
    Missing,
    /// The candidate lies where includes may not reach; why.
    Outside(String),
}

/// The most text a source with its includes inlined may reach (a diamond of includes without
/// `#pragma once` grows exponentially); also the most one file may hold.
pub const MAX_RESOLVED: usize = 32 << 20;

/// `rel` relative to the folder of `including` ('/'-separated; `..` climbs, and a `..` above
/// the start of a relative path is kept, so it names the parent folder rather than vanishing).
fn join(including: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = including.split('/').collect();
    parts.pop();
    if rel.starts_with('/') {
        parts = vec![""];
    }
    for p in rel.split('/') {
        match p {
            "." | "" => {}
            ".." => match parts.last() {
                Some(&"") if parts.len() == 1 => {}
                Some(&"..") | None => parts.push(".."),
                Some(_) => {
                    parts.pop();
                }
            },
            _ => parts.push(p),
        }
    }
    parts.join("/")
}

/// Per line (split at '\n'): whether it starts in code, not inside a block comment, a string
/// continued with '\\' or a raw string literal; with comments and string contents blanked, so
/// a directive is only found where the preprocessor sees one.
fn code_lines(text: &str) -> (Vec<bool>, Vec<u8>) {
    #[derive(PartialEq)]
    enum St {
        Code,
        Line,
        Block,
        Str(u8),
        Raw(Vec<u8>),
    }
    let b = text.as_bytes();
    let mut blank = b.to_vec();
    let mut starts = vec![true];
    let mut st = St::Code;
    let mut i = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            let continued = i > 0 && b[i - 1] == b'\\';
            match st {
                St::Line if !continued => st = St::Code,
                St::Str(_) if !continued => st = St::Code,
                _ => {}
            }
            starts.push(st == St::Code);
            i += 1;
            continue;
        }
        match &st {
            St::Code => match c {
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    st = St::Line;
                    blank[i] = b' ';
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    st = St::Block;
                    blank[i] = b' ';
                    blank[i + 1] = b' ';
                    i += 1;
                }
                b'"' if i > 0
                    && b[i - 1] == b'R'
                    && (i < 2
                        || !ident(b[i - 2])
                        || matches!(b[i - 2], b'u' | b'U' | b'L' | b'8')) =>
                {
                    let rest = &b[i + 1..];
                    let open = rest.iter().take(17).position(|&x| x == b'(');
                    match open {
                        Some(n) => {
                            let mut end = vec![b')'];
                            end.extend_from_slice(&rest[..n]);
                            end.push(b'"');
                            st = St::Raw(end);
                            i += n + 1;
                        }
                        None => st = St::Str(b'"'),
                    }
                }
                b'"' | b'\'' => st = St::Str(c),
                _ => {}
            },
            St::Line => blank[i] = b' ',
            St::Block => {
                blank[i] = b' ';
                if c == b'*' && b.get(i + 1) == Some(&b'/') {
                    blank[i + 1] = b' ';
                    i += 1;
                    st = St::Code;
                }
            }
            St::Str(q) => {
                if c == b'\\' && b.get(i + 1).is_some_and(|&n| n != b'\n') {
                    blank[i] = b' ';
                    blank[i + 1] = b' ';
                    i += 1;
                } else if c == *q {
                    st = St::Code;
                } else if c != b'\\' {
                    blank[i] = b' ';
                }
            }
            St::Raw(end) => {
                if b[i..].starts_with(end) {
                    for o in &mut blank[i..i + end.len() - 1] {
                        *o = b' ';
                    }
                    i += end.len();
                    st = St::Code;
                    continue;
                }
                blank[i] = b' ';
            }
        }
        i += 1;
    }
    (starts, blank)
}

/// An include directive's target.
#[derive(Debug, PartialEq, Eq)]
enum Target<'a> {
    Quoted(&'a str),
    Angle(&'a str),
    /// `#include MACRO`: the compiler resolves it (and the host tier checks what it read).
    Computed,
}

/// The include directive at the start of `code` (comments blanked), its target read from
/// `orig` (the same bytes unblanked); `None` when the line is no include directive.
fn include_target<'a>(code: &str, orig: &'a str) -> Option<Target<'a>> {
    let lead = code.len() - code.trim_start().len();
    let r = code[lead..].strip_prefix('#')?;
    let r2 = r.trim_start();
    let kw_at = code.len() - r2.len();
    let kw_len = r2
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    if !matches!(&r2[..kw_len], "include" | "include_next" | "import") {
        return None;
    }
    let after = kw_at + kw_len;
    let rest_code = &code[after..];
    let skip = rest_code.len() - rest_code.trim_start().len();
    let at = after + skip;
    let orig_rest = orig.get(at..).unwrap_or("");
    if let Some(r) = orig_rest.strip_prefix('"') {
        return Some(r.split('"').next().map_or(Target::Computed, Target::Quoted));
    }
    if let Some(r) = orig_rest.strip_prefix('<') {
        return Some(match r.find('>') {
            Some(e) => Target::Angle(&r[..e]),
            None => Target::Computed,
        });
    }
    Some(Target::Computed)
}

fn include_refused(field: String, why: String) -> Error {
    Error::new(ErrorClass::KernelInclude, field, why)
}

/// Inlines every `#include "name"` (each file once, as `#pragma once` would), looking the name
/// up (1) relative to the including file, (2) in each of `include_dirs` (`-I`), (3) among the
/// built-in headers when the name is a bare file name. A name found nowhere is an error (never
/// another file that happens to share its base name). `<...>` includes are left for the
/// compiler (the host tier serves the CUDA headers, NVRTC its own). Only real directives count
/// (not text in comments or string literals, raw ones included). An absolute name, or an
/// angle name with a `..` part, is refused (`kernel.include`), as is a candidate `lookup`
/// calls `Outside` when no candidate is found where includes may reach. `lookup` gets each
/// candidate path and the bytes left under [`MAX_RESOLVED`].
pub fn resolve(
    text: &str,
    path: &str,
    lookup: &dyn Fn(&str, usize) -> Result<Lookup>,
    include_dirs: &[String],
) -> Result<String> {
    let mut seen = Vec::new();
    let mut out = String::new();
    resolve_into(text, path, lookup, include_dirs, &mut seen, &mut out, 0)?;
    Ok(out)
}

fn resolve_into(
    text: &str,
    path: &str,
    lookup: &dyn Fn(&str, usize) -> Result<Lookup>,
    include_dirs: &[String],
    seen: &mut Vec<String>,
    out: &mut String,
    depth: usize,
) -> Result<()> {
    if depth > 16 {
        return Err(Error::new(
            ErrorClass::KernelCompile,
            path,
            "#include nesting deeper than 16",
        ));
    }
    // `#pragma once` becomes an include guard, so the preprocessor (not this scan) decides:
    // an include in a branch that is not taken, or in `#if 0`, costs nothing, and a file
    // included again in another branch still arrives. Files without it are inlined each time.
    let once = text
        .lines()
        .any(|l| l.trim_start().starts_with("#pragma once"));
    let guard = once.then(|| {
        let id = seen.iter().position(|p| p == path).unwrap_or_else(|| {
            seen.push(path.to_string());
            seen.len() - 1
        });
        format!("NT_ONCE_{id}")
    });
    if let Some(g) = &guard {
        out.push_str(&format!("#ifndef {g}\n#define {g}\n"));
    }
    let quoted_path = path.replace('\\', "\\\\").replace('"', "\\\"");
    out.push_str(&format!("#line 1 \"{quoted_path}\"\n"));
    let (starts, blank) = code_lines(text);
    let blank = String::from_utf8_lossy(&blank);
    let code: Vec<&str> = blank.split('\n').collect();
    let lines: Vec<&str> = text.split('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].strip_suffix('\r').unwrap_or(lines[i]);
        let last = i + 1 == lines.len();
        if last && line.is_empty() {
            break;
        }
        let t = line.trim_start();
        if t.starts_with("#pragma once") {
            out.push('\n');
            i += 1;
            continue;
        }
        let directive = if starts.get(i).copied().unwrap_or(false) {
            include_target(code.get(i).copied().unwrap_or(""), line)
        } else {
            None
        };
        let at = format!("{path}:{}", i + 1);
        let name = match directive {
            None | Some(Target::Computed) => {
                out.push_str(line);
                out.push('\n');
                i += 1;
                continue;
            }
            Some(Target::Angle(n)) => {
                if n.starts_with('/') || n.split('/').any(|p| p == "..") {
                    return Err(include_refused(
                        at,
                        format!("#include <{n}>: an absolute path or a `..` is not allowed in a system include (system headers are found by name)"),
                    ));
                }
                out.push_str(line);
                out.push('\n');
                i += 1;
                continue;
            }
            Some(Target::Quoted(n)) => n,
        };
        if name.starts_with('/') {
            return Err(include_refused(
                at,
                format!("#include \"{name}\": absolute paths are not allowed; include files by a path relative to the kernel's folder or a -I folder"),
            ));
        }
        if line.trim_end().ends_with('\\') {
            return Err(include_refused(
                at,
                format!("#include \"{name}\" continues on the next line ('\\' at its end); write the include on one line"),
            ));
        }
        let budget = MAX_RESOLVED.saturating_sub(out.len());
        let (found, body) = find_include(name, &at, path, include_dirs, lookup, budget)?;
        resolve_into(&body, &found, lookup, include_dirs, seen, out, depth + 1)?;
        if out.len() > MAX_RESOLVED {
            return Err(Error::new(
                ErrorClass::KernelCompile,
                at,
                format!(
                    "the source with its includes inlined exceeds {} MiB",
                    MAX_RESOLVED >> 20
                ),
            ));
        }
        out.push_str(&format!("#line {} \"{quoted_path}\"\n", i + 2));
        i += 1;
    }
    if let Some(g) = &guard {
        out.push_str(&format!("#endif // {g}\n"));
    }
    Ok(())
}

/// The file a quoted `#include "name"` at `at` names: next to `path`, then in the -I folders,
/// then (bare names only) among the built-in headers; `(where it was found, its text)`.
fn find_include(
    name: &str,
    at: &str,
    path: &str,
    include_dirs: &[String],
    lookup: &dyn Fn(&str, usize) -> Result<Lookup>,
    budget: usize,
) -> Result<(String, String)> {
    let mut tried = vec![join(path, name)];
    tried.extend(
        include_dirs
            .iter()
            .map(|d| join(&format!("{}/_", d.trim_end_matches('/')), name)),
    );
    let mut outside = Vec::new();
    let mut found = None;
    for p in &tried {
        match lookup(p, budget).map_err(|e| {
            let field = format!("{at}: #include \"{name}\": {}", e.field());
            e.with_field(field)
        })? {
            Lookup::Text(b) => {
                found = Some((p.clone(), b));
                break;
            }
            Lookup::Missing => {}
            Lookup::Outside(why) => outside.push(why),
        }
    }
    let found = found.or_else(|| {
        (!name.contains('/'))
            .then(|| builtin(name).map(|b| (format!("<built-in>/{name}"), b.to_string())))
            .flatten()
    });
    let Some((found, body)) = found else {
        if !outside.is_empty() {
            return Err(include_refused(
                at.to_string(),
                format!(
                    "#include \"{name}\" is refused: {} (add the folder it is in with -I)",
                    outside.join("; ")
                ),
            ));
        }
        return Err(Error::new(
            ErrorClass::KernelCompile,
            at.to_string(),
            format!(
                "#include \"{name}\": not found (looked for {}{})",
                tried.join(", "),
                if name.contains('/') {
                    ""
                } else {
                    ", then the built-in headers"
                }
            ),
        ));
    };
    Ok((found, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_resolve_relative_then_include_dirs_then_builtins_and_never_by_base_name() {
        let files = |p: &str, _: usize| -> Result<Lookup> {
            Ok(match p {
                "/src/k/a.cu" => Some("#include \"../inc/x.cuh\"\nA".into()),
                "/src/inc/x.cuh" => Some("#pragma once\nX".into()),
                "/opt/i/y.cuh" => Some("Y".into()),
                "k/x.cuh" => Some("WRONG".into()),
                _ => None,
            }
            .map_or(Lookup::Missing, Lookup::Text))
        };
        let r = resolve(
            "#include \"../inc/x.cuh\"\n#include \"y.cuh\"\n#include \"common.cuh\"\nB",
            "/src/k/a.cu",
            &files,
            &["/opt/i".into()],
        )
        .unwrap();
        assert!(
            r.contains("X") && r.contains("Y") && r.contains("nt_f16") && !r.contains("WRONG"),
            "{r}"
        );
        // `..` above a relative start is kept: k/a.cu + ../x.cuh is x.cuh, not k/x.cuh.
        assert_eq!(join("k/a.cu", "../x.cuh"), "x.cuh");
        assert_eq!(join("a.cu", "../x.cuh"), "../x.cuh");
        assert_eq!(join("/a.cu", "../x.cuh"), "/x.cuh");
        assert_eq!(join("wrong/v.cu", "../common.cuh"), "common.cuh");
        // A path that exists nowhere is an error even when a built-in shares its base name.
        let e = resolve("#include \"../zz/common.cuh\"", "/src/k/a.cu", &files, &[]).unwrap_err();
        assert_eq!(e.class(), ErrorClass::KernelCompile);
        assert!(e.detail().contains("/src/zz/common.cuh"), "{e}");
        // A `#pragma once` file arrives under one include guard wherever it is included (the
        // preprocessor keeps the first copy that is really compiled); a file without it is
        // inlined each time.
        let twice = resolve("#include \"../inc/x.cuh\"\n#include \"../inc/x.cuh\"\n#include \"y.cuh\"\n#include \"y.cuh\"", "/src/k/a.cu", &files, &["/opt/i".into()]).unwrap();
        assert_eq!(twice.matches("#ifndef NT_ONCE_0").count(), 2, "{twice}");
        assert_eq!(twice.matches('Y').count(), 2);
    }
}

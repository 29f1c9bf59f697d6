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
    resolve(text, path, &|p| builtin(p).map(str::to_string), &[])
}

/// The most text a source with its includes inlined may reach (a diamond of includes without
/// `#pragma once` grows exponentially).
const MAX_RESOLVED: usize = 32 << 20;

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

/// Inlines every `#include "name"` (each file once, as `#pragma once` would), looking the name
/// up (1) relative to the including file, (2) in each of `include_dirs` (`-I`), (3) among the
/// built-in headers when the name is a bare file name. A name found nowhere is an error (never
/// another file that happens to share its base name). `<...>` includes are left for the
/// compiler (the host tier serves the CUDA headers, NVRTC its own).
pub fn resolve(
    text: &str,
    path: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
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
    lookup: &dyn Fn(&str) -> Option<String>,
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
    out.push_str(&format!("#line 1 \"{path}\"\n"));
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("#pragma once") {
            out.push('\n');
            continue;
        }
        let inc = t
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix("include"))
            .map(str::trim)
            .and_then(|r| r.strip_prefix('"'))
            .and_then(|r| r.split('"').next());
        let Some(name) = inc else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let mut tried = vec![join(path, name)];
        tried.extend(
            include_dirs
                .iter()
                .map(|d| join(&format!("{}/_", d.trim_end_matches('/')), name)),
        );
        let found = tried
            .iter()
            .find_map(|p| lookup(p).map(|b| (p.clone(), b)))
            .or_else(|| {
                (!name.contains('/'))
                    .then(|| builtin(name).map(|b| (format!("<built-in>/{name}"), b.to_string())))
                    .flatten()
            });
        let Some((found, body)) = found else {
            return Err(Error::new(
                ErrorClass::KernelCompile,
                format!("{path}:{}", i + 1),
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
        resolve_into(&body, &found, lookup, include_dirs, seen, out, depth + 1)?;
        if out.len() > MAX_RESOLVED {
            return Err(Error::new(
                ErrorClass::KernelCompile,
                format!("{path}:{}", i + 1),
                format!(
                    "the source with its includes inlined exceeds {} MiB",
                    MAX_RESOLVED >> 20
                ),
            ));
        }
        out.push_str(&format!("#line {} \"{path}\"\n", i + 2));
    }
    if let Some(g) = &guard {
        out.push_str(&format!("#endif // {g}\n"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_resolve_relative_then_include_dirs_then_builtins_and_never_by_base_name() {
        let files = |p: &str| -> Option<String> {
            match p {
                "/src/k/a.cu" => Some("#include \"../inc/x.cuh\"\nA".into()),
                "/src/inc/x.cuh" => Some("#pragma once\nX".into()),
                "/opt/i/y.cuh" => Some("Y".into()),
                "k/x.cuh" => Some("WRONG".into()),
                _ => None,
            }
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
        assert_eq!(e.class, ErrorClass::KernelCompile);
        assert!(e.detail.contains("/src/zz/common.cuh"), "{e}");
        // A `#pragma once` file arrives under one include guard wherever it is included (the
        // preprocessor keeps the first copy that is really compiled); a file without it is
        // inlined each time.
        let twice = resolve("#include \"../inc/x.cuh\"\n#include \"../inc/x.cuh\"\n#include \"y.cuh\"\n#include \"y.cuh\"", "/src/k/a.cu", &files, &["/opt/i".into()]).unwrap();
        assert_eq!(twice.matches("#ifndef NT_ONCE_0").count(), 2, "{twice}");
        assert_eq!(twice.matches('Y').count(), 2);
    }
}

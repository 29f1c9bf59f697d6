//! The kernel sources compiled into the crate and a small textual `#include "..."` resolver,
//! so NVRTC and the host compiler both see one self-contained translation unit.

use crate::error::{Error, ErrorClass, Result};

/// Every file under `src/cuda/kernels/`, by path relative to that folder.
pub const FILES: &[(&str, &str)] = &[
    ("common.cuh", include_str!("kernels/common.cuh")),
    ("planes.cuh", include_str!("kernels/planes.cuh")),
    ("mmq_tile.cuh", include_str!("kernels/mmq_tile.cuh")),
    (
        "hadamard_rotate.cuh",
        include_str!("kernels/hadamard_rotate.cuh"),
    ),
    ("dequantize.cu", include_str!("kernels/dequantize.cu")),
    ("get_rows.cu", include_str!("kernels/get_rows.cu")),
    ("mul_mat_vec.cu", include_str!("kernels/mul_mat_vec.cu")),
    (
        "mul_mat_vec_planes.cu",
        include_str!("kernels/mul_mat_vec_planes.cu"),
    ),
    ("mul_mat.cu", include_str!("kernels/mul_mat.cu")),
    (
        "hadamard_rotate.cu",
        include_str!("kernels/hadamard_rotate.cu"),
    ),
    (
        "wrong/ptq1_sequential.cu",
        include_str!("kernels/wrong/ptq1_sequential.cu"),
    ),
    (
        "wrong/old_block_geometry.cu",
        include_str!("kernels/wrong/old_block_geometry.cu"),
    ),
    (
        "wrong/code3_as_plus1.cu",
        include_str!("kernels/wrong/code3_as_plus1.cu"),
    ),
    (
        "wrong/scale_at_0.cu",
        include_str!("kernels/wrong/scale_at_0.cu"),
    ),
    (
        "wrong/mmq_tile_variants.cu",
        include_str!("kernels/wrong/mmq_tile_variants.cu"),
    ),
    (
        "wrong/hadamard_variants.cu",
        include_str!("kernels/wrong/hadamard_variants.cu"),
    ),
];

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
    resolve(text, path, &|p| builtin(p).map(str::to_string))
}

fn join(dir_of: &str, rel: &str) -> String {
    let mut parts: Vec<&str> = dir_of.split('/').collect();
    parts.pop();
    for p in rel.split('/') {
        match p {
            "." | "" => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(p),
        }
    }
    parts.join("/")
}

/// Inlines every `#include "name"` (each file once, as `#pragma once` would), looking names up
/// relative to the including file, then among the built-in headers by file name. `<...>`
/// includes are left for the compiler.
pub fn resolve(text: &str, path: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String> {
    let mut seen = Vec::new();
    let mut out = String::new();
    resolve_into(text, path, lookup, &mut seen, &mut out, 0)?;
    Ok(out)
}

fn resolve_into(
    text: &str,
    path: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
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
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with("#pragma once") {
            continue;
        }
        let inc = t
            .strip_prefix("#include")
            .map(str::trim)
            .and_then(|r| r.strip_prefix('"'))
            .and_then(|r| r.split('"').next());
        let Some(name) = inc else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let full = join(path, name);
        let base = name.rsplit('/').next().unwrap_or(name);
        let (found, body) = match lookup(&full) {
            Some(b) => (full.clone(), b),
            None => match builtin(base) {
                Some(b) => (base.to_string(), b.to_string()),
                None => {
                    return Err(Error::new(
                        ErrorClass::KernelCompile,
                        format!("{path}:{}", i + 1),
                        format!("#include \"{name}\": no such file next to the source or among the built-in headers"),
                    ))
                }
            },
        };
        if seen.contains(&found) {
            continue;
        }
        seen.push(found.clone());
        resolve_into(&body, &found, lookup, seen, out, depth + 1)?;
        out.push_str(&format!("#line {} \"{path}\"\n", i + 2));
    }
    Ok(())
}

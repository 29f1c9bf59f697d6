//! `spec`: render the spec tables as Markdown (the tables are the source of truth).

use crate::error::{Error, ErrorClass};
use crate::spec::{self, SOURCES};
use std::process::ExitCode;

/// `spec [TABLE]`: prints one spec table (or all) as Markdown.
pub fn run(table: Option<&str>) -> crate::Result<ExitCode> {
    let s = spec::get();
    let want = |n: &str| table.is_none_or(|t| n.starts_with(t));
    let mut out = String::new();
    if want("formats") {
        out.push_str("## Numeric formats (spec/formats.json)\n\n| name | kind | group | base B/group | high B/group | scale B/group | word B |\n|---|---|---|---|---|---|---|\n");
        for f in &s.formats.formats {
            let o = |v: Option<u64>| v.map_or("-".to_string(), |x| x.to_string());
            out.push_str(&format!(
                "| {} | {:?} | {} | {} | {} | {} | {} |\n",
                f.name,
                f.kind,
                o(f.group_size),
                o(f.base_bytes_per_group),
                o(f.high_bytes_per_group),
                o(f.scale_bytes_per_group),
                o(f.word_bytes)
            ));
        }
        out.push_str("\n| layout | accepts | alignment | encoded_size |\n|---|---|---|---|\n");
        for l in &s.formats.layouts {
            out.push_str(&format!(
                "| {} | {:?} | {} | {} |\n",
                l.name, l.accepts_kinds, l.alignment, l.encoded_size
            ));
        }
        out.push('\n');
    }
    if want("geometry") {
        out.push_str("## Row-split geometry examples (spec/geometry.json)\n\n| format | shape | payload_bytes | scale_offset |\n|---|---|---|---|\n");
        for e in &s.geometry.examples {
            let f = s.format(&e.format).ok_or_else(|| {
                crate::Error::new(
                    crate::ErrorClass::SpecInvalid,
                    "spec/geometry.json",
                    format!(
                        "example names format {:?}, which spec/formats.json does not define",
                        e.format
                    ),
                )
            })?;
            let g = crate::geometry::row_split_geometry(f, e.shape[0], e.shape[1])?;
            out.push_str(&format!(
                "| {} | {:?} | {} | {} |\n",
                e.format, e.shape, g.payload_bytes, g.scale_offset
            ));
        }
        out.push('\n');
    }
    if want("ggml_types") {
        out.push_str("## ggml types (spec/ggml_types.json)\n\n| id | name | block elems | block bytes | decoded | origin |\n|---|---|---|---|---|---|\n");
        for t in s.ggml.types.iter().chain(&s.ggml.variants) {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                t.id,
                t.name,
                t.block_elems,
                t.block_bytes,
                t.codec.as_deref().unwrap_or("-"),
                t.origin.as_deref().unwrap_or("mainline")
            ));
        }
        out.push('\n');
    }
    if want("errors") {
        out.push_str(
            "## Error classes (spec/errors.json)\n\n| id | phase | rule |\n|---|---|---|\n",
        );
        for c in &s.errors.classes {
            out.push_str(&format!("| `{}` | {} | {} |\n", c.id, c.phase, c.summary));
        }
        out.push('\n');
    }
    if out.is_empty() {
        let names: Vec<&str> = SOURCES
            .iter()
            .map(|(n, _)| n.trim_end_matches(".json"))
            .collect();
        return Err(super::usage(
            "TABLE",
            format!(
                "no rendered table named '{}' (tables: {})",
                table.unwrap_or(""),
                names.join(", ")
            ),
        ));
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

/// `spec --write` / `spec --check`: re-render (or compare) the generated regions of `dir/*.md`.
pub fn docs(dir: &std::path::Path, write: bool) -> crate::Result<ExitCode> {
    use crate::spec_docs as render;
    let mut docs: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(ErrorClass::IoRead, dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    let (mut regions, mut stale) = (0usize, Vec::new());
    for p in &docs {
        let text = crate::fsio::read_input_string(p)?;
        let n = render::regions(&text)
            .map_err(|e| Error::new(ErrorClass::SpecInvalid, p.display().to_string(), e))?
            .len();
        regions += n;
        if write {
            let fresh = render::apply(&text)
                .map_err(|e| Error::new(ErrorClass::SpecInvalid, p.display().to_string(), e))?;
            if fresh != text {
                crate::fsio::rewrite_in_place(p, text.as_bytes(), fresh.as_bytes())?;
                println!("rewrote {}", p.display());
            }
        } else {
            for r in render::stale_regions(&text)
                .map_err(|e| Error::new(ErrorClass::SpecInvalid, p.display().to_string(), e))?
            {
                stale.push(format!("{}: region '{r}'", p.display()));
            }
        }
    }
    if write {
        println!(
            "{} documents, {regions} generated regions up to date",
            docs.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if stale.is_empty() {
        println!(
            "{} documents, {regions} generated regions match spec/*.json",
            docs.len()
        );
        Ok(ExitCode::SUCCESS)
    } else {
        for s in &stale {
            eprintln!("stale (edited by hand or tables changed): {s}");
        }
        eprintln!("run `ninfer-ternary spec --write` to regenerate");
        Ok(ExitCode::FAILURE)
    }
}

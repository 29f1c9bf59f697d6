//! `spec`: render the spec tables as Markdown (the tables are the source of truth).

use crate::spec::{self, SOURCES};
use std::process::ExitCode;

pub fn run(table: Option<&str>) -> anyhow::Result<ExitCode> {
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
            let f = s.format(&e.format).expect("spec format");
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
        anyhow::bail!(
            "no rendered table named '{}' (tables: {})",
            table.unwrap_or(""),
            names.join(", ")
        );
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

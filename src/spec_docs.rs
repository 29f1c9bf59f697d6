//! Renders the table-backed sections of the `spec/*.md` documents from the `spec/*.json` tables.
//!
//! A document marks a generated region with
//! `<!-- BEGIN GENERATED: <region> -->` … `<!-- END GENERATED -->`; [`apply`] replaces the text
//! between the markers with [`region`]`(<region>)`. `ninfer-ternary spec --write` rewrites the
//! documents, `spec --check` (and `src/tests/spec_docs.rs`) fails when a committed region differs
//! from what the tables produce, so prose-side tables cannot drift from the data the code runs on.

use crate::spec::{gates, get, mapping, Dim, LayerSet, Produce, Spec};
use std::fmt::Write as _;

/// Start marker prefix of a generated region.
pub const BEGIN: &str = "<!-- BEGIN GENERATED: ";
/// End marker of a generated region.
pub const END: &str = "<!-- END GENERATED -->";

/// The generated regions: one table of variant, marker name and renderer, so the list of
/// names, the parser and the dispatch cannot drift apart.
macro_rules! regions {
    ($($variant:ident = $name:literal => $render:ident,)*) => {
        /// A generated region of a `spec/*.md` document.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum RegionId {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
        }

        /// Every region name the renderer knows, in a stable order.
        #[cfg(any(test, feature = "internals"))]
        pub const REGIONS: &[&str] = &[$($name,)*];

        impl RegionId {
            /// Every region, in [`REGIONS`] order.
            #[cfg(any(test, feature = "internals"))]
            pub const ALL: &'static [RegionId] = &[$(RegionId::$variant,)*];

            /// The name its markers use.
            pub fn name(self) -> &'static str {
                match self {
                    $(RegionId::$variant => $name,)*
                }
            }

            /// The region a marker names.
            pub fn from_name(name: &str) -> Option<RegionId> {
                match name {
                    $($name => Some(RegionId::$variant),)*
                    _ => None,
                }
            }

            /// Its Markdown body from the tables (`None` when its rows cannot be rendered).
            pub fn render(self) -> Option<String> {
                let s = get();
                match self {
                    $(RegionId::$variant => $render(s),)*
                }
            }
        }
    };
}

regions! {
    GgufHeader = "gguf_header" => render_gguf_header,
    GgufValueTypes = "gguf_value_types" => render_gguf_value_types,
    GgufLimits = "gguf_limits" => render_gguf_limits,
    GgufRuleLayers = "gguf_rule_layers" => render_gguf_rule_layers,
    GgmlTypes = "ggml_types" => render_ggml_types,
    GgmlVariants = "ggml_variants" => render_ggml_variants,
    GgmlId42 = "ggml_id42" => render_ggml_id42,
    CodecLayouts = "codec_layouts" => render_codec_layouts,
    CodecVectors = "codec_vectors" => render_codec_vectors,
    ContainerConstants = "container_constants" => render_container_constants,
    ContainerMembers = "container_members" => render_container_members,
    RefusedMagics = "refused_magics" => render_refused_magics,
    Formats = "formats" => render_formats,
    Layouts = "layouts" => render_layouts,
    EncodedSizeExamples = "encoded_size_examples" => render_encoded_size_examples,
    GeometryFields = "geometry_fields" => render_geometry_fields,
    GeometryExamples = "geometry_examples" => render_geometry_examples,
    Permutations = "permutations" => render_permutations,
    HadamardKeys = "hadamard_keys" => render_hadamard_keys,
    HadamardObjects = "hadamard_objects" => render_hadamard_objects,
    MappingRules = "mapping_rules" => render_mapping_rules,
    SignObjects = "sign_objects" => render_sign_objects,
    GateSteps = "gate_steps" => render_gate_steps,
    GateThresholds = "gate_thresholds" => render_gate_thresholds,
    AssemblyControls = "assembly_controls" => render_assembly_controls,
    Mutations = "mutations" => render_mutations,
    DumpFormats = "dump_formats" => render_dump_formats,
    ErrorClasses = "error_classes" => render_error_classes,
    TableSources = "table_sources" => render_table_sources,
    Kernels = "kernels" => render_kernels,
}

/// One Markdown table cell: pipes escaped, line breaks flattened.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn code(s: &str) -> String {
    format!("`{}`", s.replace('|', "\\|"))
}

fn dim(d: &Dim) -> String {
    match d {
        Dim::Num(n) => n.to_string(),
        Dim::Name(s) => s.clone(),
    }
}

fn dims(ds: &[Dim]) -> String {
    format!("[{}]", ds.iter().map(dim).collect::<Vec<_>>().join(", "))
}

fn layers(l: LayerSet) -> &'static str {
    match l {
        LayerSet::Global => "global",
        LayerSet::All => "every layer",
        LayerSet::Gdn => "GDN layers",
        LayerSet::Attention => "attention layers",
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| x.to_string())
}

fn table(out: &mut String, head: &[&str], rows: impl IntoIterator<Item = Vec<String>>) {
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let _ = writeln!(out, "|{}", head.iter().map(|_| "---|").collect::<String>());
    for r in rows {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
}

fn produce(p: &Produce) -> String {
    match p {
        Produce::TernaryRows { parts } => parts
            .iter()
            .map(|r| {
                let rows = r.rows.as_ref().map_or(String::new(), |[a, b]| {
                    format!(" rows {}..{}", dim(a), dim(b))
                });
                format!("`{}`{} ({})", r.src, rows, r.order)
            })
            .collect::<Vec<_>>()
            .join(" ++ "),
        Produce::Norm { src, minus_one } => {
            if *minus_one {
                format!("BF16(`{src}` − 1)")
            } else {
                format!("BF16(`{src}`) raw")
            }
        }
        Produce::HeadVector { src, func } => format!("FP32 {func}(`{src}`), tiled→grouped"),
        Produce::HeadRows { src } => format!("`{src}` rows, tiled→grouped"),
        Produce::Conv1d { src } => {
            format!("`{src}` read as (C, kernel), V channels head-permuted, transposed")
        }
    }
}

/// The Markdown body of one generated region (without markers); `None` for an unknown name
/// (or a region whose table rows cannot be rendered).
pub fn region(name: &str) -> Option<String> {
    RegionId::from_name(name)?.render()
}

/// The `gguf_header` region.
fn render_gguf_header(s: &Spec) -> Option<String> {
    let mut o = String::new();
    let g = &s.gguf;
    table(
        &mut o,
        &["item", "value"],
        [
            vec!["magic".into(), code(&g.magic_hex)],
            vec!["header bytes".into(), g.header_bytes.to_string()],
            vec!["versions read".into(), format!("{:?}", g.versions_readable)],
            vec![
                "versions refused".into(),
                format!("{:?}", g.versions_rejected),
            ],
            vec![
                "big-endian version marker".into(),
                format!("0x{:08x}", g.big_endian_version_marker),
            ],
            vec!["alignment key".into(), code(&g.alignment_key)],
            vec!["default alignment".into(), g.default_alignment.to_string()],
            vec!["architecture key".into(), code(&g.architecture_key)],
            vec!["max n_dims".into(), g.max_dims.to_string()],
        ],
    );
    Some(o)
}

/// The `gguf_value_types` region.
fn render_gguf_value_types(s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &["id", "name", "payload bytes"],
        s.gguf.value_types.iter().map(|v| {
            vec![
                v.id.to_string(),
                code(&v.name),
                v.size.map_or("variable".into(), |x| x.to_string()),
            ]
        }),
    );
    Some(o)
}

/// The `gguf_rule_layers` region.
fn render_gguf_rule_layers(s: &Spec) -> Option<String> {
    let mut o = String::new();
    let r = &s.gguf.rule_layers;
    let p = &r.mainline_pin;
    let _ = writeln!(
        o,
        "Observed with `{}` {} (ggml {}), built by `{}`. {}\n",
        p.package,
        p.version,
        p.ggml,
        p.setup,
        cell(&r.source)
    );
    table(
        &mut o,
        &["layer", "meaning"],
        r.layers.iter().map(|(k, v)| vec![code(k), cell(v)]),
    );
    let _ = writeln!(
        o,
        "\nThe reference reader's strict mode applies: {}.\n",
        r.reference_strict_mode
            .iter()
            .map(|l| code(l))
            .collect::<Vec<_>>()
            .join(", ")
    );
    table(
        &mut o,
        &[
            "case (`n_` + name)",
            "layer",
            "mainline gguf.cpp",
            "where",
            "note",
        ],
        r.cases.iter().map(|c| {
            vec![
                code(&c.case),
                code(&c.layer),
                c.mainline.clone(),
                code(&c.where_),
                cell(c.note.as_deref().unwrap_or("")),
            ]
        }),
    );
    Some(o)
}

/// The `gguf_limits` region.
fn render_gguf_limits(s: &Spec) -> Option<String> {
    let mut o = String::new();
    let st = &s.gguf.strict;
    table(
        &mut o,
        &["rule", "permissive", "strict (mainline)"],
        [
            vec![
                "max string bytes".into(),
                s.gguf.limits.max_string_bytes.to_string(),
                s.gguf.limits.max_string_bytes.to_string(),
            ],
            vec![
                "max tensor name bytes".into(),
                "–".into(),
                format!("< {}", st.max_tensor_name_bytes),
            ],
            vec![
                "offsets equal the running padded sum".into(),
                "no".into(),
                yes(st.offsets_equal_running_padded_sum),
            ],
            vec![
                "duplicate keys refused".into(),
                "no".into(),
                yes(st.no_duplicate_keys),
            ],
            vec![
                "alignment must be a U32 power of two".into(),
                "no".into(),
                yes(st.alignment_must_be_u32_power_of_two),
            ],
            vec![
                "architecture key required".into(),
                "no".into(),
                yes(st.architecture_required),
            ],
        ],
    );
    let _ = writeln!(o, "\nWhy the string limit: {}", cell(&s.gguf.limits.why));
    Some(o)
}

/// The `ggml_types` region.
fn render_ggml_types(s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &[
            "id",
            "name",
            "block elems",
            "block bytes",
            "decoded by this suite",
            "origin",
        ],
        s.ggml.types.iter().map(|t| {
            vec![
                t.id.to_string(),
                code(&t.name),
                t.block_elems.to_string(),
                t.block_bytes.to_string(),
                t.codec.clone().unwrap_or_else(|| "–".into()),
                t.origin.clone().unwrap_or_else(|| "mainline".into()),
            ]
        }),
    );
    let _ = writeln!(
        o,
        "\nRemoved ids (never valid): {}.",
        s.ggml
            .removed_ids
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Some(o)
}

/// The `ggml_variants` region.
fn render_ggml_variants(s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &["id", "name", "block elems", "block bytes", "origin", "note"],
        s.ggml.variants.iter().map(|t| {
            vec![
                t.id.to_string(),
                code(&t.name),
                t.block_elems.to_string(),
                t.block_bytes.to_string(),
                cell(t.origin.as_deref().unwrap_or("–")),
                cell(t.note.as_deref().unwrap_or("")),
            ]
        }),
    );
    Some(o)
}

/// The `codec_vectors` region.
fn render_codec_vectors(s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &["vector", "codec", "d (f16)", "trits", "block bytes (hex)"],
        s.codecs.vectors.iter().map(|v| {
            vec![
                code(&v.name),
                v.codec.clone(),
                code(&v.d_f16),
                cell(v.trits.as_deref().unwrap_or("–")),
                code(&v.hex),
            ]
        }),
    );
    Some(o)
}

/// The `container_constants` region.
fn render_container_constants(s: &Spec) -> Option<String> {
    let mut o = String::new();
    let c = &s.container;
    table(
        &mut o,
        &["constant", "value"],
        [
            vec!["magic".into(), code(&c.magic_hex)],
            vec!["prefix bytes".into(), c.prefix_bytes.to_string()],
            vec![
                "json_bytes field offset".into(),
                c.json_length_offset.to_string(),
            ],
            vec!["payload alignment".into(), c.payload_alignment.to_string()],
            vec!["plane alignment".into(), c.plane_alignment.to_string()],
            vec!["K alignment".into(), c.k_alignment.to_string()],
            vec![
                "resource alignment".into(),
                c.directory.resource_alignment.to_string(),
            ],
            vec!["directory encoding".into(), cell(&c.directory.encoding)],
        ],
    );
    Some(o)
}

/// The `container_members` region.
fn render_container_members(s: &Spec) -> Option<String> {
    let mut o = String::new();
    let d = &s.container.directory;
    let j = |v: &[String]| v.iter().map(|m| code(m)).collect::<Vec<_>>().join(", ");
    table(
        &mut o,
        &["object", "exact member set"],
        [
            vec!["root".into(), j(&d.root_members)],
            vec!["identity".into(), j(&d.identity_members)],
            vec!["tensor".into(), j(&d.tensor_members)],
            vec!["resource".into(), j(&d.resource_members)],
        ],
    );
    let _ = writeln!(
        o,
        "\nKinds: {}. Resource encodings: {}.\n",
        j(&d.kinds),
        j(&d.resource_encodings)
    );
    for r in &d.value_rules {
        let _ = writeln!(o, "- {}", cell(r));
    }
    let w = &s.container.writer;
    let _ = writeln!(
        o,
        "\nWriter: output `weights_id` = `{}` (template: `{}`), padding byte {}, objects in offset order: {}.",
        w.ternary_weights_id,
        w.template_weights_id,
        w.padding_byte,
        yes(w.objects_in_offset_order)
    );
    Some(o)
}

/// The `refused_magics` region.
fn render_refused_magics(s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &["magic", "what it is", "error class", "why"],
        s.container.refused_magics.iter().map(|r| {
            vec![
                code(&r.magic_hex),
                cell(&r.name),
                code(&r.error_class),
                cell(&r.why),
            ]
        }),
    );
    Some(o)
}

/// The `formats` region.
fn render_formats(s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &[
            "format",
            "kind",
            "group",
            "base B/group",
            "high B/group",
            "scale B/group",
            "word B",
            "ggml type",
            "engine code",
        ],
        s.formats.formats.iter().map(|f| {
            vec![
                code(&f.name),
                format!("{:?}", f.kind).to_lowercase(),
                opt(f.group_size),
                opt(f.base_bytes_per_group),
                opt(f.high_bytes_per_group),
                opt(f.scale_bytes_per_group),
                opt(f.word_bytes),
                f.ternary
                    .as_ref()
                    .map_or("–".into(), |t| code(&t.ggml_type)),
                f.ternary
                    .as_ref()
                    .map_or("–".into(), |t| t.engine_type_code.to_string()),
            ]
        }),
    );
    Some(o)
}

/// The `layouts` region.
fn render_layouts(s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &[
            "layout",
            "family",
            "accepts",
            "alignment",
            "max rank",
            "encoded size",
        ],
        s.formats.layouts.iter().map(|l| {
            vec![
                code(l.name.as_str()),
                cell(&l.family),
                l.accepts_kinds
                    .iter()
                    .map(|k| format!("{k:?}").to_lowercase())
                    .collect::<Vec<_>>()
                    .join(", "),
                l.alignment.to_string(),
                l.max_rank.map_or("–".into(), |r| r.to_string()),
                cell(&l.encoded_size),
            ]
        }),
    );
    Some(o)
}

/// The `encoded_size_examples` region.
fn render_encoded_size_examples(s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &["layout", "format", "shape", "bytes"],
        s.formats.encoded_size_examples.iter().map(|e| {
            vec![
                code(e.layout.as_str()),
                code(&e.format),
                format!("{:?}", e.shape),
                e.bytes.to_string(),
            ]
        }),
    );
    Some(o)
}

/// The `geometry_fields` region.
fn render_geometry_fields(s: &Spec) -> Option<String> {
    let mut o = String::new();
    for (i, f) in s.geometry.fields.iter().enumerate() {
        let _ = writeln!(o, "{}. `{}`", i + 1, f);
    }
    o.push('\n');
    for r in &s.geometry.rules {
        let _ = writeln!(o, "- {}", cell(r));
    }
    Some(o)
}

/// The `geometry_examples` region.
fn render_geometry_examples(s: &Spec) -> Option<String> {
    let mut o = String::new();
    let rows: Vec<Vec<String>> = s
        .geometry
        .examples
        .iter()
        .map(|e| {
            // An example naming no format or an invalid shape renders no region
            // (`apply` then refuses the document naming it).
            let f = s.format(&e.format)?;
            let g = crate::geometry::row_split_geometry(f, e.shape[0], e.shape[1]).ok()?;
            Some(vec![
                code(&e.format),
                format!("[{}, {}]", e.shape[0], e.shape[1]),
                g.k_pad.to_string(),
                g.high_offset.to_string(),
                g.scale_offset.to_string(),
                g.payload_bytes.to_string(),
                cell(e.note.as_deref().unwrap_or("")),
            ])
        })
        .collect::<Option<_>>()?;
    table(
        &mut o,
        &[
            "format",
            "[n, k]",
            "k_pad",
            "high_offset",
            "scale_offset",
            "payload_bytes",
            "note",
        ],
        rows,
    );
    let _ = writeln!(
        o,
        "\nValues computed by `geometry::row_split_geometry`; the table's expected values are checked against them by the geometry tests."
    );
    Some(o)
}

/// The `ggml_id42` region.
fn render_ggml_id42(s: &Spec) -> Option<String> {
    let mut o = String::new();
    let r = &s.ggml.id42_disambiguation;
    let _ = writeln!(o, "- Rule: {}", cell(&r.rule));
    let _ = writeln!(
        o,
        "- Candidates sharing id 42: {}",
        r.candidates
            .iter()
            .map(|c| code(c))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (k, v) in &r.mismatch_ratios {
        let _ = writeln!(o, "- `{k}`: {}", cell(v));
    }
    let _ = writeln!(o, "- Recorded disagreement: {}", cell(&r.disagreement));
    let _ = writeln!(
        o,
        "- Fork file-type numbers (informative): {}",
        s.ggml
            .prism_ftypes
            .iter()
            .map(|(k, v)| format!("`{k}` = {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for u in &s.ggml.unconfirmed {
        let _ = writeln!(
            o,
            "- UNCONFIRMED: `{}` (block {}): {}",
            u.name,
            u.block_elems,
            cell(&u.note)
        );
    }
    Some(o)
}

/// The `codec_layouts` region.
fn render_codec_layouts(s: &Spec) -> Option<String> {
    let mut o = String::new();
    let r = |x: Option<[u64; 2]>| x.map_or("–".to_string(), |[a, b]| format!("[{a}, {b})"));
    table(
        &mut o,
        &[
            "codec",
            "elems",
            "bytes",
            "scale",
            "codes",
            "qs",
            "qh",
            "stages",
            "element order",
            "value",
        ],
        s.codecs.codecs.iter().map(|c| {
            vec![
                code(&c.codec),
                c.block_elems.to_string(),
                c.block_bytes.to_string(),
                r(Some(c.scale)),
                r(c.codes),
                r(c.qs),
                r(c.qh),
                c.stages.as_ref().map_or("–".into(), |v| {
                    v.iter()
                        .map(|st| {
                            format!(
                                "e [{}, {}) → bytes [{}, {})",
                                st.elems[0], st.elems[1], st.bytes[0], st.bytes[1]
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("; ")
                }),
                cell(
                    &[c.element_order.as_deref(), c.digit.as_deref()]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join("; digit: "),
                ),
                cell(&c.value),
            ]
        }),
    );
    let q = &s.codecs.quantizer;
    let _ = writeln!(
        o,
        "
Reference quantizer (informative):
"
    );
    for (k, v) in [
        ("scale", &q.scale),
        ("rounding", &q.rounding),
        ("PQ2_0 code", &q.pq2_0_code),
        ("PTQ1_0 trit", &q.ptq1_0_trit),
        ("qs byte", &q.base3_byte),
        ("qh byte", &q.base3_qh_byte),
    ] {
        let _ = writeln!(o, "- {k}: {}", cell(v));
    }
    let f = &s.codecs.byte_facts;
    let _ = writeln!(
        o,
        "
Byte facts: qs all −1 / 0 / +1 = `{}` / `{}` / `{}`; qh all −1 / 0 / +1 = `{}` / `{}` / `{}`; non-canonical qs bytes {}, qh bytes {}.",
        f.qs_all_minus1, f.qs_all_zero, f.qs_all_plus1, f.qh_all_minus1, f.qh_all_zero,
        f.qh_all_plus1, f.noncanonical_qs_count, f.noncanonical_qh_count
    );
    Some(o)
}

/// The `permutations` region.
fn render_permutations(s: &Spec) -> Option<String> {
    let mut o = String::new();
    let p = &s.permutations;
    let a = &p.perm48;
    let _ = writeln!(
        o,
        "- `perm48` ({}, {} heads, tile {} × group {}): `{}` — {}",
        a.kind,
        a.heads,
        a.tile,
        a.group,
        a.formula,
        cell(&a.meaning)
    );
    let _ = writeln!(
        o,
        "  - checks: {}",
        a.checks
            .iter()
            .map(|c| format!("perm48({}) = {}", c.i, c.perm))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let r = &p.perm_row;
    let _ = writeln!(
        o,
        "- `perm_row` ({}, head_dim {}): `{}`",
        r.kind, r.head_dim, r.formula
    );
    let _ = writeln!(
        o,
        "  - trap: {} (on {} rows: repeated {}, missing {})",
        cell(&r.trap),
        r.trap_counts.rows,
        r.trap_counts.repeated,
        r.trap_counts.missing
    );
    let q = &p.attn_q_deinterleave;
    let _ = writeln!(
        o,
        "- attn_q de-interleave ({} heads, blocks of {} rows, n % {} == 0): `{}`; refusal: `{}`",
        q.heads, q.block_rows, q.row_multiple, q.formula, q.error
    );
    let t = &p.tiled_to_grouped;
    let _ = writeln!(
        o,
        "- tiled → grouped: `{}` ({}); {}",
        t.formula,
        cell(&t.same_as),
        cell(&t.scatter_trap)
    );
    Some(o)
}

/// The `hadamard_objects` region.
fn render_hadamard_objects(s: &Spec) -> Option<String> {
    let mut o = String::new();
    let h = &s.hadamard;
    let p = &h.ssm_out_permutation;
    let _ = writeln!(
        o,
        "Transform `{}`: {}. Forward: `{}`. Inverse: `{}`.
",
        h.transform,
        cell(&h.definition),
        h.forward,
        h.inverse
    );
    let _ = writeln!(
        o,
        "`ssm_out` feature permutation (head_dim {}, {} key heads, rep {}): `{}`.
",
        p.head_dim, p.k_heads, p.rep, p.formula
    );
    let ao = &h.artifact_objects;
    table(
        &mut o,
        &["object", "format", "layout", "from"],
        [&ao.signs, &ao.widths].into_iter().map(|x| {
            vec![
                code(&x.name),
                code(&x.format),
                code(x.layout.as_str()),
                cell(&x.from),
            ]
        }),
    );
    Some(o)
}

/// The `hadamard_keys` region.
fn render_hadamard_keys(s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &["key", "type", "element", "expected / one of", "rule"],
        s.hadamard.metadata.iter().map(|k| {
            vec![
                code(&k.key),
                k.value_type.clone(),
                k.elem_type.clone().unwrap_or_else(|| "–".into()),
                k.expected
                    .as_ref()
                    .map(|v| code(&v.to_string()))
                    .or_else(|| k.profile_field.map(|f| format!("profile `{}`", f.name())))
                    .or_else(|| {
                        k.one_of
                            .as_ref()
                            .map(|v| v.iter().map(|x| code(x)).collect::<Vec<_>>().join(" / "))
                    })
                    .unwrap_or_else(|| "–".into()),
                cell(k.rule.as_deref().unwrap_or("")),
            ]
        }),
    );
    Some(o)
}

/// The `mapping_rules` region.
fn render_mapping_rules(_s: &Spec) -> Option<String> {
    let mut o = String::new();
    let m = mapping();
    table(
        &mut o,
        &[
            "target",
            "layers",
            "shape",
            "produced from",
            "rule",
            "evidence",
            "risk",
        ],
        m.rules.iter().map(|r| {
            vec![
                code(&r.target),
                layers(r.layers).into(),
                dims(&r.shape),
                cell(&produce(&r.produce)),
                cell(&r.rule),
                cell(&r.evidence),
                cell(&r.risk),
            ]
        }),
    );
    let _ = writeln!(
        o,
        "\nTernary GGUF types → ninfer formats: {}. Output `weights_id` `{}` (template `{}`). Produced namespaces: {}.",
        m.ternary_types
            .iter()
            .map(|(k, v)| format!("`{k}` → `{v}`"))
            .collect::<Vec<_>>()
            .join(", "),
        m.weights_id.output,
        m.weights_id.template,
        m.produced_namespaces
            .iter()
            .map(|p| code(p))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(o, "\n{}\n", m.borrowed_namespaces_note);
    table(
        &mut o,
        &["borrowed prefix", "why"],
        m.borrowed_namespaces
            .iter()
            .chain(&m.borrowed_in_produced)
            .map(|b| vec![code(&b.prefix), cell(&b.why)]),
    );
    Some(o)
}

/// The `sign_objects` region.
fn render_sign_objects(_s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &["object", "format", "shape", "from", "conversion"],
        mapping().sign_objects.iter().map(|so| {
            vec![
                code(&so.target),
                code(&so.format),
                dims(&so.shape),
                code(&so.from),
                cell(&so.convert),
            ]
        }),
    );
    Some(o)
}

/// The `gate_steps` region.
fn render_gate_steps(_s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &["step key", "title", "needs", "SKIP names"],
        gates().steps.iter().map(|st| {
            vec![
                code(st.step.as_str()),
                cell(&st.title),
                cell(st.needs.as_deref().unwrap_or("the artifact")),
                cell(st.skip_names.as_deref().unwrap_or("–")),
            ]
        }),
    );
    Some(o)
}

/// The `gate_thresholds` region.
fn render_gate_thresholds(_s: &Spec) -> Option<String> {
    let mut o = String::new();
    let t = &gates().thresholds;
    table(
        &mut o,
        &["threshold", "value"],
        [
            vec![
                "PQ2_0 first-code zero share".into(),
                format!(
                    "{} ± {} ({} σ)",
                    t.pq2_zero_share_target, t.pq2_zero_share_tolerance, t.pq2_zero_share_sigmas
                ),
            ],
            vec![
                "scale-plane median, open interval".into(),
                format!(
                    "({}, {})",
                    t.scale_median_open_interval.0, t.scale_median_open_interval.1
                ),
            ],
            vec![
                "embedding worst relative L2".into(),
                format!("≤ {}", t.embedding_rel_l2_max),
            ],
            vec![
                "embedding tokens".into(),
                format!("{} ..= {}", t.embedding_min_tokens, t.embedding_max_tokens),
            ],
            vec![
                "oracle, documented variant".into(),
                format!("rel L2 ≤ {}", t.oracle_documented_rel_l2_max),
            ],
            vec![
                "oracle, each wrong variant".into(),
                format!("rel L2 ≥ {}", t.oracle_wrong_rel_l2_min),
            ],
        ],
    );
    let _ = writeln!(o, "\n- zero share: {}", cell(&t.zero_share_why));
    let _ = writeln!(o, "- embedding: {}", cell(&t.embedding_why));
    let _ = writeln!(o, "- oracles: {}", cell(&t.oracle_why));
    Some(o)
}

/// The `assembly_controls` region.
fn render_assembly_controls(_s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &["negative control", "expected counts"],
        gates().assembly.negative_controls.iter().map(|c| {
            vec![
                code(&c.name),
                c.expect
                    .iter()
                    .map(|(k, v)| format!("{k} = {}", dim(v)))
                    .collect::<Vec<_>>()
                    .join(", "),
            ]
        }),
    );
    Some(o)
}

/// The `mutations` region.
fn render_mutations(_s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &[
            "mutation",
            "target",
            "object",
            "what it does",
            "gates that must fail",
        ],
        gates().mutations.iter().map(|m| {
            vec![
                code(m.kind.as_str()),
                m.target.to_string(),
                m.object.as_deref().map_or("–".into(), code),
                cell(&m.doc),
                m.must_fail
                    .iter()
                    .map(|g| code(g.as_str()))
                    .collect::<Vec<_>>()
                    .join(", "),
            ]
        }),
    );
    Some(o)
}

/// The `dump_formats` region.
fn render_dump_formats(_s: &Spec) -> Option<String> {
    let mut o = String::new();
    let d = crate::spec::dumps();
    let _ = writeln!(
        o,
        "Dump format version {}, element type `{}`, layout `{}`.\n",
        d.format_version, d.dtype, d.layout
    );
    let _ = writeln!(o, "Embedding dump manifest `{}`:\n", d.embedding.manifest);
    table(
        &mut o,
        &["field", "meaning"],
        d.embedding
            .manifest_fields
            .iter()
            .map(|(k, v)| vec![code(k), cell(v)]),
    );
    let _ = writeln!(
        o,
        "\nDefault files (default token count {}):\n",
        d.embedding.default_tokens
    );
    table(
        &mut o,
        &["file", "holds"],
        d.embedding
            .default_files
            .iter()
            .map(|(k, v)| vec![code(k), cell(v)]),
    );
    let _ = writeln!(
        o,
        "\nKernel-oracle manifest `{}`:\n",
        d.kernel_oracles.manifest
    );
    table(
        &mut o,
        &["field", "meaning"],
        d.kernel_oracles
            .manifest_fields
            .iter()
            .chain(&d.kernel_oracles.case_fields)
            .map(|(k, v)| vec![code(k), cell(v)]),
    );
    o.push('\n');
    table(
        &mut o,
        &["required case", "rotation", "width", "tokens", "object"],
        d.kernel_oracles.required_cases.iter().map(|c| {
            vec![
                code(&c.name),
                cell(&c.rotation),
                cell(&c.width),
                c.tokens.to_string(),
                code(&c.object),
            ]
        }),
    );
    Some(o)
}

/// The `error_classes` region.
fn render_error_classes(s: &Spec) -> Option<String> {
    let mut o = String::new();
    table(
        &mut o,
        &["class", "phase", "rule"],
        s.errors
            .classes
            .iter()
            .map(|c| vec![code(&c.id), c.phase.clone(), cell(&c.summary)]),
    );
    Some(o)
}

/// The `table_sources` region.
fn render_table_sources(s: &Spec) -> Option<String> {
    let mut o = String::new();
    let g = gates();
    let d = crate::spec::dumps();
    let m = mapping();
    let mut rows: Vec<Vec<String>> = vec![
        vec!["container.json".into(), cell(&s.container.source)],
        vec![
            "formats.json".into(),
            cell(&format!("{} — {}", s.formats.source, s.formats.note)),
        ],
        vec![
            "geometry.json".into(),
            cell(&format!(
                "{}; recorded disagreements: {}",
                s.geometry.source,
                s.geometry.disagreements.join(" / ")
            )),
        ],
        vec![
            "ggml_types.json".into(),
            cell(&format!("{} — {}", s.ggml.source, s.ggml.note)),
        ],
        vec![
            "gguf.json".into(),
            cell(&format!(
                "{}; notes: {}",
                s.gguf.source,
                s.gguf.notes.join(" / ")
            )),
        ],
        vec!["codecs.json".into(), cell(&s.codecs.source)],
        vec!["permutations.json".into(), cell(&s.permutations.source)],
        vec!["hadamard.json".into(), cell(&s.hadamard.source)],
        vec!["errors.json".into(), cell(&s.errors.doc)],
        vec![
            "gates.json".into(),
            cell(&format!("{} Mutations: {}", g.doc, g.mutations_note)),
        ],
        vec!["dumps.json".into(), cell(&d.doc)],
        vec![
            "mapping.json".into(),
            cell(&format!(
                "{} — {} Template order: {}",
                m.source, m.doc, m.template_order_note
            )),
        ],
    ];
    for (name, _) in crate::spec::PROFILES {
        if let Some(p) = crate::spec::profile(name) {
            rows.push(vec![format!("models/{name}.json"), cell(&p.doc)]);
        }
    }
    table(
        &mut o,
        &[
            "table",
            "provenance and notes (the table's own `_source` / `_doc` / notes)",
        ],
        rows,
    );
    Some(o)
}

/// The `kernels` region.
fn render_kernels(s: &Spec) -> Option<String> {
    let mut o = String::new();
    kernels_body(&mut o, &s.kernels);
    Some(o)
}

/// The kernel ABIs of `kernels.json`: one signature table per class, then the acceptance rules,
/// the reference kernels and the wrong variants with the cases each must fail.
fn kernels_body(o: &mut String, k: &crate::spec::KernelsTable) {
    let grid = |g: &[crate::spec::GridDim]| {
        let parts: Vec<String> = g.iter().map(ToString::to_string).collect();
        format!("({})", parts.join(", "))
    };
    for c in &k.classes {
        let sig: Vec<String> = c
            .args
            .iter()
            .map(|a| format!("{} {}", a.ty, a.name))
            .collect();
        let _ = writeln!(
            o,
            "**`{}`** — `extern \"C\" __global__ void <entry>({})`\n",
            c.class,
            sig.join(", ")
        );
        let _ = writeln!(
            o,
            "Launch: grid {}, block {:?}; acceptance `{}`; formats {}.\n",
            grid(&c.launch.grid),
            c.launch.block,
            c.acceptance,
            c.formats
                .iter()
                .map(|f| code(f))
                .collect::<Vec<_>>()
                .join(", ")
        );
        table(
            o,
            &["argument", "C type", "layout"],
            c.args.iter().map(|a| {
                vec![
                    code(&a.name),
                    code(&a.ty),
                    cell(a.layout.as_deref().unwrap_or("scalar")),
                ]
            }),
        );
        o.push('\n');
    }
    let a = &k.acceptance;
    let _ = writeln!(o, "Activations: {}\n", cell(&k.activations));
    table(
        o,
        &["acceptance", "rule", "why"],
        [
            vec!["`exact`".into(), cell(&a.exact.rule), cell(&a.exact.why)],
            vec![
                "`bounded`".into(),
                cell(&format!(
                    "{} (u = {:e}); NMSE = {} ≤ {:e}. {}",
                    a.bounded.bound,
                    a.bounded.unit_roundoff,
                    a.bounded.nmse,
                    a.bounded.nmse_max,
                    a.bounded.report
                )),
                cell(&format!("{} {}", a.bounded.bound_why, a.bounded.nmse_why)),
            ],
        ],
    );
    o.push('\n');
    table(
        o,
        &["reference kernel", "class", "formats", "source"],
        k.reference_kernels.iter().map(|r| {
            vec![
                code(&r.entry),
                code(&r.class),
                r.formats
                    .iter()
                    .map(|f| code(f))
                    .collect::<Vec<_>>()
                    .join(", "),
                code(&format!("src/cuda/kernels/{}", r.source)),
            ]
        }),
    );
    o.push('\n');
    let p = &k.precision;
    let _ = writeln!(o, "Precision modes: {}\n", cell(&p.doc));
    table(
        o,
        &["mode", "x", "y", "when"],
        p.modes
            .iter()
            .map(|m| vec![code(&m.mode), code(&m.x), code(&m.y), cell(&m.use_)]),
    );
    o.push('\n');
    for (what, text) in [
        ("Combining", &p.combine),
        ("Exact classes", &p.exact_rule),
        ("Bounded classes", &p.bounded_rule),
        ("NMSE", &p.nmse_rule),
        ("q8_1 slack", &p.q8_1_slack),
        ("Negative controls", &p.negative_controls),
    ] {
        let _ = writeln!(o, "- {what}: {}", cell(text));
    }
    o.push('\n');
    let _ = writeln!(o, "ABI sidecar: {}\n", cell(&k.sidecar));
    if let Some(doc) = k.bindings.get("_doc").and_then(|v| v.as_str()) {
        let _ = writeln!(o, "Bindings: {}\n", cell(doc));
    }
    let names = |v: &serde_json::Value, key: &str| -> String {
        v.get(key)
            .and_then(|x| x.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str())
                    .map(code)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };
    table(
        o,
        &["class", "buffers", "scalars"],
        k.bindings
            .iter()
            .filter(|(c, _)| !c.starts_with('_'))
            .map(|(c, v)| vec![code(c), names(v, "pointers"), names(v, "scalars")]),
    );
    o.push('\n');
    let kv = &crate::spec::get().kernel_variants;
    let _ = writeln!(
        o,
        "{} wrong variants and {} correct-but-unusual kernels are listed in `spec/kernel_variants.json` (their verdicts: `conformance/KERNELS.md`).",
        kv.wrong_variants.len(),
        kv.unusual_correct.len()
    );
    o.push('\n');
    let _ = writeln!(
        o,
        "Compile tier: NVRTC for {} ({}). Host tier: `{}` with {}, timeout {} s. Guard bands: {} f32 of `{}` on each side of every output; {}.",
        k.compile.archs.iter().map(|a| code(a)).collect::<Vec<_>>().join(", "),
        cell(&k.compile.nvrtc),
        cell(&k.host.compiler),
        k.host.flags.iter().map(|f| code(f)).collect::<Vec<_>>().join(" "),
        k.host.timeout_s,
        k.guard.elems,
        k.guard.bits,
        cell(&k.guard.rule)
    );
}

fn yes(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

/// A generated region found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The region's name, as in its `<!-- BEGIN GENERATED: <name> -->` marker.
    pub name: String,
    /// Byte range of the body (between the end of the BEGIN line and the start of the END marker).
    pub body: std::ops::Range<usize>,
}

/// Finds the generated regions of a document; errors on unbalanced or unknown markers.
pub fn regions(doc: &str) -> Result<Vec<Region>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = doc[at..].find(BEGIN) {
        let start = at + i;
        // Only a marker that opens a line counts; prose may quote the marker syntax.
        if start > 0 && doc.as_bytes()[start - 1] != b'\n' {
            at = start + BEGIN.len();
            continue;
        }
        let name_start = start + BEGIN.len();
        let close = doc[name_start..]
            .find("-->")
            .ok_or_else(|| format!("unterminated BEGIN marker at byte {start}"))?;
        let name = doc[name_start..name_start + close].trim().to_string();
        if region_known(&name).is_none() {
            return Err(format!("unknown generated region '{name}'"));
        }
        let line_end = doc[name_start..]
            .find('\n')
            .map(|j| name_start + j + 1)
            .ok_or_else(|| format!("region '{name}': BEGIN marker is the last line"))?;
        let end = doc[line_end..]
            .match_indices(END)
            .map(|(j, _)| line_end + j)
            .find(|&e| doc.as_bytes()[e - 1] == b'\n')
            .ok_or_else(|| format!("region '{name}' has no END marker"))?;
        if doc[line_end..end].contains(&format!("\n{BEGIN}")) {
            return Err(format!(
                "region '{name}' is not closed before the next BEGIN"
            ));
        }
        out.push(Region {
            name,
            body: line_end..end,
        });
        at = end + END.len();
    }
    Ok(out)
}

fn region_known(name: &str) -> Option<&'static str> {
    RegionId::from_name(name).map(RegionId::name)
}

/// The document with every generated region re-rendered from the tables.
pub fn apply(doc: &str) -> Result<String, String> {
    let mut out = String::with_capacity(doc.len());
    let mut last = 0;
    for r in regions(doc)? {
        out.push_str(&doc[last..r.body.start]);
        out.push('\n');
        let body = region(&r.name).ok_or_else(|| {
            format!(
                "region '{}' cannot be rendered (not a known region, or its table rows are \
                 inconsistent)",
                r.name
            )
        })?;
        out.push_str(&body);
        out.push('\n');
        last = r.body.end;
    }
    out.push_str(&doc[last..]);
    Ok(out)
}

/// Names of the regions whose committed text differs from the rendered one.
pub fn stale_regions(doc: &str) -> Result<Vec<String>, String> {
    let fresh = apply(doc)?;
    if fresh == doc {
        return Ok(Vec::new());
    }
    let a = regions(doc)?;
    let b = regions(&fresh)?;
    Ok(a.iter()
        .zip(&b)
        .filter(|(x, y)| doc[x.body.clone()] != fresh[y.body.clone()])
        .map(|(x, _)| x.name.clone())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_region_renders() {
        for r in REGIONS {
            assert!(region(r).is_some_and(|t| !t.is_empty()), "{r}");
        }
        assert!(region("no_such_region").is_none());
    }

    #[test]
    fn the_region_table_names_each_region_once_and_parses_back() {
        assert_eq!(RegionId::ALL.len(), REGIONS.len());
        let mut seen = std::collections::BTreeSet::new();
        for (r, name) in RegionId::ALL.iter().zip(REGIONS) {
            assert_eq!(r.name(), *name);
            assert_eq!(RegionId::from_name(name), Some(*r));
            assert!(seen.insert(*name), "{name} twice");
        }
        // Names are matched exactly: no case folding, no unknown names.
        assert_eq!(RegionId::from_name("Kernels"), None);
        assert_eq!(RegionId::from_name("kernels "), None);
        assert!(apply("<!-- BEGIN GENERATED: nope -->\nx\n<!-- END GENERATED -->\n").is_err());
    }

    #[test]
    fn apply_is_idempotent_and_detects_hand_edits() {
        let doc = format!("intro\n{BEGIN}error_classes -->\nstale\n{END}\ntail\n");
        let once = apply(&doc).unwrap();
        assert_eq!(apply(&once).unwrap(), once);
        assert_eq!(
            stale_regions(&doc).unwrap(),
            vec!["error_classes".to_string()]
        );
        assert!(stale_regions(&once).unwrap().is_empty());
        let edited = once.replacen("io.read", "io.reed", 1);
        assert_eq!(
            stale_regions(&edited).unwrap(),
            vec!["error_classes".to_string()]
        );
    }

    #[test]
    fn malformed_markers_are_errors() {
        assert!(regions(&format!("{BEGIN}nope -->\n{END}\n")).is_err());
        assert!(regions(&format!("{BEGIN}errors_classes_x -->\n")).is_err());
        assert!(regions(&format!("{BEGIN}error_classes -->\nno end\n")).is_err());
    }
}

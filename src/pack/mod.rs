//! The packer: GGUF + groupwise-int template → folded-ternary `.ninfer`, driven by
//! `spec/mapping.json`. It walks the template's object list; each object is borrowed verbatim
//! or produced by its rule (ternary bytes move into planes verbatim — never dequantized), then
//! the two sign objects are appended. Output streams from memory maps with bounded buffers and
//! is renamed into place only after it re-opens and validates.

pub mod dense;
pub mod preflight;
pub mod rows;
pub mod source;
pub mod unpack;

use crate::error::{Error, ErrorClass, Result};
use crate::geometry::{row_split_geometry, Plane, RowSplitGeometry};
use crate::gguf::Gguf;
use crate::mapping::{is_borrowed, produced_objects};
use crate::ninfer::{plan, Artifact, Directory, Identity, ObjectBody, PlannedObject};
use crate::planes::{append_plane_rows, BlockLayout};
use crate::spec::{self, mapping, ModelProfile, NumericFormat, Produce, Rule};
use rows::{target_rows, RowRef};
use std::io::Write;
use std::path::Path;

/// How one output object is made.
#[derive(Debug)]
pub enum Job {
    /// Copy the template object with this index.
    Borrow(usize),
    /// Gather rows of ternary GGUF tensors into planes.
    Ternary {
        sources: Vec<String>,
        rows: Vec<RowRef>,
        geom: RowSplitGeometry,
    },
    /// A dense transform of one GGUF tensor.
    Dense(Rule),
    /// `text/hadamard_signs` (FP32) or `text/hadamard_widths` (I32).
    Signs(Vec<i32>),
    Widths(Vec<i32>),
}

/// Everything decided before a byte is written.
pub struct PackPlan {
    pub profile: ModelProfile,
    pub format: &'static NumericFormat,
    pub directory: Directory,
    pub jobs: Vec<Job>,
}

/// Options of `pack`.
#[derive(Clone, Debug, Default)]
pub struct PackOptions {
    /// Produce only these layers' objects (a filter over the layers the GGUF holds).
    pub layers: Option<Vec<u64>>,
    /// The profile by name (`--profile`), for reduced GGUFs whose hparams do not identify it.
    pub profile: Option<String>,
}

fn template_err(field: impl Into<String>, detail: impl Into<String>) -> Error {
    Error::new(ErrorClass::PackTemplate, field, detail)
}

/// Checks the template kind and plans every output object.
pub fn plan_pack(g: &Gguf<'_>, template: &Artifact<'_>, opts: &PackOptions) -> Result<PackPlan> {
    let m = mapping();
    let tid = &template.directory.identity;
    if tid.weights_id != m.weights_id.template {
        return Err(template_err(
            "identity.weights_id",
            format!("template weights_id is '{}'; the packer maps a '{}' template (an nvfp4 or ternary artifact is not a template)", tid.weights_id, m.weights_id.template),
        ));
    }
    let (profile, held) = source::resolve_profile(g, opts.profile.as_deref())?;
    if let Some(keep) = &opts.layers {
        if let Some(l) = keep.iter().find(|l| !held.contains(l)) {
            return Err(Error::new(
                ErrorClass::PackProfile,
                "--layers",
                format!("layer {l} is not in the GGUF (it holds layers {held:?})"),
            ));
        }
    }
    let format = source::ternary_type(g)?;
    let (widths, signs) = source::hadamard_signs(g)?;
    check_source_tensors(g, &profile, &held, format)?;
    let produced = crate::mapping::produced_objects_in(&profile, &held);
    // Objects of layers a reduced GGUF does not hold are left out like --layers leaves them out.
    let all_produced = produced_objects(&profile);
    let mut objects = Vec::new();
    let mut jobs = Vec::new();
    for (ti, o) in template.directory.objects.iter().enumerate() {
        if is_borrowed(&o.name) {
            objects.push(PlannedObject {
                name: o.name.clone(),
                body: o.body.clone(),
                resource_bytes: o.bytes,
            });
            jobs.push(Job::Borrow(ti));
            continue;
        }
        let Some(target) = produced.iter().find(|t| t.name == o.name) else {
            if all_produced.iter().any(|t| t.name == o.name) {
                continue;
            }
            let section = o.name.split('/').nth(3).unwrap_or("");
            return Err(template_err(o.name.clone(), format!("unmapped {section} object '{}': no rule in spec/mapping.json produces it and it is not borrowed", o.name)));
        };
        if o.shape() != target.shape.as_slice() {
            return Err(template_err(
                o.name.clone(),
                format!(
                    "template shape {:?}; the mapping produces {:?}",
                    o.shape(),
                    target.shape
                ),
            ));
        }
        if let (Some(l), Some(keep)) = (target.layer, &opts.layers) {
            if !keep.contains(&l) {
                continue;
            }
        }
        let rule = target.rule.clone().expect("produced objects have rules");
        match &rule.produce {
            Produce::TernaryRows { parts } => {
                let mut src_rows = Vec::new();
                let mut k = None;
                for p in parts {
                    let t = g.require_tensor(&p.src)?;
                    if spec::get()
                        .ternary_format_for_ggml(&t.ggml.name)
                        .map(|f| f.name.as_str())
                        != Some(format.name.as_str())
                    {
                        return Err(Error::at(
                            ErrorClass::PackMixedTernary,
                            t.info_offset,
                            t.name,
                            format!(
                                "{} is {}, the artifact's ternary format is {}",
                                t.name, t.ggml.name, format.name
                            ),
                        ));
                    }
                    if t.n_dims != 2 || *k.get_or_insert(t.ne[0]) != t.ne[0] {
                        return Err(Error::at(
                            ErrorClass::GgufTensorShape,
                            t.info_offset,
                            t.name,
                            format!("ne={:?} does not fit {} (k = {:?})", t.dims(), o.name, k),
                        ));
                    }
                    if t.ne[0] % 128 != 0 {
                        return Err(Error::at(
                            ErrorClass::GgufTensorBlockMultiple,
                            t.info_offset,
                            t.name,
                            format!("ne[0] = {} is not a multiple of 128", t.ne[0]),
                        ));
                    }
                    src_rows.push(t.ne[1]);
                }
                let rows = target_rows(&profile, parts, &src_rows)?;
                let n = target.shape[0];
                if rows.len() as u64 != n {
                    return Err(template_err(
                        o.name.clone(),
                        format!("rule yields {} rows, object has {n}", rows.len()),
                    ));
                }
                if k != Some(target.shape[1]) {
                    return Err(template_err(
                        o.name.clone(),
                        format!("sources have k = {k:?}, object has {}", target.shape[1]),
                    ));
                }
                objects.push(PlannedObject::tensor(
                    o.name.clone(),
                    target.shape.clone(),
                    &format.name,
                    "row-split-k128-v1",
                ));
                jobs.push(Job::Ternary {
                    sources: parts.iter().map(|p| p.src.clone()).collect(),
                    rows,
                    geom: row_split_geometry(format, n, target.shape[1])?,
                });
            }
            dense => {
                let f = if matches!(dense, Produce::HeadVector { .. }) {
                    "FP32"
                } else {
                    "BF16"
                };
                objects.push(PlannedObject::tensor(
                    o.name.clone(),
                    target.shape.clone(),
                    f,
                    "contiguous-le-v1",
                ));
                jobs.push(Job::Dense(rule));
            }
        }
    }
    for t in &produced {
        if template.directory.find(&t.name).is_none() {
            return Err(template_err(
                t.name.clone(),
                "the template lacks this object (packing against the wrong template?)",
            ));
        }
    }
    let so = &m.sign_objects;
    objects.push(PlannedObject::tensor(
        so[0].target.clone(),
        vec![signs.len() as u64],
        &so[0].format,
        "contiguous-le-v1",
    ));
    jobs.push(Job::Signs(signs));
    objects.push(PlannedObject::tensor(
        so[1].target.clone(),
        vec![widths.len() as u64],
        &so[1].format,
        "contiguous-le-v1",
    ));
    jobs.push(Job::Widths(widths));
    let identity = Identity {
        model_id: tid.model_id.clone(),
        weights_id: m.weights_id.output.clone(),
    };
    let directory = plan(identity, objects)?;
    Ok(PackPlan {
        profile,
        format,
        directory,
        jobs,
    })
}

/// Every tensor the profile's model has must exist with its ne and a fitting type.
fn check_source_tensors(
    g: &Gguf<'_>,
    profile: &ModelProfile,
    layers: &[u64],
    format: &NumericFormat,
) -> Result<()> {
    for want in crate::mapping::gguf_tensors_in(profile, layers) {
        let t = g.require_tensor(&want.name)?;
        if t.dims() != want.ne.as_slice() {
            return Err(Error::at(
                ErrorClass::GgufTensorShape,
                t.info_offset,
                t.name,
                format!(
                    "{} has ne={:?}; profile {} expects ne={:?}",
                    t.name,
                    t.dims(),
                    profile.name,
                    want.ne
                ),
            ));
        }
        let fits = match want.kind.as_str() {
            "ternary" => spec::get()
                .ternary_format_for_ggml(&t.ggml.name)
                .is_some_and(|f| f.name == format.name),
            _ => matches!(t.ggml.name.as_str(), "F32" | "F16" | "BF16"),
        };
        if !fits {
            let class = if want.kind == "ternary" {
                ErrorClass::PackMixedTernary
            } else {
                ErrorClass::GgufTensorShape
            };
            return Err(Error::at(
                class,
                t.info_offset,
                t.name,
                format!(
                    "{} is {}; expected {}",
                    t.name,
                    t.ggml.name,
                    if want.kind == "ternary" {
                        format.name.as_str()
                    } else {
                        "F32, F16 or BF16"
                    }
                ),
            ));
        }
    }
    Ok(())
}

/// Buffered plane writer: flushes every few MiB so memory stays bounded.
struct Chunked<'w> {
    w: &'w mut dyn Write,
    buf: Vec<u8>,
    written: u64,
}

impl Chunked<'_> {
    const CAP: usize = 8 << 20;
    fn maybe_flush(&mut self) -> Result<()> {
        if self.buf.len() >= Self::CAP {
            self.flush()?;
        }
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        self.w
            .write_all(&self.buf)
            .map_err(crate::fsio::write_err("artifact"))?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }
    fn pad_to(&mut self, at: u64) -> Result<()> {
        let have = self.written + self.buf.len() as u64;
        self.buf.resize(self.buf.len() + (at - have) as usize, 0);
        self.maybe_flush()
    }
}

fn write_ternary(
    g: &Gguf<'_>,
    format: &NumericFormat,
    sources: &[String],
    rows: &[RowRef],
    geom: &RowSplitGeometry,
    w: &mut dyn Write,
) -> Result<()> {
    let layout = BlockLayout::for_format(format)?;
    let tensors: Vec<_> = sources
        .iter()
        .map(|s| g.require_tensor(s))
        .collect::<Result<_>>()?;
    let data: Vec<&[u8]> = tensors.iter().map(|t| g.tensor_data(t)).collect();
    let row_bytes: Vec<usize> = tensors
        .iter()
        .map(|t| (t.ne[0] / 128) as usize * layout.block_bytes)
        .collect();
    let mut out = Chunked {
        w,
        buf: Vec::with_capacity(Chunked::CAP + (1 << 16)),
        written: 0,
    };
    for plane in Plane::ALL {
        out.pad_to(geom.plane_offset(plane))?;
        for r in rows {
            let rb = row_bytes[r.part];
            let src = &data[r.part][r.row as usize * rb..(r.row as usize + 1) * rb];
            append_plane_rows(&layout, geom, plane, src, &mut out.buf)?;
            out.maybe_flush()?;
        }
    }
    out.flush()
}

fn write_dense(p: &ModelProfile, g: &Gguf<'_>, rule: &Rule) -> Result<Vec<u8>> {
    Ok(match &rule.produce {
        Produce::Norm { src, minus_one } => dense::norm(g, g.require_tensor(src)?, *minus_one)?,
        Produce::HeadVector { src, func } => {
            dense::head_vector(p, g, g.require_tensor(src)?, func)?
        }
        Produce::HeadRows { src } => dense::head_rows(p, g, g.require_tensor(src)?)?,
        Produce::Conv1d { src } => dense::conv1d(p, g, g.require_tensor(src)?)?,
        Produce::TernaryRows { .. } => unreachable!("ternary rules are Job::Ternary"),
    })
}

/// Streams the planned artifact into `w`; `progress` gets byte counts.
pub fn write_plan(
    plan: &PackPlan,
    g: &Gguf<'_>,
    template: &Artifact<'_>,
    w: &mut dyn Write,
    progress: &mut dyn FnMut(u64),
) -> Result<()> {
    let werr = crate::fsio::write_err("artifact");
    crate::ninfer::writer::write_to(w, &plan.directory, |i, o, w| {
        match &plan.jobs[i] {
            Job::Borrow(ti) => {
                let src = template.object_bytes(&template.directory.objects[*ti]);
                for c in src.chunks(8 << 20) {
                    w.write_all(c).map_err(&werr)?;
                }
            }
            Job::Ternary {
                sources,
                rows,
                geom,
            } => write_ternary(g, plan.format, sources, rows, geom, w)?,
            Job::Dense(rule) => w
                .write_all(&write_dense(&plan.profile, g, rule)?)
                .map_err(&werr)?,
            Job::Signs(v) => w
                .write_all(
                    &v.iter()
                        .flat_map(|&s| (s as f32).to_le_bytes())
                        .collect::<Vec<u8>>(),
                )
                .map_err(&werr)?,
            Job::Widths(v) => w
                .write_all(&v.iter().flat_map(|s| s.to_le_bytes()).collect::<Vec<u8>>())
                .map_err(&werr)?,
        }
        progress(o.bytes);
        Ok(())
    })
}

/// Packs into memory (small models, tests).
pub fn pack_bytes(gguf: &[u8], template: &[u8], opts: &PackOptions) -> Result<Vec<u8>> {
    let g = crate::gguf::parse(gguf, crate::gguf::Mode::Strict)?;
    let t = Artifact::parse(template)?;
    let plan = plan_pack(&g, &t, opts)?;
    let mut out = Vec::new();
    write_plan(&plan, &g, &t, &mut out, &mut |_| {})?;
    Ok(out)
}

/// Packs to `output` atomically (temporary file, re-open + validate, rename).
pub fn pack_file(
    gguf: &Path,
    template: &Path,
    output: &Path,
    opts: &PackOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<Directory> {
    let gm = crate::fsio::map_file(gguf)?;
    let tm = crate::fsio::map_file(template)?;
    let g = crate::gguf::parse(&gm, crate::gguf::Mode::Strict)?;
    let t = Artifact::parse(&tm)?;
    let plan = plan_pack(&g, &t, opts)?;
    crate::fsio::write_atomic(
        output,
        |w| write_plan(&plan, &g, &t, w, progress),
        |tmp| {
            let map = crate::fsio::map_file(tmp)?;
            let a = Artifact::parse(&map)?;
            if a.directory != plan.directory {
                return Err(Error::new(
                    ErrorClass::IoWrite,
                    tmp.display().to_string(),
                    "re-opened directory differs from the plan",
                ));
            }
            Ok(())
        },
    )?;
    Ok(plan.directory)
}

/// Names of the objects a body of this kind would hold (for reports).
pub fn describe(o: &ObjectBody) -> String {
    match o {
        ObjectBody::Tensor {
            format,
            layout,
            shape,
        } => format!("{format} {layout} {shape:?}"),
        ObjectBody::Resource { encoding } => encoding.clone(),
    }
}

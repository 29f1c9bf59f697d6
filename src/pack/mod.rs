//! The packer: GGUF + groupwise-int template → folded-ternary `.ninfer`, driven by
//! `spec/mapping.json`. It walks the template's object list; each object is borrowed verbatim
//! or produced by its rule (ternary bytes move into planes verbatim — never dequantized), then
//! the two sign objects are appended. Output streams from memory maps with bounded buffers and
//! is renamed into place only after it re-opens and validates.

pub mod dense;
pub mod hadamard_keys;
pub mod plan;
pub mod preflight;
pub mod rows;
pub mod source;
pub mod summary;
pub mod unpack;

use crate::error::{Error, ErrorClass, Result};
use crate::geometry::{Plane, RowSplitGeometry};
use crate::gguf::Gguf;
use crate::ninfer::{Artifact, Directory};
use crate::planes::{append_plane_rows, BlockLayout};
use crate::spec::{ModelProfile, NumericFormat, Produce, Rule};
#[cfg(feature = "internals")]
pub use plan::SourceFacts;
pub use plan::{check_source, plan_pack, Job, PackOptions, PackPlan};
use rows::RowRef;
use std::io::Write;
use std::path::Path;

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
            dense::head_vector(p, g, g.require_tensor(src)?, *func)?
        }
        Produce::HeadRows { src } => dense::head_rows(p, g, g.require_tensor(src)?)?,
        Produce::Conv1d { src } => dense::conv1d(p, g, g.require_tensor(src)?)?,
        Produce::TernaryRows { .. } => {
            return Err(Error::new(
                ErrorClass::InternalInvariant,
                rule.target.clone(),
                "a ternary rule reached the dense writer (ternary rules are Job::Ternary)",
            ))
        }
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

/// The mapped GGUF and template of one pack (mapped once; a [`Packer`] parses them).
pub struct PackInputs {
    gguf: crate::fsio::Mapped,
    template: crate::fsio::Mapped,
}

impl PackInputs {
    /// Maps both input files.
    pub fn map(gguf: &Path, template: &Path) -> Result<PackInputs> {
        Ok(PackInputs {
            gguf: crate::fsio::map_file(gguf)?,
            template: crate::fsio::map_file(template)?,
        })
    }
}

/// One pack, parsed and planned once: [`Packer::open`], then [`Packer::size`] (for a progress
/// bar) and [`Packer::write`].
pub struct Packer<'a> {
    gguf: Gguf<'a>,
    template: Artifact<'a>,
    plan: PackPlan,
}

impl<'a> Packer<'a> {
    /// Parses the GGUF (strict) and the template and plans the output.
    pub fn open(inputs: &'a PackInputs, opts: &PackOptions) -> Result<Packer<'a>> {
        let gguf = crate::gguf::parse(&inputs.gguf, crate::gguf::Mode::Strict)?;
        let template = Artifact::parse(&inputs.template)?;
        let plan = plan_pack(&gguf, &template, opts)?;
        Ok(Packer {
            gguf,
            template,
            plan,
        })
    }

    /// The planned output's size in bytes.
    pub fn size(&self) -> u64 {
        crate::ninfer::writer::file_size(&self.plan.directory)
    }

    /// The planned output directory.
    #[cfg(feature = "internals")]
    pub fn directory(&self) -> &Directory {
        &self.plan.directory
    }

    /// What the plan borrows, skips and leaves out.
    pub fn summary(&self) -> &summary::PackSummary {
        &self.plan.summary
    }

    /// Writes to `output` atomically (temporary file, re-open + validate, rename); returns the
    /// directory written.
    pub fn write(self, output: &Path, progress: &mut dyn FnMut(u64)) -> Result<Directory> {
        let Packer {
            gguf,
            template,
            plan,
        } = self;
        crate::fsio::write_atomic(
            output,
            |w| write_plan(&plan, &gguf, &template, w, progress),
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
}

/// Packs to `output` atomically: [`PackInputs::map`], [`Packer::open`], [`Packer::write`].
pub fn pack_file(
    gguf: &Path,
    template: &Path,
    output: &Path,
    opts: &PackOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<Directory> {
    let inputs = PackInputs::map(gguf, template)?;
    Packer::open(&inputs, opts)?.write(output, progress)
}

/// Names of the objects a body of this kind would hold (for reports).
#[cfg(feature = "internals")]
pub fn describe(o: &crate::ninfer::ObjectBody) -> String {
    match o {
        crate::ninfer::ObjectBody::Tensor {
            format,
            layout,
            shape,
        } => format!("{format} {layout} {shape:?}"),
        crate::ninfer::ObjectBody::Resource { encoding } => encoding.clone(),
    }
}

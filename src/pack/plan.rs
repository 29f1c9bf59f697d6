//! Everything `pack` decides before a byte is written. [`check_source`] is the one set of
//! checks on the GGUF alone (profile, hyper-parameters, layers, ternary type, Hadamard
//! metadata, tensor list) that both `pack` and `pack --check` run; [`plan_pack`] adds the
//! template and plans every output object.

use super::hadamard_keys::{check_hadamard, HadamardSigns};
use super::rows::{target_rows, RowRef};
use super::source;
use super::summary::PackSummary;
use crate::codec::TernaryType;
use crate::error::{Error, ErrorClass, Result};
use crate::geometry::{row_split_geometry, RowSplitGeometry};
use crate::gguf::{Gguf, TensorInfo};
use crate::mapping::{
    is_borrowed, minimal_keeps_borrowed, namespace, produced_objects, producible_objects,
    TargetObject,
};
use crate::ninfer::{plan, Artifact, Directory, Identity, Object, PlannedObject};
use crate::spec::{self, mapping, LayoutId, ModelProfile, NumericFormat, Produce, RowPart, Rule};

/// How one output object is made.
#[derive(Debug)]
pub enum Job {
    /// Copy the template object with this index.
    Borrow(usize),
    /// Gather rows of ternary GGUF tensors into planes.
    Ternary {
        /// The source tensors, in the rule's part order.
        sources: Vec<String>,
        /// For every target row, its part and source row.
        rows: Vec<RowRef>,
        /// The plane geometry of the target object.
        geom: RowSplitGeometry,
    },
    /// A dense transform of one GGUF tensor.
    Dense(Rule),
    /// `text/hadamard_signs` (FP32 of these ±1 values).
    Signs(Vec<i32>),
    /// `text/hadamard_widths` (I32, the widths themselves).
    Widths(Vec<i32>),
}

/// Everything decided before a byte is written.
pub struct PackPlan {
    /// The model profile the GGUF is.
    pub profile: ModelProfile,
    /// The artifact's one ternary format.
    pub format: &'static NumericFormat,
    /// The output directory, ranges laid out.
    pub directory: Directory,
    /// One job per directory object, in the same order.
    pub jobs: Vec<Job>,
    /// What was borrowed, skipped and left out, for the run summary.
    pub summary: PackSummary,
}

/// Options of `pack`.
#[derive(Clone, Debug, Default)]
pub struct PackOptions {
    /// Produce only these layers' objects (a filter over the layers the GGUF holds).
    pub layers: Option<Vec<u64>>,
    /// The profile by name (`--profile`), for reduced GGUFs whose hparams do not identify it.
    pub profile: Option<String>,
    /// Borrowed namespaces to leave out (`--skip vision,mtp,dflash2`).
    pub skip: Vec<String>,
    /// The minimal artifact (`--minimal`): frontend, the sign table and one full-attention
    /// layer (the first selected), as tools/pack.py's `layer3` mode writes.
    pub minimal: bool,
}

/// What the GGUF is, established by [`check_source`].
pub struct SourceFacts {
    /// The model profile.
    pub profile: ModelProfile,
    /// The layers the GGUF holds, ascending.
    pub held: Vec<u64>,
    /// The layers whose objects are produced (`--layers`, or all held), ascending.
    pub selected: Vec<u64>,
    /// The single ternary format of the GGUF.
    pub format: &'static NumericFormat,
    /// The checked `prism.hadamard.*` sign arrays.
    pub signs: HadamardSigns,
    /// The objects this GGUF can produce (held layers; globals whose sources it holds).
    pub producible: Vec<TargetObject>,
    /// Metadata keys the GGUF lacks that no output byte depends on.
    pub absent_keys: Vec<String>,
}

/// The checks on the GGUF alone, shared by `pack` and `pack --check`.
pub fn check_source(gguf: &Gguf<'_>, opts: &PackOptions) -> Result<SourceFacts> {
    if gguf.tensors.is_empty() {
        return Err(Error::at(
            ErrorClass::PackProfile,
            gguf.tensor_info_offset,
            "tensors",
            "the GGUF holds no tensor at all (its tensor-info table is empty); there is nothing to pack",
        ));
    }
    let (profile, held) = source::resolve_profile(gguf, opts.profile.as_deref())?;
    let selected = select_layers(&held, opts.layers.as_deref())?;
    let format = source::ternary_format(gguf)?;
    let producible = producible_objects(&profile, &held, &|n| gguf.tensor(n).is_some());
    check_source_tensors(gguf, &profile, &held, &producible, format)?;
    let hadamard = check_hadamard(gguf, &profile)?;
    let mut absent_keys = crate::mapping::profile::absent_hparams(gguf, &profile);
    absent_keys.extend(hadamard.absent);
    Ok(SourceFacts {
        profile,
        held,
        selected,
        format,
        signs: hadamard.signs,
        producible,
        absent_keys,
    })
}

/// `--layers`: non-empty, no duplicates, each a layer the GGUF holds.
fn select_layers(held: &[u64], wanted: Option<&[u64]>) -> Result<Vec<u64>> {
    let Some(wanted) = wanted else {
        return Ok(held.to_vec());
    };
    let refuse = |detail: String| Error::new(ErrorClass::PackProfile, "--layers", detail);
    if wanted.is_empty() {
        return Err(refuse("no layer named".into()));
    }
    let mut selected = wanted.to_vec();
    selected.sort_unstable();
    if let Some(pair) = selected.windows(2).find(|w| w[0] == w[1]) {
        return Err(refuse(format!("layer {} is named twice", pair[0])));
    }
    if let Some(l) = selected.iter().find(|l| !held.contains(l)) {
        return Err(refuse(format!(
            "layer {l} is not in the GGUF (it holds layers {held:?})"
        )));
    }
    Ok(selected)
}

fn template_err(field: impl Into<String>, detail: impl Into<String>) -> Error {
    Error::new(ErrorClass::PackTemplate, field, detail)
}

/// Checks the template kind and the GGUF, then plans every output object.
pub fn plan_pack(gguf: &Gguf<'_>, template: &Artifact<'_>, opts: &PackOptions) -> Result<PackPlan> {
    check_template_kind(template)?;
    let facts = check_source(gguf, opts)?;
    check_skip(&opts.skip, template)?;
    let minimal_layer = match opts.minimal {
        true => Some(minimal_layer(&facts)?),
        false => None,
    };
    let produced = &facts.producible;
    // Every name a rule may produce: objects of layers (or globals) the GGUF does not hold are
    // left out like --layers leaves them out, not refused as unmapped.
    let all_produced = produced_objects(&facts.profile);
    // Looked up once per template object: hash maps keep the plan linear in the object count
    // (reversed, so that the first of a repeated name wins, as a search would find it).
    let by_name: std::collections::HashMap<&str, &TargetObject> = produced
        .iter()
        .rev()
        .map(|t| (t.name.as_str(), t))
        .collect();
    let all_names: std::collections::HashSet<&str> =
        all_produced.iter().map(|t| t.name.as_str()).collect();
    let mut planned = Planned::default();
    let mut summary = PackSummary {
        absent_keys: facts.absent_keys.clone(),
        minimal_layer,
        ..Default::default()
    };
    for (index, object) in template.directory.objects.iter().enumerate() {
        if is_borrowed(&object.name) {
            let ns = namespace(&object.name);
            // The minimal artifact borrows only the frontend (tools/pack.py layer3).
            let minimal_drop = minimal_layer.is_some() && !minimal_keeps_borrowed(&object.name);
            if opts.skip.iter().any(|s| s == ns) || minimal_drop {
                summary.count_skipped(ns);
                continue;
            }
            let copy = PlannedObject {
                name: object.name.clone(),
                body: object.body.clone(),
                resource_bytes: object.bytes,
            };
            planned.push(copy, Job::Borrow(index));
            summary.count_borrowed(ns, object.bytes);
            continue;
        }
        let Some(&target) = by_name.get(object.name.as_str()) else {
            if all_names.contains(object.name.as_str()) {
                summary.not_held += 1;
                continue;
            }
            return Err(unmapped(object));
        };
        check_template_shape(object, target)?;
        let wanted = match minimal_layer {
            Some(l) => target.layer == Some(l),
            None => target.layer.is_none_or(|l| facts.selected.contains(&l)),
        };
        if !wanted {
            summary.not_selected += 1;
            continue;
        }
        let (planned_object, job) = plan_produced(gguf, &facts, target)?;
        summary.produced += 1;
        planned.push(planned_object, job);
    }
    check_template_complete(template, produced)?;
    planned.push_sign_objects(&facts.signs)?;
    let identity = Identity {
        model_id: template.directory.identity.model_id.clone(),
        weights_id: mapping().weights_id.output.clone(),
    };
    Ok(PackPlan {
        profile: facts.profile,
        format: facts.format,
        directory: plan(identity, planned.objects)?,
        jobs: planned.jobs,
        summary,
    })
}

/// `--skip`: each name a borrowed namespace, known to spec/mapping.json or present in the
/// template (a misspelt name would otherwise filter nothing, silently).
fn check_skip(skip: &[String], template: &Artifact<'_>) -> Result<()> {
    let m = mapping();
    for name in skip {
        let refuse = |why: String| Error::new(ErrorClass::PackTemplate, "--skip", why);
        if crate::mapping::is_produced_namespace(name) {
            return Err(refuse(format!(
                "'{}' is produced from the GGUF, not borrowed; only borrowed namespaces can be skipped",
                name.escape_debug()
            )));
        }
        let known = m
            .borrowed_namespaces
            .iter()
            .any(|b| b.prefix.strip_suffix('/') == Some(name.as_str()));
        let in_template = template
            .directory
            .objects
            .iter()
            .any(|o| is_borrowed(&o.name) && namespace(&o.name) == name);
        if !known && !in_template {
            let mut have: Vec<&str> = template
                .directory
                .objects
                .iter()
                .filter(|o| is_borrowed(&o.name))
                .map(|o| namespace(&o.name))
                .collect();
            have.dedup();
            return Err(refuse(format!(
                "'{}' is neither a borrowed namespace of spec/mapping.json nor one of the template's ({})",
                name.escape_debug(),
                have.join(", ")
            )));
        }
    }
    Ok(())
}

/// The layer of `--minimal`: the first selected full-attention layer.
fn minimal_layer(facts: &SourceFacts) -> Result<u64> {
    crate::mapping::minimal_layer(&facts.profile, &facts.selected).ok_or_else(|| {
            Error::new(
                ErrorClass::PackProfile,
                "--minimal",
                format!(
                    "the minimal artifact holds one full-attention layer, and none of the selected layers {:?} is one",
                    facts.selected
                ),
            )
        })
}

/// The planned objects and their jobs, index-aligned.
#[derive(Default)]
struct Planned {
    objects: Vec<PlannedObject>,
    jobs: Vec<Job>,
}

impl Planned {
    fn push(&mut self, object: PlannedObject, job: Job) {
        self.objects.push(object);
        self.jobs.push(job);
    }

    fn push_sign_objects(&mut self, signs: &HadamardSigns) -> Result<()> {
        let [sign_obj, width_obj] = &mapping().sign_objects[..] else {
            return Err(Error::new(
                ErrorClass::InternalInvariant,
                "spec/mapping.json sign_objects",
                "the packer writes exactly two sign objects (a spec test keeps the table so)",
            ));
        };
        self.push(
            PlannedObject::tensor(
                sign_obj.target.clone(),
                vec![signs.values.len() as u64],
                &sign_obj.format,
                LayoutId::ContiguousLeV1,
            ),
            Job::Signs(signs.values.clone()),
        );
        self.push(
            PlannedObject::tensor(
                width_obj.target.clone(),
                vec![signs.widths.len() as u64],
                &width_obj.format,
                LayoutId::ContiguousLeV1,
            ),
            Job::Widths(signs.widths.clone()),
        );
        Ok(())
    }
}

fn check_template_kind(template: &Artifact<'_>) -> Result<()> {
    let want = &mapping().weights_id.template;
    let have = &template.directory.identity.weights_id;
    if have != want {
        return Err(template_err(
            "identity.weights_id",
            format!("template weights_id is '{have}'; the packer maps a '{want}' template (an nvfp4 or ternary artifact is not a template)"),
        ));
    }
    Ok(())
}

fn unmapped(object: &Object) -> Error {
    let section = object.name.split('/').nth(3).unwrap_or("");
    template_err(
        object.name.clone(),
        format!(
            "unmapped {section} object '{}': no rule in spec/mapping.json produces it and it is not borrowed",
            object.name
        ),
    )
}

fn check_template_shape(object: &Object, target: &TargetObject) -> Result<()> {
    if object.shape() != target.shape.as_slice() {
        return Err(template_err(
            object.name.clone(),
            format!(
                "template shape {:?}; the mapping produces {:?}",
                object.shape(),
                target.shape
            ),
        ));
    }
    Ok(())
}

fn check_template_complete(template: &Artifact<'_>, produced: &[TargetObject]) -> Result<()> {
    match produced
        .iter()
        .find(|t| template.directory.find(&t.name).is_none())
    {
        Some(t) => Err(template_err(
            t.name.clone(),
            "the template lacks this object (packing against the wrong template?)",
        )),
        None => Ok(()),
    }
}

/// The object and job of one produced (not borrowed) target.
fn plan_produced(
    gguf: &Gguf<'_>,
    facts: &SourceFacts,
    target: &TargetObject,
) -> Result<(PlannedObject, Job)> {
    let rule = target.rule.clone().ok_or_else(|| {
        Error::new(
            ErrorClass::InternalInvariant,
            target.name.clone(),
            "a produced object without a rule",
        )
    })?;
    match &rule.produce {
        Produce::TernaryRows { parts } => plan_ternary(gguf, facts, target, parts),
        dense => {
            let format = if matches!(dense, Produce::HeadVector { .. }) {
                "FP32"
            } else {
                "BF16"
            };
            let object = PlannedObject::tensor(
                target.name.clone(),
                target.shape.clone(),
                format,
                LayoutId::ContiguousLeV1,
            );
            Ok((object, Job::Dense(rule)))
        }
    }
}

fn plan_ternary(
    gguf: &Gguf<'_>,
    facts: &SourceFacts,
    target: &TargetObject,
    parts: &[RowPart],
) -> Result<(PlannedObject, Job)> {
    let mut src_rows = Vec::new();
    let mut k = None;
    for part in parts {
        let t = gguf.require_tensor(&part.src)?;
        check_ternary_part(t, facts.format, &target.name, &mut k)?;
        src_rows.push(t.ne[1]);
    }
    let rows = target_rows(&facts.profile, parts, &src_rows)?;
    let n = target.shape[0];
    if rows.len() as u64 != n {
        return Err(template_err(
            target.name.clone(),
            format!("rule yields {} rows, object has {n}", rows.len()),
        ));
    }
    if k != Some(target.shape[1]) {
        return Err(template_err(
            target.name.clone(),
            format!(
                "sources have k = {}, object has {}",
                k.map_or_else(|| "none".into(), |k| k.to_string()),
                target.shape[1]
            ),
        ));
    }
    let object = PlannedObject::tensor(
        target.name.clone(),
        target.shape.clone(),
        &facts.format.name,
        LayoutId::RowSplitK128V1,
    );
    let job = Job::Ternary {
        sources: parts.iter().map(|p| p.src.clone()).collect(),
        rows,
        geom: row_split_geometry(facts.format, n, target.shape[1])?,
    };
    Ok((object, job))
}

/// One source of a ternary rule: the artifact's format, 2-D, the shared k, whole blocks.
fn check_ternary_part(
    t: &TensorInfo<'_>,
    format: &NumericFormat,
    object: &str,
    k: &mut Option<u64>,
) -> Result<()> {
    let is_format = t
        .ternary_type()
        .is_some_and(|ty| TernaryType::of_format(format) == Some(ty));
    if !is_format {
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
    let k_now = *k.get_or_insert(t.ne[0]);
    if t.n_dims != 2 || k_now != t.ne[0] {
        return Err(Error::at(
            ErrorClass::GgufTensorShape,
            t.info_offset,
            t.name,
            format!("ne={:?} does not fit {object} (k = {k_now})", t.dims()),
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
    Ok(())
}

/// Every tensor of the held layers (and every global a full GGUF, or the producible objects of
/// a reduced one, reads) must exist with its ne and a fitting type.
fn check_source_tensors(
    gguf: &Gguf<'_>,
    profile: &ModelProfile,
    layers: &[u64],
    producible: &[TargetObject],
    format: &NumericFormat,
) -> Result<()> {
    let reduced = (layers.len() as u64) < profile.n_layers;
    let read: std::collections::HashSet<&str> = producible
        .iter()
        .filter_map(|o| o.rule.as_ref())
        .flat_map(crate::mapping::rule_sources)
        .collect();
    for want in crate::mapping::gguf_tensors_in(profile, layers) {
        let is_global = !want.name.starts_with("blk.");
        if reduced
            && is_global
            && !read.contains(want.name.as_str())
            && gguf.tensor(&want.name).is_none()
        {
            continue;
        }
        let t = gguf.require_tensor(&want.name)?;
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
        let ternary = want.kind == spec::TensorClass::Ternary;
        let fits = if ternary {
            t.ternary_type()
                .is_some_and(|ty| TernaryType::of_format(format) == Some(ty))
        } else {
            matches!(t.ggml.name.as_str(), "F32" | "F16" | "BF16")
        };
        if !fits {
            let (class, expected) = if ternary {
                (ErrorClass::PackMixedTernary, format.name.as_str())
            } else {
                (ErrorClass::GgufTensorShape, "F32, F16 or BF16")
            };
            return Err(Error::at(
                class,
                t.info_offset,
                t.name,
                format!("{} is {}; expected {expected}", t.name, t.ggml.name),
            ));
        }
    }
    Ok(())
}

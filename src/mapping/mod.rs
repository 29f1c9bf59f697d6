//! Expands `spec/mapping.json` for a model profile: the concrete list of template objects,
//! which of them are produced from the GGUF (and by which rule), and which are borrowed.
//!
//! ```
//! use ninfer_ternary::{mapping, spec};
//!
//! // The nano profile: which template objects the packer produces from the GGUF.
//! let p = spec::profile("bonsai-nano").unwrap();
//! let produced = mapping::produced_objects(&p);
//! assert!(!produced.is_empty());
//! assert!(produced.iter().all(|o| !mapping::is_borrowed(&o.name)));
//! ```

#[cfg(feature = "internals")]
pub mod profile;
#[cfg(not(feature = "internals"))]
pub(crate) mod profile;

use crate::spec::{self, mapping, Dim, LayerSet, ModelProfile, Produce, Rule};

/// One object of the (template) object list.
#[derive(Clone, Debug)]
pub struct TargetObject {
    /// The object's name, layer substituted.
    pub name: String,
    /// `None` for global objects.
    pub layer: Option<u64>,
    /// The object's shape.
    pub shape: Vec<u64>,
    /// The format the groupwise-int template stores it in.
    pub template_format: String,
    /// The rule producing it, or `None` if borrowed from the template.
    pub rule: Option<Rule>,
}

/// Replaces `{l}` in a rule's names.
pub fn at_layer(s: &str, l: Option<u64>) -> String {
    match l {
        Some(l) => s.replace("{l}", &l.to_string()),
        None => s.to_string(),
    }
}

/// The rule for `target`, with the layer substituted into every source name.
pub fn resolve_rule(rule: &Rule, l: Option<u64>) -> Rule {
    let mut r = rule.clone();
    r.target = at_layer(&r.target, l);
    r.produce = match r.produce {
        Produce::TernaryRows { parts } => Produce::TernaryRows {
            parts: parts
                .into_iter()
                .map(|mut p| {
                    p.src = at_layer(&p.src, l);
                    p
                })
                .collect(),
        },
        Produce::Norm { src, minus_one } => Produce::Norm {
            src: at_layer(&src, l),
            minus_one,
        },
        Produce::HeadVector { src, func } => Produce::HeadVector {
            src: at_layer(&src, l),
            func,
        },
        Produce::HeadRows { src } => Produce::HeadRows {
            src: at_layer(&src, l),
        },
        Produce::Conv1d { src } => Produce::Conv1d {
            src: at_layer(&src, l),
        },
    };
    r
}

fn applies(p: &ModelProfile, set: LayerSet, l: u64) -> bool {
    match set {
        LayerSet::Global => false,
        LayerSet::All => true,
        LayerSet::Gdn => !p.is_attention_layer(l),
        LayerSet::Attention => p.is_attention_layer(l),
    }
}

/// The text objects produced by rules, in template order: globals that precede the layers
/// (token_embedding), every layer, then the remaining globals.
pub fn produced_objects(p: &ModelProfile) -> Vec<TargetObject> {
    produced_objects_in(p, &(0..p.n_layers).collect::<Vec<_>>())
}

/// [`produced_objects`] of a reduced model holding only `layers` (ascending).
pub fn produced_objects_in(p: &ModelProfile, layers: &[u64]) -> Vec<TargetObject> {
    let m = mapping();
    let mk = |r: &Rule, l: Option<u64>| TargetObject {
        name: at_layer(&r.target, l),
        layer: l,
        shape: p.dims(&r.shape),
        template_format: r.template_format.clone(),
        rule: Some(resolve_rule(r, l)),
    };
    let globals: Vec<&Rule> = m
        .rules
        .iter()
        .filter(|r| r.layers == LayerSet::Global)
        .collect();
    let mut out: Vec<TargetObject> = globals.iter().take(1).map(|r| mk(r, None)).collect();
    for &l in layers {
        for r in m
            .rules
            .iter()
            .filter(|r| r.layers != LayerSet::Global && applies(p, r.layers, l))
        {
            out.push(mk(r, Some(l)));
        }
    }
    out.extend(globals.iter().skip(1).map(|r| mk(r, None)));
    out
}

/// The GGUF tensor names a (resolved) rule reads.
pub fn rule_sources(rule: &Rule) -> Vec<&str> {
    match &rule.produce {
        Produce::TernaryRows { parts } => parts.iter().map(|p| p.src.as_str()).collect(),
        Produce::Norm { src, .. }
        | Produce::HeadVector { src, .. }
        | Produce::HeadRows { src }
        | Produce::Conv1d { src } => vec![src.as_str()],
    }
}

/// The objects a GGUF holding `layers` can produce. A GGUF with every layer of the profile
/// must make every object (a missing tensor is refused where it is read); a reduced one makes
/// every object of its layers, and a global object (token_embedding, final_norm, output_head)
/// only when it holds the global's source tensors (`has`) — the public reduced test model
/// carries no vocabulary tensors.
pub fn producible_objects(
    p: &ModelProfile,
    layers: &[u64],
    has: &dyn Fn(&str) -> bool,
) -> Vec<TargetObject> {
    let reduced = (layers.len() as u64) < p.n_layers;
    produced_objects_in(p, layers)
        .into_iter()
        .filter(|o| {
            o.layer.is_some()
                || !reduced
                || o.rule
                    .as_ref()
                    .is_some_and(|r| rule_sources(r).iter().all(|s| has(s)))
        })
        .collect()
}

/// Borrowed objects of the synthetic template, by section.
pub fn borrowed_objects(p: &ModelProfile) -> (Vec<TargetObject>, Vec<TargetObject>) {
    let t = &p.template;
    let obj = |name: String, shape: Vec<u64>, fmt: &str| TargetObject {
        name,
        layer: None,
        shape,
        template_format: fmt.into(),
        rule: None,
    };
    let frontend_names = [
        "tokenizer.json",
        "tokenizer_config.json",
        "chat_template.jinja",
        "generation_config.json",
        "preprocessor_config.json",
        "special_tokens_map.json",
    ];
    let mut head = Vec::new();
    for i in 0..t.frontend_resources as usize {
        let n = frontend_names
            .get(i)
            .map_or(format!("resource_{i}"), |s| s.to_string());
        head.push(obj(format!("frontend/{n}"), vec![], "raw-bytes-v1"));
    }
    let mut tail = Vec::new();
    let w = t.vision_width;
    for i in 0..t.vision_objects {
        let (kind, shape, fmt) = match i % 3 {
            0 => ("norm", vec![w], "BF16"),
            1 => ("attention/qkv", vec![3 * w, w], "Q5G64_F16S"),
            _ => ("mlp/fc", vec![w, w], "Q4G64_F16S"),
        };
        tail.push(obj(format!("vision/blocks/{}/{kind}", i / 3), shape, fmt));
    }
    let mtp = [
        ("input_norm", vec![Dim::Name("hidden".into())], "BF16"),
        ("embedding_norm", vec![Dim::Name("hidden".into())], "BF16"),
        (
            "projection",
            vec![Dim::Name("hidden".into()), Dim::Num(2 * p.hidden)],
            "Q5G64_F16S",
        ),
        (
            "attention/query_key",
            vec![
                Dim::Name("attn_pair_rows".into()),
                Dim::Name("hidden".into()),
            ],
            "Q5G64_F16S",
        ),
        (
            "attention/gate_value",
            vec![
                Dim::Name("attn_pair_rows".into()),
                Dim::Name("hidden".into()),
            ],
            "Q5G64_F16S",
        ),
        (
            "attention/query_norm",
            vec![Dim::Name("head_dim".into())],
            "BF16",
        ),
        (
            "attention/key_norm",
            vec![Dim::Name("head_dim".into())],
            "BF16",
        ),
        (
            "attention/output",
            vec![Dim::Name("hidden".into()), Dim::Name("q_rows".into())],
            "Q5G64_F16S",
        ),
        (
            "post_attention_norm",
            vec![Dim::Name("hidden".into())],
            "BF16",
        ),
        (
            "mlp/gate_up",
            vec![Dim::Name("gate_up_rows".into()), Dim::Name("hidden".into())],
            "Q4G64_F16S",
        ),
        (
            "mlp/down",
            vec![Dim::Name("hidden".into()), Dim::Name("ffn".into())],
            "Q4G64_F16S",
        ),
        ("final_norm", vec![Dim::Name("hidden".into())], "BF16"),
    ];
    for (name, shape, fmt) in mtp.iter().cycle().take(t.mtp_objects as usize) {
        tail.push(obj(format!("mtp/{name}"), p.dims(shape), fmt));
    }
    tail.push(obj(
        "text/draft_head".into(),
        vec![t.draft_head_rows, p.hidden],
        "Q4G64_F16S",
    ));
    tail.push(obj(
        "text/draft_head_token_ids".into(),
        vec![t.draft_head_rows],
        "I32",
    ));
    (head, tail)
}

/// The whole synthetic template object list, in order.
pub fn template_objects(p: &ModelProfile) -> Vec<TargetObject> {
    template_objects_with(p, &TemplateExtras::default())
}

/// Optional namespaces a synthetic template may carry beyond the default list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TemplateExtras {
    /// `dflash2/*`: the speculative-decoding companion the public template carries.
    pub dflash2: bool,
}

/// [`template_objects`] with the optional namespaces of `extras` (after `mtp/*`, before the
/// draft head).
pub fn template_objects_with(p: &ModelProfile, extras: &TemplateExtras) -> Vec<TargetObject> {
    let (head, mut tail) = borrowed_objects(p);
    if extras.dflash2 {
        let at = tail
            .iter()
            .position(|o| o.name.starts_with("text/draft_head"))
            .unwrap_or(tail.len());
        tail.splice(at..at, dflash2_objects(p));
    }
    head.into_iter()
        .chain(produced_objects(p))
        .chain(tail)
        .collect()
}

/// The synthetic `dflash2/*` objects: a norm and a projection, then drafter layers of the MTP
/// block's object names until the profile's `dflash2_objects` count is reached. The real
/// companion's object names are not public; only its namespace and count (66 at 27B scale,
/// tools/pack.py) are, and the packer treats it by namespace alone.
fn dflash2_objects(p: &ModelProfile) -> Vec<TargetObject> {
    let want = p.template.dflash2_objects as usize;
    let mtp: Vec<TargetObject> = borrowed_objects(p)
        .1
        .into_iter()
        .filter(|o| o.name.starts_with("mtp/"))
        .take(12)
        .collect();
    let mut out = vec![
        TargetObject {
            name: "dflash2/norm".into(),
            layer: None,
            shape: vec![p.hidden],
            template_format: "BF16".into(),
            rule: None,
        },
        TargetObject {
            name: "dflash2/fc".into(),
            layer: None,
            shape: vec![p.hidden, 2 * p.hidden],
            template_format: "Q5G64_F16S".into(),
            rule: None,
        },
    ];
    let mut i = 0;
    while out.len() < want && !mtp.is_empty() {
        let o = &mtp[i % mtp.len()];
        let mut d = o.clone();
        d.name = format!(
            "dflash2/layers/{}/{}",
            i / mtp.len(),
            &o.name["mtp/".len()..]
        );
        out.push(d);
        i += 1;
    }
    out.truncate(want);
    out
}

/// True if the packer borrows this template object verbatim: it lies outside every produced
/// namespace (`text/`), known namespace or not, or under a documented exception inside one
/// (`text/draft_head*`). `spec/mapping.json` `produced_namespaces`, `borrowed_in_produced`.
pub fn is_borrowed(name: &str) -> bool {
    let m = mapping();
    let produced = m
        .produced_namespaces
        .iter()
        .any(|p| name.starts_with(p.as_str()));
    !produced
        || m.borrowed_in_produced
            .iter()
            .any(|b| name.starts_with(b.prefix.as_str()))
}

/// The namespace of an object name: the text before its first `/` (the whole name if none).
pub fn namespace(name: &str) -> &str {
    name.split('/').next().unwrap_or(name)
}

/// True if `ns` (without the slash) is a namespace the rules produce (`text`).
pub fn is_produced_namespace(ns: &str) -> bool {
    mapping()
        .produced_namespaces
        .iter()
        .any(|p| p.strip_suffix('/').unwrap_or(p) == ns)
}

/// The one borrowed namespace a minimal artifact keeps (`pack --minimal`, tools/pack.py's
/// `layer3` mode): the frontend (tokenizer and chat template) an engine needs to load it.
pub const MINIMAL_BORROWED_NAMESPACE: &str = "frontend";

/// The layer of a minimal artifact made from a source holding `layers` (ascending): the first
/// full-attention one, or `None` when there is none. `pack --minimal` picks it and
/// `verify --minimal` expects it: one function, so the two cannot drift apart.
pub fn minimal_layer(p: &ModelProfile, layers: &[u64]) -> Option<u64> {
    layers.iter().copied().find(|&l| p.is_attention_layer(l))
}

/// True if a minimal artifact keeps this borrowed template object (it is in
/// [`MINIMAL_BORROWED_NAMESPACE`]); every other borrowed object is left out.
pub fn minimal_keeps_borrowed(name: &str) -> bool {
    namespace(name) == MINIMAL_BORROWED_NAMESPACE
}

/// One concrete GGUF tensor the profile's model has (from `gguf_tensors` in spec/mapping.json).
#[derive(Clone, Debug)]
pub struct SynthTensor {
    /// The tensor's GGUF name, layer substituted.
    pub name: String,
    /// Its ggml ne (innermost first).
    pub ne: Vec<u64>,
    /// The ternary type, or the dense ggml type (F32, BF16).
    pub kind: spec::TensorClass,
    /// How synth fills a dense tensor (`norm`, `small`, `negative`).
    pub init: String,
}

/// The complete tensor list in GGUF order (globals first, then layer by layer).
pub fn gguf_tensors(p: &ModelProfile) -> Vec<SynthTensor> {
    gguf_tensors_in(p, &(0..p.n_layers).collect::<Vec<_>>())
}

/// [`gguf_tensors`] of a reduced model holding only `layers` (ascending).
pub fn gguf_tensors_in(p: &ModelProfile, layers: &[u64]) -> Vec<SynthTensor> {
    let m = mapping();
    let mk = |t: &spec::GgufTensorSpec, l: Option<u64>| SynthTensor {
        name: at_layer(&t.name, l),
        ne: p.dims(&t.ne),
        kind: t.ty,
        init: t.init.clone().unwrap_or_default(),
    };
    let mut out: Vec<SynthTensor> = m
        .gguf_tensors
        .iter()
        .filter(|t| t.layers == LayerSet::Global)
        .map(|t| mk(t, None))
        .collect();
    for &l in layers {
        for t in &m.gguf_tensors {
            let yes = match t.layers {
                LayerSet::Global => false,
                LayerSet::All => true,
                LayerSet::Gdn => !p.is_attention_layer(l),
                LayerSet::Attention => p.is_attention_layer(l),
            };
            if yes {
                out.push(mk(t, Some(l)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::profile;

    #[test]
    fn full_scale_template_has_the_documented_counts() {
        let p = profile("bonsai-2-27b").unwrap();
        let all = template_objects(&p);
        let m = mapping();
        assert_eq!(all.len() as u64, m.counts_27b["template_objects"]);
        let borrowed = all.iter().filter(|o| o.rule.is_none()).count() as u64;
        assert_eq!(borrowed, m.counts_27b["borrowed"]);
        assert!(
            all.iter().all(|o| o.rule.is_none() == is_borrowed(&o.name)),
            "borrow prefixes and rules agree"
        );
        let ternary = all
            .iter()
            .filter(|o| {
                matches!(
                    o.rule.as_ref().map(|r| &r.produce),
                    Some(Produce::TernaryRows { .. })
                )
            })
            .count() as u64;
        assert_eq!(ternary, m.counts_27b["ternary_objects"]);
        assert_eq!(
            all.iter().filter(|o| o.name.starts_with("text/")).count(),
            773
        );
        // Names are unique.
        let mut names: Vec<&str> = all.iter().map(|o| o.name.as_str()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
    }

    #[test]
    fn layer_three_is_attention_and_gets_its_objects() {
        let p = profile("bonsai-nano").unwrap();
        let objs = produced_objects(&p);
        let l3: Vec<&str> = objs
            .iter()
            .filter(|o| o.layer == Some(3))
            .map(|o| o.name.as_str())
            .collect();
        assert!(l3.contains(&"text/layers/3/attention/query_key"));
        assert!(!l3.iter().any(|n| n.contains("/gdn/")));
        let vz = objs
            .iter()
            .find(|o| o.name == "text/layers/0/gdn/value_z")
            .unwrap();
        assert_eq!(vz.shape, vec![768, 128]);
        let Some(Produce::TernaryRows { parts }) = vz.rule.as_ref().map(|r| &r.produce) else {
            panic!()
        };
        assert_eq!(parts[0].src, "blk.0.attn_qkv.weight");
    }
}

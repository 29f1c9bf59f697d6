//! Phase 3 of the reader: the tensor-info records, decoded and checked one by one (name
//! length and uniqueness, `n_dims`, each dim, the type id and every candidate byte size).
//! Offsets are only read here; their layout is the next phase's business.

use super::cursor::Cur;
use super::name_hash::NameMap;
use super::nul_twin::{check_nul_twins, NameKind};
use super::tensor_size;
use crate::error::{enforced, Error, ErrorClass as C, Result};
use crate::spec::GgmlType;

/// A tensor-info record before its layout is resolved: one size per candidate type.
pub(super) struct Pending<'a> {
    pub(super) name: &'a str,
    pub(super) n_dims: u32,
    pub(super) ne: [u64; 4],
    pub(super) type_id: u32,
    /// (type, n_elements, nbytes); more than one only for the ambiguous id 42.
    pub(super) cands: Vec<(&'static GgmlType, u64, u64)>,
    pub(super) offset: u64,
    pub(super) info_offset: u64,
}

/// All tensor infos in file order with a by-name index.
pub(super) struct TensorInfos<'a> {
    pub(super) pend: Vec<Pending<'a>>,
    pub(super) index: NameMap<'a>,
}

/// What the per-record checks need to know besides the bytes.
pub(super) struct InfoRules<'t> {
    pub(super) strict: bool,
    pub(super) max_name: u64,
    /// Types sharing the ambiguous id (empty when the table defines none).
    pub(super) id42: &'t [&'static GgmlType],
}

impl<'t> InfoRules<'t> {
    /// The rules of `strict` or spec mode: names < 64 bytes (strict, from the table) or ≤ 64.
    pub(super) fn new(strict: bool, id42: &'t [&'static GgmlType]) -> InfoRules<'t> {
        let max_name = match strict {
            true => crate::spec::get().gguf.strict.max_tensor_name_bytes,
            false => 64,
        };
        InfoRules {
            strict,
            max_name,
            id42,
        }
    }
}

/// Strict mode: no two tensor names equal up to a NUL byte (`gguf.name_nul_twin`).
pub(super) fn check_name_nul_twins(infos: &TensorInfos<'_>) -> Result<()> {
    // No NUL in any name (every ordinary file): nothing to pair, no per-record copy.
    if !infos.pend.iter().any(|p| p.name.as_bytes().contains(&0)) {
        return Ok(());
    }
    let names: Vec<&str> = infos.pend.iter().map(|p| p.name).collect();
    let at: Vec<u64> = infos.pend.iter().map(|p| p.info_offset).collect();
    check_nul_twins(&names, &at, NameKind::Tensor)
}

pub(super) fn read_tensor_infos<'a>(
    c: &mut Cur<'a>,
    tensor_count: u64,
    rules: &InfoRules<'_>,
) -> Result<TensorInfos<'a>> {
    let mut infos = TensorInfos {
        pend: Vec::new(),
        index: NameMap::default(),
    };
    for i in 0..tensor_count {
        let at = c.at();
        super::kv_block::reserve_record(&mut infos.pend, &mut infos.index, at, &|| {
            format!("tensor_infos[{i}]")
        })?;
        let p = read_tensor_info(c, i, rules, &infos.index)?;
        infos.index.insert(p.name, infos.pend.len());
        infos.pend.push(p);
    }
    Ok(infos)
}

fn read_tensor_info<'a>(
    c: &mut Cur<'a>,
    i: u64,
    rules: &InfoRules<'_>,
    seen: &NameMap<'a>,
) -> Result<Pending<'a>> {
    let rec = c.at();
    let name = c.string(&|| format!("tensor_infos[{i}].name"))?;
    let f = |what: &str| format!("tensor_infos[{i}]('{name}').{what}");
    check_name(name, rec, rules, seen, &f)?;
    let (n_dims, ne) = read_dims(c, &f)?;
    let tpos = c.at();
    let type_id = c.u32(&|| f("type"))?;
    let types = candidate_types(type_id, rules.id42).ok_or_else(|| {
        Error::at(
            C::GgufTensorType,
            tpos,
            f("type"),
            unknown_type_detail(type_id),
        )
    })?;
    let cands = sized_candidates(&ne[..n_dims as usize], types, rec, &f)?;
    let offset = c.u64(&|| f("offset"))?;
    Ok(Pending {
        name,
        n_dims,
        ne,
        type_id,
        cands,
        offset,
        info_offset: rec,
    })
}

fn check_name(
    name: &str,
    rec: u64,
    rules: &InfoRules<'_>,
    seen: &NameMap<'_>,
    f: &dyn Fn(&str) -> String,
) -> Result<()> {
    let max_name = rules.max_name;
    if name.len() as u64 > max_name && enforced(C::GgufTensorNameLength) {
        return Err(Error::at(
            C::GgufTensorNameLength,
            rec,
            f("name"),
            format!(
                "tensor name is {} bytes, the limit is {max_name} ({} mode)",
                name.len(),
                if rules.strict { "strict" } else { "spec" }
            ),
        ));
    }
    if let Some(&j) = seen
        .get(name)
        .filter(|_| enforced(C::GgufTensorNameDuplicate))
    {
        return Err(Error::at(
            C::GgufTensorNameDuplicate,
            rec,
            f("name"),
            format!("tensor name '{name}' already used by tensor_infos[{j}]"),
        ));
    }
    Ok(())
}

/// `n_dims` in 1..=max_dims, then each dim in 1..=i64::MAX; unused dims are 1.
fn read_dims(c: &mut Cur<'_>, f: &dyn Fn(&str) -> String) -> Result<(u32, [u64; 4])> {
    let max_dims = crate::spec::get().gguf.max_dims;
    let npos = c.at();
    let n_dims = c.u32(&|| f("n_dims"))?;
    // Rule switch (tests only): n_dims 0 reads on as a scalar; > 4 has no room in `ne`.
    if n_dims > max_dims || (n_dims == 0 && enforced(C::GgufTensorNDims)) {
        return Err(Error::at(
            C::GgufTensorNDims,
            npos,
            f("n_dims"),
            format!("n_dims is {n_dims}, must be 1..={max_dims}"),
        ));
    }
    let mut ne = [1u64; 4];
    for (j, d) in ne.iter_mut().enumerate().take(n_dims as usize) {
        let dpos = c.at();
        *d = c.u64(&|| f(&format!("dims[{j}]")))?;
        if (*d == 0 || *d > i64::MAX as u64) && enforced(C::GgufTensorDim) {
            let why = if *d == 0 {
                "is 0".to_string()
            } else {
                format!("is negative as i64 ({})", *d as i64)
            };
            return Err(Error::at(
                C::GgufTensorDim,
                dpos,
                f(&format!("dims[{j}]")),
                format!("dimension {j} {why}; dims must be > 0"),
            ));
        }
    }
    Ok((n_dims, ne))
}

/// The table types a stored id may mean: all id-42 candidates for the ambiguous id, else the
/// one `types` entry; `None` for an unknown id.
fn candidate_types(type_id: u32, id42: &[&'static GgmlType]) -> Option<Vec<&'static GgmlType>> {
    if !id42.is_empty() && type_id == id42[0].id {
        return Some(id42.to_vec());
    }
    crate::spec::get().ggml_type(type_id).map(|t| vec![t])
}

/// `(type, n_elements, nbytes)` for every candidate whose size is valid; the first candidate's
/// error when none is.
fn sized_candidates(
    dims: &[u64],
    types: Vec<&'static GgmlType>,
    rec: u64,
    f: &dyn Fn(&str) -> String,
) -> Result<Vec<(&'static GgmlType, u64, u64)>> {
    let mut cands = Vec::with_capacity(types.len());
    let mut first_err = None;
    for t in types {
        match tensor_size(dims, t) {
            Ok((n, b)) => cands.push((t, n, b)),
            Err((class, detail)) => {
                first_err.get_or_insert_with(|| {
                    Error::at(class, rec, f("dims"), format!("{detail} (type {})", t.name))
                });
            }
        }
    }
    if cands.is_empty() {
        // `types` is never empty, so an error was recorded; the fallback keeps this total.
        return Err(
            first_err.unwrap_or_else(|| Error::at(C::GgufTensorType, rec, f("type"), "no type"))
        );
    }
    Ok(cands)
}

fn unknown_type_detail(id: u32) -> String {
    let spec = crate::spec::get();
    if spec.ggml.removed_ids.contains(&id) {
        format!("ggml type {id} was removed from ggml")
    } else if let Some(v) = spec.ggml.variants.iter().find(|v| v.id == id) {
        format!(
            "ggml type {id} is not a tensor type of mainline or Prism (fork meaning: {})",
            v.name
        )
    } else {
        format!("ggml type {id} (as i32: {}) is unknown", id as i32)
    }
}

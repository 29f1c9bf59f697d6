//! A kernel's ABI as it really is: its precision mode, its own launch geometry (expressions of
//! the case's dims) and its parameter list, each parameter bound to a name of the class's
//! vocabulary (spec/kernels.json `bindings`) with its C type. The default of a class is its
//! fixed ABI in spec/kernels.json; an engine kernel declares its own in a sidecar JSON
//! (`check-kernel --abi FILE`), so it is judged unchanged.

use serde::Deserialize;

use super::abi::{KernelClass, Launch, LaunchArg};
use super::cases::{plane_geometry, KernelCase};
use super::expected::Expected;
use super::launch_expr;
use super::precision::{Dtype, Precision};
use crate::error::{Error, ErrorClass, Result};

/// One grid / block / shared-memory dimension: a number or an expression.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum DimRule {
    /// A constant.
    N(u64),
    /// An expression over the case's scalar bindings.
    E(String),
}

impl std::fmt::Display for DimRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DimRule::N(n) => write!(f, "{n}"),
            DimRule::E(e) => f.write_str(e),
        }
    }
}

/// The launch of a kernel.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LaunchRule {
    /// Grid x, y, z.
    pub grid: [DimRule; 3],
    /// Block x, y, z.
    pub block: [DimRule; 3],
    /// Dynamic shared memory bytes.
    #[serde(default)]
    pub shared: Option<DimRule>,
}

/// One parameter: a binding name, optionally with its C type.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum ArgRule {
    /// Just the binding (default C type).
    Name(String),
    /// Binding and C type.
    Full {
        /// The binding name.
        bind: String,
        /// The C type as the kernel declares it.
        #[serde(rename = "type", default)]
        ty: Option<String>,
    },
}

/// The sidecar file (`--abi FILE.json`); every field optional (defaults: the class ABI).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AbiSidecar {
    /// The entry point.
    #[serde(default)]
    pub entry: Option<String>,
    /// The class.
    #[serde(default)]
    pub class: Option<String>,
    /// The formats it handles.
    #[serde(default)]
    pub formats: Option<Vec<String>>,
    /// Its precision mode.
    #[serde(default)]
    pub precision: Option<String>,
    /// Its launch.
    #[serde(default)]
    pub launch: Option<LaunchRule>,
    /// Its parameters in order.
    #[serde(default)]
    pub args: Option<Vec<ArgRule>>,
    /// A declared pre-step the harness applies to the inputs before the launch (`"signs"`:
    /// `hadamard_rotate` x arrives as s ⊙ x, for a rotation kernel without signs).
    #[serde(default)]
    pub pre: Option<String>,
}

/// What a parameter is bound to.
#[derive(Clone, Debug, PartialEq)]
pub enum Bind {
    /// The weights (ggml blocks, or the buffer holding the row-split object).
    Weights,
    /// get_rows row ids (i32).
    Ids,
    /// The activations, in the precision's input type.
    X,
    /// The output, in the precision's output type.
    Y,
    /// Hadamard signs (f32).
    Signs,
    /// One plane of a row-split object as its own buffer (`base`, `high`, `scale`).
    Plane(&'static str),
    /// A zeroed scratch buffer of this many bytes (expression).
    Scratch(String),
    /// A scalar of the class vocabulary.
    Scalar(String),
    /// An integer expression over the class's scalars, or a literal (`k / 128`, `1`): what an
    /// engine kernel takes in place of a vocabulary scalar (`groups_per_row`, `tokens`).
    Expr(String),
}

/// A C integer type with `std::` dropped (`std::int32_t` is `int32_t`).
fn plain_int(ty: &str) -> String {
    ty.replace("std::", "")
}

/// Whether `e` is an expression over `scalars` (names, literals, `+ - * / ( )`, `ceil`,
/// `floor`; and for float parameters decimal literals and `sqrt`): every name in it is a
/// scalar of the class. Which grammar applies is settled by the parameter's type.
fn scalar_expr(e: &str, scalars: &[&str]) -> bool {
    let ok_chars = e
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_+-*/(). ".contains(&b));
    let names_ok = e
        .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.'))
        .filter(|w| !w.is_empty() && !w.as_bytes()[0].is_ascii_digit() && w.as_bytes()[0] != b'.')
        .all(|w| matches!(w, "ceil" | "floor" | "sqrt") || scalars.contains(&w));
    ok_chars && names_ok && e.bytes().any(|b| b.is_ascii_alphanumeric())
}

/// The float parameter types a scalar may have (`float scale = 1 / sqrt(block)`).
const FLOAT: &[&str] = &["float", "const float"];

/// Whether an integer parameter's expression uses the float grammar (a decimal literal or
/// `sqrt`), which only a float parameter takes.
fn float_only(e: &str) -> bool {
    e.contains('.')
        || e.contains("sqrt")
        || e.bytes().any(|b| b == b'e' || b == b'E') && {
            // An exponent: a digit right before e/E (names like `k_pad` are not exponents).
            e.as_bytes()
                .windows(2)
                .any(|w| w[0].is_ascii_digit() && matches!(w[1], b'e' | b'E'))
        }
}

/// A kernel's ABI.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelAbi {
    /// The class.
    pub class: KernelClass,
    /// The precision mode.
    pub precision: Precision,
    /// The launch.
    pub launch: LaunchRule,
    /// Parameters in order: binding and C type.
    pub args: Vec<(Bind, String)>,
    /// The sidecar's `"pre": "signs"`: x is passed as s ⊙ x (exact: a sign flip per element);
    /// the reference stays H_B (s ⊙ x).
    pub pre_signs: bool,
}

/// The binding names of a class: (pointer names, scalar names).
pub fn vocabulary(class: KernelClass) -> (&'static [&'static str], &'static [&'static str]) {
    match class {
        KernelClass::Dequantize => (&["blocks", "w", "y"], &["n_blocks", "n_elems"]),
        KernelClass::GetRows => (&["w", "ids", "y"], &["n_ids", "k", "n", "row_bytes"]),
        KernelClass::MulMatVec => (&["w", "x", "y"], &["n", "k", "row_bytes"]),
        KernelClass::MulMatVecPlanes => (
            &["obj", "base", "high", "scale", "x", "y"],
            &["base_off", "high_off", "scale_off", "n", "k", "k_pad"],
        ),
        KernelClass::MulMat => (
            &["w", "x", "y"],
            &["n", "k", "t", "row_bytes", "stride_x", "stride_y"],
        ),
        KernelClass::HadamardRotate => (&["x", "signs", "y"], &["k", "t", "block", "n_rows"]),
        KernelClass::MulMatPlanes => (
            &["obj", "base", "high", "scale", "x", "y"],
            &[
                "base_off",
                "high_off",
                "scale_off",
                "n",
                "k",
                "k_pad",
                "t",
                "stride_x",
                "stride_y",
            ],
        ),
    }
}

/// A sidecar the harness cannot honour (`kernel.abi`).
fn usage(what: impl Into<String>) -> Error {
    Error::new(ErrorClass::KernelAbi, "abi", what)
}

const INT32: &[&str] = &[
    "int",
    "unsigned",
    "unsigned int",
    "int32_t",
    "uint32_t",
    "const int",
    "const unsigned int",
];
const INT64: &[&str] = &[
    "long long",
    "unsigned long long",
    "int64_t",
    "uint64_t",
    "size_t",
    "long",
    "const long long",
    "const int64_t",
];

/// The scalar value of `name` on a case (None: not defined for this class / case).
pub fn scalar(c: &KernelCase, name: &str) -> Option<i64> {
    let d = c.dims;
    let qk = c.format.codec().ok().map(|x| x.block_elems() as u64);
    let bb = c.format.codec().ok().map(|x| x.block_bytes() as u64);
    let planes = || plane_geometry(c.format, d.n, d.k).ok().map(|p| p.1);
    let pre = c.obj_prefix as u64;
    let v = match (c.class, name) {
        (KernelClass::Dequantize, "n_blocks") => d.n_blocks,
        (KernelClass::Dequantize, "n_elems") => d.n_blocks * qk?,
        (KernelClass::HadamardRotate, "n_rows") => d.t * d.k / d.block.max(1),
        (cl, "base_off") if cl.is_planes() => pre + planes()?.base_offset,
        (cl, "high_off") if cl.is_planes() => pre + planes()?.high_offset,
        (cl, "scale_off") if cl.is_planes() => pre + planes()?.scale_offset,
        (cl, "k_pad") if cl.is_planes() => planes()?.k_pad,
        // Planes activations are padded to k_pad per token.
        (KernelClass::MulMatPlanes, "stride_x") => planes()?.k_pad,
        (_, "row_bytes") => d.k / qk? * bb?,
        (_, "stride_x") => d.k,
        (_, "stride_y") => d.n,
        (_, "n") => d.n,
        (_, "k") => d.k,
        (_, "t") => d.t.max(1),
        (_, "n_ids") => d.n_ids,
        (_, "block") => d.block,
        _ => return None,
    };
    i64::try_from(v).ok()
}

impl KernelAbi {
    /// The class's fixed ABI of spec/kernels.json, with the pointer types of `precision`.
    pub fn default_for(class: KernelClass, precision: Precision) -> Result<KernelAbi> {
        let s = class.spec();
        let dim = |g: &crate::spec::GridDim| match g {
            crate::spec::GridDim::Count(n) => DimRule::N(*n as u64),
            crate::spec::GridDim::Rule(r) => DimRule::E(r.clone()),
        };
        let grid = [
            dim(&s.launch.grid[0]),
            dim(&s.launch.grid[1]),
            dim(&s.launch.grid[2]),
        ];
        let block = [
            DimRule::N(s.launch.block[0] as u64),
            DimRule::N(s.launch.block[1] as u64),
            DimRule::N(s.launch.block[2] as u64),
        ];
        let args = s
            .args
            .iter()
            .map(|a| ArgRule::Full {
                bind: a.name.clone(),
                ty: None,
            })
            .collect();
        KernelAbi::build(
            class,
            precision,
            LaunchRule {
                grid,
                block,
                shared: None,
            },
            args,
        )
    }

    /// The ABI a sidecar declares (fields it leaves out come from the class default).
    pub fn from_sidecar(
        class: KernelClass,
        sc: &AbiSidecar,
        precision: Option<Precision>,
    ) -> Result<KernelAbi> {
        let p = match (&sc.precision, precision) {
            (_, Some(p)) => p,
            (Some(s), None) => Precision::parse(s)?,
            (None, None) => Precision::F32,
        };
        let d = KernelAbi::default_for(class, p)?;
        let launch = sc.launch.clone().unwrap_or(d.launch);
        let mut abi = match &sc.args {
            None => KernelAbi { launch, ..d },
            Some(a) => KernelAbi::build(class, p, launch, a.clone())?,
        };
        if let Some(pre) = &sc.pre {
            abi.pre_signs = pre_step(class, pre, &abi.args)?;
        }
        Ok(abi)
    }

    fn build(
        class: KernelClass,
        p: Precision,
        launch: LaunchRule,
        args: Vec<ArgRule>,
    ) -> Result<KernelAbi> {
        let (ptrs, scalars) = vocabulary(class);
        let mut out = Vec::new();
        let mut outs = 0;
        for a in args {
            let (name, ty) = match a {
                ArgRule::Name(n) => (n, None),
                ArgRule::Full { bind, ty } => (bind, ty),
            };
            let name = name.trim().to_string();
            let bind = if let Some(e) = name.strip_prefix("scratch:") {
                Bind::Scratch(e.trim().to_string())
            } else if ptrs.contains(&name.as_str()) {
                match name.as_str() {
                    "blocks" | "w" | "obj" => Bind::Weights,
                    "ids" => Bind::Ids,
                    "x" => Bind::X,
                    "y" => Bind::Y,
                    "signs" => Bind::Signs,
                    "base" => Bind::Plane("base"),
                    "high" => Bind::Plane("high"),
                    _ => Bind::Plane("scale"),
                }
            } else if scalars.contains(&name.as_str()) {
                Bind::Scalar(name.clone())
            } else if scalar_expr(&name, scalars) {
                Bind::Expr(name.clone())
            } else {
                return Err(usage(format!(
                    "{name:?} is not a binding of class {}: pointers {}, scalars {}, an integer expression of the scalars, or scratch:<bytes>",
                    class.name(),
                    ptrs.join(", "),
                    scalars.join(", ")
                )));
            };
            let default_ty = match &bind {
                Bind::Weights | Bind::Plane(_) => "const unsigned char*".to_string(),
                Bind::Ids => "const int*".into(),
                Bind::Signs => "const float*".into(),
                Bind::X => format!("const {}*", p.x.c_type()),
                Bind::Y => format!("{}*", p.y.c_type()),
                Bind::Scratch(_) => "void*".into(),
                Bind::Scalar(s) if matches!(s.as_str(), "base_off" | "high_off" | "scale_off") => {
                    "long long".into()
                }
                Bind::Scalar(_) | Bind::Expr(_) => "int".into(),
            };
            let ty = ty
                .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or(default_ty);
            let is_ptr = ty.ends_with('*');
            let int_ty = INT32.contains(&plain_int(&ty).as_str())
                || INT64.contains(&plain_int(&ty).as_str());
            match &bind {
                // A count of the vocabulary stays an integer; a float parameter is an
                // expression (`1 / sqrt(block)`, `0.5f`).
                Bind::Scalar(_) if !int_ty => {
                    return Err(usage(format!(
                        "{name}: scalar type {ty:?} is not one of {}, {} (a float parameter binds a float expression)",
                        INT32.join(", "),
                        INT64.join(", "),
                    )))
                }
                Bind::Expr(_) if !int_ty && !FLOAT.contains(&ty.as_str()) => {
                    return Err(usage(format!(
                        "{name}: scalar type {ty:?} is not one of {}, {}, {}",
                        INT32.join(", "),
                        INT64.join(", "),
                        FLOAT.join(", ")
                    )))
                }
                Bind::Expr(e) if int_ty && float_only(e) => {
                    return Err(usage(format!(
                        "{name}: a float expression (decimal literal, exponent or sqrt) bound to the integer type {ty:?}; declare the parameter float"
                    )))
                }
                Bind::Scalar(_) | Bind::Expr(_) => {}
                _ if !is_ptr => {
                    return Err(usage(format!(
                        "{name}: a buffer needs a pointer type, not {ty:?}"
                    )))
                }
                Bind::Y => {
                    outs += 1;
                    let pointee = ty
                        .trim_end_matches('*')
                        .trim()
                        .trim_start_matches("const ")
                        .trim();
                    let ok = pointee == p.y.c_type()
                        || matches!(pointee, "void" | "char" | "unsigned char")
                        || (p.y == Dtype::F16 && matches!(pointee, "half" | "unsigned short"))
                        || (p.y == Dtype::Bf16
                            && matches!(pointee, "nv_bfloat16" | "unsigned short"));
                    if !ok {
                        return Err(usage(format!(
                            "y is {ty:?} but precision {p} writes {} outputs",
                            p.y.c_type()
                        )));
                    }
                }
                _ => {}
            }
            out.push((bind, ty));
        }
        if outs != 1 {
            return Err(usage(format!(
                "the parameter list must bind y exactly once (binds it {outs} times)"
            )));
        }
        if class == KernelClass::HadamardRotate && p.x.quantized() {
            return Err(usage(
                "hadamard_rotate has no q8_1 activations (it rotates f32/f16/bf16 vectors)",
            ));
        }
        if class.exact() && p.x != Dtype::F32 {
            return Err(usage(format!(
                "class {} has no activations: precision {p} does not apply",
                class.name()
            )));
        }
        Ok(KernelAbi {
            class,
            precision: p,
            launch,
            args: out,
            pre_signs: false,
        })
    }

    /// The C parameter types, in order.
    pub fn sig(&self) -> Vec<String> {
        self.args.iter().map(|(_, t)| t.clone()).collect()
    }

    /// The launch of this ABI on a case whose expectation (activation bytes) is `exp`.
    pub fn launch(&self, c: &KernelCase, exp: &Expected) -> Result<Launch> {
        let look = |n: &str| scalar(c, n);
        let ev = |r: &DimRule, what: &str| -> Result<i64> {
            match r {
                DimRule::N(n) => Ok(*n as i64),
                DimRule::E(e) => launch_expr::eval(e, &look)
                    .map_err(|err| err.with_field(format!("launch.{what}"))),
            }
        };
        let mut grid = [0u32; 3];
        let mut block = [0u32; 3];
        for i in 0..3 {
            let (g, b) = (
                ev(&self.launch.grid[i], "grid")?,
                ev(&self.launch.block[i], "block")?,
            );
            // CUDA's limits: grid x < 2^31, grid y and z <= 65535, block <= 1024 per dimension.
            let grid_max = if i == 0 { i32::MAX as i64 } else { 65_535 };
            if !(1..=grid_max).contains(&g) || !(1..=1024).contains(&b) {
                return Err(usage(format!(
                    "case {}: launch gives grid {} / block {} in dimension {i} (grid 1..={grid_max}, block 1..=1024)",
                    c.name, g, b
                )));
            }
            grid[i] = g as u32;
            block[i] = b as u32;
        }
        let threads = block.iter().map(|&b| b as u64).product::<u64>();
        if threads > 1024 || block[2] > 64 {
            return Err(usage(format!(
                "case {}: {threads} threads per block (CUDA allows 1024, z <= 64)",
                c.name
            )));
        }
        let shared = match &self.launch.shared {
            None => 0,
            Some(r) => ev(r, "shared")?,
        };
        if !(0..=232_448).contains(&shared) {
            return Err(usage(format!(
                "case {}: {shared} bytes of dynamic shared memory (0..=227 KiB)",
                c.name
            )));
        }
        let mut args = Vec::new();
        let mut scratch_total: i64 = 0;
        for (b, ty) in &self.args {
            args.push(match b {
                Bind::Weights if !c.sparse_rows.is_empty() => sparse_weights(c)?,
                Bind::Weights => LaunchArg::In {
                    name: "w".into(),
                    bytes: weights_buffer(c),
                },
                Bind::Plane(p) => {
                    let g = plane_geometry(c.format, c.dims.n, c.dims.k)?.1;
                    let (o, l) = match *p {
                        "base" => (g.base_offset, g.base_bytes),
                        "high" => (g.high_offset, g.high_bytes),
                        _ => (g.scale_offset, g.scale_bytes),
                    };
                    LaunchArg::In {
                        name: (*p).into(),
                        bytes: c.weights[o as usize..(o + l) as usize].to_vec(),
                    }
                }
                Bind::Ids => LaunchArg::In {
                    name: "ids".into(),
                    bytes: c.ids.iter().flat_map(|i| i.to_le_bytes()).collect(),
                },
                Bind::X => LaunchArg::In {
                    name: "x".into(),
                    bytes: if self.pre_signs {
                        signed_x(c, &exp.x_bytes, self.precision.x.elem_bytes())?
                    } else {
                        exp.x_bytes.clone()
                    },
                },
                Bind::Signs => LaunchArg::In {
                    name: "signs".into(),
                    bytes: c.signs.iter().flat_map(|f| f.to_le_bytes()).collect(),
                },
                Bind::Y => LaunchArg::Out {
                    name: "y".into(),
                    bytes: exp.values.len() * self.precision.y.elem_bytes(),
                },
                Bind::Scratch(e) => {
                    let n = launch_expr::eval(e, &look)?;
                    scratch_total = scratch_total.saturating_add(n);
                    if !(0..=1 << 28).contains(&n) || scratch_total > 1 << 28 {
                        return Err(usage(format!(
                            "scratch:{e} gives {n} bytes ({scratch_total} in all; at most 256 MiB of scratch per launch)"
                        )));
                    }
                    LaunchArg::Scratch {
                        name: format!("scratch:{e}"),
                        bytes: n as usize,
                    }
                }
                Bind::Scalar(_) | Bind::Expr(_) => {
                    let (s, v) = match b {
                        Bind::Scalar(s) => (
                            s,
                            scalar(c, s).ok_or_else(|| {
                                usage(format!("{s} is not defined for case {}", c.name))
                            })?,
                        ),
                        // A float parameter: evaluated in f64, rounded to f32 once.
                        Bind::Expr(e) if FLOAT.contains(&ty.as_str()) => {
                            args.push(LaunchArg::F32(launch_expr::eval_float(e, &look)? as f32));
                            continue;
                        }
                        Bind::Expr(e) => (e, launch_expr::eval(e, &look)?),
                        _ => return Err(usage("not a scalar binding")),
                    };
                    if FLOAT.contains(&ty.as_str()) {
                        LaunchArg::F32(v as f32)
                    } else if INT64.contains(&plain_int(ty).as_str()) {
                        LaunchArg::I64(v)
                    } else {
                        LaunchArg::I32(
                            i32::try_from(v)
                                .map_err(|_| usage(format!("{s} = {v} does not fit an int")))?,
                        )
                    }
                }
            });
        }
        Ok(Launch {
            grid,
            block,
            dyn_shared: shared as u32,
            args,
        })
    }
}

/// A sparse table's weight argument: its full length, only the rows the case holds as bytes
/// (a few rows of 8 KiB, never the 2 GB table).
fn sparse_weights(c: &KernelCase) -> Result<LaunchArg> {
    let rb = c.row_bytes()?;
    let len = usize::try_from(c.dims.n)
        .ok()
        .and_then(|n| n.checked_mul(rb))
        .ok_or_else(|| usage(format!("case {}: the table's length overflows", c.name)))?;
    Ok(LaunchArg::Sparse {
        name: "w".into(),
        len,
        runs: c
            .sparse_rows
            .iter()
            .zip(c.weights.chunks_exact(rb.max(1)))
            .map(|(&r, b)| (r as usize * rb, b.to_vec()))
            .collect(),
    })
}

/// Whether a sidecar's declared pre-step is one the harness knows for this class: `signs`
/// (hadamard_rotate only, for a kernel that does not bind the signs itself; one that did would
/// apply them twice).
fn pre_step(class: KernelClass, pre: &str, args: &[(Bind, String)]) -> Result<bool> {
    if pre != "signs" {
        return Err(usage(format!(
            "pre: {pre:?} is not a pre-step the harness knows (one: \"signs\", x passed as s ⊙ x for hadamard_rotate)"
        )));
    }
    if class != KernelClass::HadamardRotate {
        return Err(usage(format!(
            "pre: \"signs\" applies to hadamard_rotate, not {}",
            class.name()
        )));
    }
    if args.iter().any(|(b, _)| *b == Bind::Signs) {
        return Err(usage(
            "pre: \"signs\" passes x already signed, yet the parameters bind signs too (the kernel would apply them twice): drop one",
        ));
    }
    Ok(true)
}

/// The activation bytes with each element's sign flipped where its column's sign is -1 (f32,
/// f16 and bf16 alike: the top bit of the element's last little-endian byte).
fn signed_x(c: &KernelCase, x: &[u8], elem: usize) -> Result<Vec<u8>> {
    let k = c.dims.k as usize;
    if elem == 0 || k == 0 || c.signs.len() != k || x.len() % (elem * k) != 0 {
        return Err(usage(format!(
            "pre: \"signs\" needs [t, k] activations and k signs (case {})",
            c.name
        )));
    }
    let mut out = x.to_vec();
    for (i, v) in out.chunks_exact_mut(elem).enumerate() {
        if c.signs[i % k] < 0.0 {
            v[elem - 1] ^= 0x80;
        }
    }
    Ok(out)
}

/// The weight buffer a kernel receives: ggml blocks, or the row-split object placed
/// `obj_prefix` bytes into a buffer whose first bytes are unrelated (deterministic) data.
pub fn weights_buffer(c: &KernelCase) -> Vec<u8> {
    if c.obj_prefix == 0 {
        return c.weights.clone();
    }
    let mut r = crate::rng::Rng::new(0x5052_4546 ^ c.obj_prefix as u64);
    let mut b: Vec<u8> = (0..c.obj_prefix).map(|_| r.next_u64() as u8).collect();
    b.extend_from_slice(&c.weights);
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::expected::expected;

    #[test]
    fn the_default_abi_is_the_spec_signature_and_launch() {
        for class in KernelClass::ALL {
            let a = KernelAbi::default_for(class, Precision::F32).unwrap();
            let spec: Vec<String> = class.spec().args.iter().map(|x| x.ty.clone()).collect();
            assert_eq!(a.sig(), spec, "{}", class.name());
        }
        // The default launch of every corpus case has the spec's grid for that case.
        for c in crate::cuda::cases::all() {
            let a = KernelAbi::default_for(c.class, Precision::F32).unwrap();
            let l = a
                .launch(&c, &expected(&c, Precision::F32).unwrap())
                .unwrap();
            let d = c.dims;
            let want = match c.class {
                KernelClass::Dequantize => [d.n_blocks as u32, 1, 1],
                KernelClass::GetRows => [d.n_ids as u32, 1, 1],
                KernelClass::MulMatVec | KernelClass::MulMatVecPlanes => {
                    [d.n.div_ceil(4) as u32, 1, 1]
                }
                KernelClass::MulMat => [d.n.div_ceil(32) as u32, d.t.div_ceil(4) as u32, 1],
                KernelClass::HadamardRotate => [(d.k / d.block) as u32, d.t as u32, 1],
                KernelClass::MulMatPlanes => [d.n.div_ceil(4) as u32, d.t as u32, 1],
            };
            assert_eq!(l.grid, want, "{}", c.name);
            assert_eq!(l.out_bytes(), c.reference.len() * 4, "{}", c.name);
        }
    }

    /// `"pre": "signs"`: x arrives as s ⊙ x (sign bits flipped where s = -1, the rest
    /// byte-identical), for hadamard_rotate only, and never together with a signs parameter.
    #[test]
    fn the_signs_pre_step_signs_x_and_is_refused_where_it_cannot_apply() {
        let c = crate::cuda::generate::matrix(
            KernelClass::HadamardRotate,
            crate::cuda::format::KernelFormat::F32,
        )
        .unwrap()
        .remove(0);
        let sc = |j: &str| serde_json::from_str::<AbiSidecar>(j).unwrap();
        let args = r#""args": ["x", "y", "n_rows", {"bind": "1 / sqrt(block)", "type": "float"}]"#;
        for p in ["f32", "bf16-in"] {
            let j = format!(r#"{{"pre": "signs", "precision": "{p}", {args}}}"#);
            let a = KernelAbi::from_sidecar(KernelClass::HadamardRotate, &sc(&j), None).unwrap();
            assert!(a.pre_signs);
            let e = expected(&c, a.precision).unwrap();
            let l = a.launch(&c, &e).unwrap();
            let LaunchArg::In { bytes, .. } = &l.args[0] else {
                panic!("x first")
            };
            let w = a.precision.x.elem_bytes();
            let k = c.dims.k as usize;
            assert_eq!(bytes.len(), e.x_bytes.len());
            let mut flipped = 0;
            for (i, (got, orig)) in bytes.chunks(w).zip(e.x_bytes.chunks(w)).enumerate() {
                let mut want = orig.to_vec();
                if c.signs[i % k] < 0.0 {
                    want[w - 1] ^= 0x80;
                    flipped += 1;
                }
                assert_eq!(got, &want[..], "{p} element {i}");
            }
            assert!(flipped > 0 && flipped < bytes.len() / w, "{p}: {flipped}");
            // Without the pre-step the same parameters get x as it is.
            let j = format!(r#"{{"precision": "{p}", {args}}}"#);
            let plain =
                KernelAbi::from_sidecar(KernelClass::HadamardRotate, &sc(&j), None).unwrap();
            assert!(!plain.pre_signs);
            let l = plain.launch(&c, &e).unwrap();
            assert!(matches!(&l.args[0], LaunchArg::In { bytes, .. } if *bytes == e.x_bytes));
        }
        for (class, bad) in [
            (
                KernelClass::HadamardRotate,
                r#"{"pre": "negate"}"#.to_string(),
            ),
            (KernelClass::MulMatVec, r#"{"pre": "signs"}"#.to_string()),
            // The class default binds signs: they would be applied twice.
            (
                KernelClass::HadamardRotate,
                r#"{"pre": "signs"}"#.to_string(),
            ),
            (
                KernelClass::HadamardRotate,
                format!(r#"{{"pre": "signs", "args": ["x", "signs", "y", "k", "t", "block"]}}"#),
            ),
        ] {
            let e = KernelAbi::from_sidecar(class, &sc(&bad), None).unwrap_err();
            assert_eq!(e.class(), ErrorClass::KernelAbi, "{bad}: {e}");
            assert!(e.detail().contains("pre"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_binding_vocabulary_is_the_spec_table() {
        let b = &crate::spec::get().kernels.bindings;
        for class in KernelClass::ALL {
            let (ptrs, scalars) = vocabulary(class);
            let row = &b[class.name()];
            let list = |k: &str| -> Vec<String> {
                row[k]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_str().unwrap().to_string())
                    .collect()
            };
            assert_eq!(list("pointers"), ptrs, "{}", class.name());
            assert_eq!(list("scalars"), scalars, "{}", class.name());
            // Every name of the spec's launch rule and argument list is in the vocabulary.
            for a in &class.spec().args {
                assert!(
                    ptrs.contains(&a.name.as_str()) || scalars.contains(&a.name.as_str()),
                    "{}",
                    a.name
                );
            }
        }
        assert_eq!(
            b.keys().filter(|k| !k.starts_with('_')).count(),
            KernelClass::ALL.len()
        );
    }

    #[test]
    fn sidecars_bind_the_vocabulary_and_refuse_what_is_not_in_it() {
        let sc: AbiSidecar = serde_json::from_str(
            r#"{"precision": "bf16-out", "launch": {"grid": ["ceil(n / 8)", 1, 1], "block": [32, 8, 1], "shared": "8 * 32 * 4"},
                "args": ["w", {"bind": "x", "type": "const float*"}, {"bind": "y", "type": "__nv_bfloat16*"}, "k", {"bind": "n", "type": "long long"}, "scratch:n * 4"]}"#,
        )
        .unwrap();
        let a = KernelAbi::from_sidecar(KernelClass::MulMatVec, &sc, None).unwrap();
        assert_eq!(
            a.sig(),
            [
                "const unsigned char*",
                "const float*",
                "__nv_bfloat16*",
                "int",
                "long long",
                "void*"
            ]
        );
        let c = crate::cuda::generate::matrix(
            KernelClass::MulMatVec,
            crate::cuda::format::KernelFormat::PQ2_0,
        )
        .unwrap()
        .remove(1);
        let e = expected(&c, a.precision).unwrap();
        let l = a.launch(&c, &e).unwrap();
        assert_eq!(l.grid, [5, 1, 1]);
        assert_eq!(l.dyn_shared, 1024);
        assert_eq!(l.args[4], LaunchArg::I64(37));
        assert_eq!(l.out_bytes(), 37 * 2);
        // A float parameter takes a float expression, rounded to f32 once.
        let sc: AbiSidecar = serde_json::from_str(
            r#"{"args": ["w", "x", "y", "n", {"bind": "1 / sqrt(k) + 0.5e-1f", "type": "float"}]}"#,
        )
        .unwrap();
        let f = KernelAbi::from_sidecar(KernelClass::MulMatVec, &sc, None).unwrap();
        let l = f.launch(&c, &expected(&c, f.precision).unwrap()).unwrap();
        assert_eq!(l.args[4], LaunchArg::F32((1.0 / 32.0 + 0.05) as f32));
        for bad in [
            r#"{"args": ["w", "x", "y", "ids"]}"#,
            r#"{"args": ["w", "x", "k"]}"#,
            r#"{"args": ["w", "x", {"bind": "y", "type": "float*"}], "precision": "bf16-out"}"#,
            r#"{"args": ["w", "x", "y", {"bind": "n", "type": "float"}]}"#,
            r#"{"args": ["w", "x", "y", {"bind": "k / 2.0", "type": "int"}]}"#,
            r#"{"args": ["w", "x", "y", {"bind": "sqrt(k)", "type": "long long"}]}"#,
            r#"{"args": ["w", "x", "y", {"bind": "1 / (k - k)", "type": "float"}]}"#,
            r#"{"args": ["w", "x", "y", {"bind": "1 / sqrt(q)", "type": "float"}]}"#,
            r#"{"launch": {"grid": ["n / 7", 1, 1], "block": [32, 1, 1]}}"#,
            r#"{"launch": {"grid": [1, 1, 1], "block": [64, 32, 1]}}"#,
            r#"{"unknown": 1}"#,
        ] {
            let r = serde_json::from_str::<AbiSidecar>(bad)
                .map_err(|e| e.to_string())
                .and_then(|sc| {
                    KernelAbi::from_sidecar(KernelClass::MulMatVec, &sc, None)
                        .map_err(|e| e.to_string())
                })
                .and_then(|a| {
                    a.launch(&c, &expected(&c, a.precision).unwrap())
                        .map_err(|e| e.to_string())
                });
            assert!(r.is_err(), "{bad}");
        }
    }
}

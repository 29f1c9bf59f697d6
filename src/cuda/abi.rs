//! Kernel classes and their ABIs, read from `spec/kernels.json`.

use crate::error::{Error, ErrorClass, Result};
use crate::spec::{self, KernelClassSpec};

/// A kernel class (one ABI each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelClass {
    /// ggml blocks → f32 values.
    Dequantize,
    /// Selected rows of a ggml-block matrix → f32.
    GetRows,
    /// A ggml-block weight matrix × one activation vector.
    MulMatVec,
    /// Matrix × vector reading a `.ninfer` row-split object's planes.
    MulMatVecPlanes,
    /// A ggml-block weight matrix × token-major activations.
    MulMat,
    /// Block-diagonal Hadamard rotation with per-column signs.
    HadamardRotate,
    /// Matrix × token-major activations reading a `.ninfer` row-split object's planes (the
    /// T ≥ 1 version of [`KernelClass::MulMatVecPlanes`]; last, so the discriminants that seed
    /// the generated cases of the other classes stay as they were).
    MulMatPlanes,
}

impl KernelClass {
    /// Every class, in spec/kernels.json order.
    pub const ALL: [KernelClass; 7] = [
        KernelClass::Dequantize,
        KernelClass::GetRows,
        KernelClass::MulMatVec,
        KernelClass::MulMatVecPlanes,
        KernelClass::MulMat,
        KernelClass::HadamardRotate,
        KernelClass::MulMatPlanes,
    ];

    /// The class name spec/kernels.json and the CLI use.
    pub fn name(self) -> &'static str {
        match self {
            KernelClass::Dequantize => "dequantize",
            KernelClass::GetRows => "get_rows",
            KernelClass::MulMatVec => "mul_mat_vec",
            KernelClass::MulMatVecPlanes => "mul_mat_vec_planes",
            KernelClass::MulMat => "mul_mat",
            KernelClass::HadamardRotate => "hadamard_rotate",
            KernelClass::MulMatPlanes => "mul_mat_planes",
        }
    }

    /// The class called `s`, if any.
    pub fn from_name(s: &str) -> Option<KernelClass> {
        KernelClass::ALL.into_iter().find(|c| c.name() == s)
    }

    /// Parses a class name given on a command line.
    pub fn parse(s: &str) -> Result<KernelClass> {
        KernelClass::from_name(s).ok_or_else(|| {
            let all: Vec<&str> = KernelClass::ALL.iter().map(|c| c.name()).collect();
            Error::new(
                ErrorClass::CliUsage,
                "--class",
                format!("unknown kernel class {s:?}; one of {}", all.join(", ")),
            )
        })
    }

    /// The class's row of `spec/kernels.json`.
    pub fn spec(self) -> &'static KernelClassSpec {
        // cannot fire: spec/kernels.json is compiled in and the unit test
        // `every_class_has_a_spec_row_with_known_arg_types_and_one_output` looks every class up.
        #[allow(clippy::expect_used)]
        let row = spec::get()
            .kernels
            .class(self.name())
            .expect("every KernelClass has a row in spec/kernels.json (tested)");
        row
    }

    /// Whether the weights are a `.ninfer` row-split object (planes) rather than ggml blocks.
    pub fn is_planes(self) -> bool {
        matches!(
            self,
            KernelClass::MulMatVecPlanes | KernelClass::MulMatPlanes
        )
    }

    /// Bit-exact acceptance (dequantize, get_rows) rather than the error bound.
    pub fn exact(self) -> bool {
        self.spec().acceptance == "exact"
    }

    /// The argument kinds in order.
    #[cfg(any(test, feature = "internals"))]
    pub fn arg_kinds(self) -> Vec<ArgKind> {
        self.spec()
            .args
            .iter()
            .map(|a| {
                // cannot fire: the compiled-in table's argument types are all keys of
                // `arg_types` (the unit test above checks every class's arguments).
                #[allow(clippy::expect_used)]
                let k = ArgKind::from_c(&a.ty).expect("arg types are checked against arg_types");
                k
            })
            .collect()
    }
}

/// How one kernel argument is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg(any(test, feature = "internals"))]
pub enum ArgKind {
    /// A read-only input buffer (bytes, i32 or f32 — passed as a device pointer).
    Input,
    /// The f32 output buffer.
    Output,
    /// A 32-bit integer scalar.
    I32,
    /// A 64-bit integer scalar.
    I64,
}

#[cfg(any(test, feature = "internals"))]
impl ArgKind {
    /// The kind of a kernel parameter from its C type; `None` for a type the ABI does not allow.
    pub fn from_c(ty: &str) -> Option<ArgKind> {
        Some(match ty {
            "const unsigned char*" | "const int*" | "const float*" => ArgKind::Input,
            "float*" => ArgKind::Output,
            "int" => ArgKind::I32,
            "long long" => ArgKind::I64,
            _ => return None,
        })
    }

    /// The PTX parameter type NVRTC emits for it.
    pub fn ptx(self) -> &'static str {
        match self {
            ArgKind::I32 => ".u32",
            _ => ".u64",
        }
    }
}

/// One argument of a launch, in the order of the entry's parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum LaunchArg {
    /// A read-only device buffer: placed so that its last byte ends right before a guard page
    /// (its start 16-byte aligned), the slack before it poisoned.
    In {
        /// What the buffer holds (`w`, `x`, `ids`, ...), for messages.
        name: String,
        /// Its bytes.
        bytes: Vec<u8>,
    },
    /// A read-only input of `len` bytes of which only `runs` (byte offset, bytes) are real: a
    /// vocabulary-sized table past 2^31 bytes of which a case gathers a few rows. The host tier
    /// maps it sparsely (untouched pages are never allocated; pages holding no run fault when
    /// read), with a guard where a row offset wrapped to a signed 32-bit value lands; the device
    /// tier allocates the whole length once in GPU memory (zeros, with 2^31 zero bytes before a
    /// table past 2^31 bytes where a wrapped offset lands) and copies the runs in.
    Sparse {
        /// What the buffer holds (`w`), for messages.
        name: String,
        /// Its length in bytes.
        len: usize,
        /// The bytes that exist: (offset, bytes), not overlapping.
        runs: Vec<(usize, Vec<u8>)>,
    },
    /// The judged output buffer, pre-filled with the guard pattern and surrounded by guard bands.
    Out {
        /// Its name (`y`), for messages.
        name: String,
        /// Its length in bytes.
        bytes: usize,
    },
    /// Writable scratch memory the kernel may use (zero-filled, not judged, guarded like `Out`).
    Scratch {
        /// Its name, for messages.
        name: String,
        /// Its length in bytes.
        bytes: usize,
    },
    /// A 32-bit integer scalar.
    I32(i32),
    /// A 64-bit integer scalar.
    I64(i64),
    /// An f32 scalar.
    F32(f32),
}

/// Everything needed to launch one kernel on one case: the geometry, the dynamic shared
/// memory, and the arguments in parameter order (exactly one `Out`).
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// Grid dimensions (blocks).
    pub grid: [u32; 3],
    /// Block dimensions (threads).
    pub block: [u32; 3],
    /// Dynamic shared memory bytes (`extern __shared__`).
    pub dyn_shared: u32,
    /// The arguments, in parameter order.
    pub args: Vec<LaunchArg>,
}

impl Launch {
    /// Bytes of the judged output buffer (0 when the launch has none).
    #[cfg(any(test, feature = "internals"))]
    pub fn out_bytes(&self) -> usize {
        self.args
            .iter()
            .find_map(|a| match a {
                LaunchArg::Out { bytes, .. } => Some(*bytes),
                _ => None,
            })
            .unwrap_or(0)
    }
}

/// `a / b` rounded up, as a launch dimension.
#[cfg(any(feature = "internals", feature = "cuda"))]
pub fn ceil_div(a: u64, b: u64) -> u32 {
    a.div_ceil(b) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_has_a_spec_row_with_known_arg_types_and_one_output() {
        let k = &spec::get().kernels;
        assert_eq!(k.classes.len(), KernelClass::ALL.len());
        for c in KernelClass::ALL {
            let s = c.spec();
            for a in &s.args {
                assert!(k.arg_types.contains_key(&a.ty), "{}: {}", c.name(), a.ty);
                assert_eq!(
                    k.arg_types[&a.ty].ptx,
                    ArgKind::from_c(&a.ty).unwrap().ptx()
                );
            }
            let outs = c
                .arg_kinds()
                .iter()
                .filter(|a| **a == ArgKind::Output)
                .count();
            assert_eq!(outs, 1, "{}", c.name());
            assert!(s.acceptance == "exact" || s.acceptance == "bounded");
        }
    }

    #[test]
    fn every_kernel_named_by_the_tables_is_in_its_source() {
        let k = &spec::get().kernels;
        let kv = &spec::get().kernel_variants;
        let entries = k
            .reference_kernels
            .iter()
            .map(|r| (&r.entry, &r.source, &r.class))
            .chain(
                kv.wrong_variants
                    .iter()
                    .map(|w| (&w.entry, &w.source, &w.class)),
            )
            .chain(
                kv.unusual_correct
                    .iter()
                    .map(|u| (&u.entry, &u.source, &u.class)),
            );
        let mut seen = std::collections::BTreeSet::new();
        for (entry, source, class) in entries {
            assert!(seen.insert(entry.clone()), "{entry} listed twice");
            let text = super::super::sources::builtin(source).expect("source is built in");
            assert!(
                text.contains(&format!("{entry},")) || text.contains(&format!("{entry}(")),
                "{entry} not in {source}"
            );
            assert!(KernelClass::from_name(class).is_some(), "{class}");
        }
    }
}

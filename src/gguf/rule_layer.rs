//! Rule layers: which body of rules makes a GGUF input invalid (PROTOCOL.md §2.1,
//! `spec/gguf.json` `rule_layers`). Every refusal of the reference reader belongs to one layer,
//! and a reader declares the layers it implements.
//!
//! * [`RuleLayer::Mainline`]: `gguf_init_from_file` in mainline llama.cpp `ggml/src/gguf.cpp`
//!   refuses the file (with `no_alloc = true`, as llama.cpp's model loader calls it).
//! * [`RuleLayer::Loader`]: `gguf.cpp` accepts it, llama.cpp's model loader
//!   (`src/llama-model-loader.{h,cpp}`, `src/llama-model.cpp`) refuses it: tensor data outside
//!   the file, `general.architecture` missing or not a string, typed metadata reads, required
//!   tensors and shapes.
//! * [`RuleLayer::Recommended`]: neither refuses it; this suite recommends refusing it
//!   (strings not UTF-8, BOOL bytes other than 0/1, `n_dims` 0, a zero dimension, mixed id-42
//!   layouts, and in strict mode NUL twins: keys or tensor names equal up to a NUL byte, which
//!   mainline accepts but hands out as one C string).
//! * [`RuleLayer::Spec`]: the GGUF specification (`ggml/docs/gguf.md`) forbids it where
//!   mainline's rules differ (`Mode::Spec` cases).
//!
//! The reference reader's `Mode::Strict` applies mainline + loader + recommended.

use std::fmt;

/// The body of rules a refusal belongs to (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleLayer {
    /// Mainline `gguf.cpp` refuses the file.
    Mainline,
    /// llama.cpp's model loader refuses what `gguf.cpp` accepts.
    Loader,
    /// Neither refuses; this suite recommends refusing.
    Recommended,
    /// The GGUF specification forbids it where mainline differs.
    Spec,
}

impl RuleLayer {
    /// Every layer, in table order.
    pub const ALL: [RuleLayer; 4] = [
        RuleLayer::Mainline,
        RuleLayer::Loader,
        RuleLayer::Recommended,
        RuleLayer::Spec,
    ];

    /// The name used in `MANIFEST.json` (`rule_layer`) and `capabilities.json` (`rule_layers`).
    pub fn name(self) -> &'static str {
        match self {
            RuleLayer::Mainline => "mainline",
            RuleLayer::Loader => "loader",
            RuleLayer::Recommended => "recommended",
            RuleLayer::Spec => "spec",
        }
    }

    /// The layer named `s` (`mainline`, `loader`, `recommended`, `spec`).
    pub fn from_name(s: &str) -> Option<RuleLayer> {
        RuleLayer::ALL.into_iter().find(|l| l.name() == s)
    }
}

impl fmt::Display for RuleLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

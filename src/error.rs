//! One error type for every reader, writer and check in the crate.
//!
//! Each rule has its own [`ErrorClass`]; the ids are the registry in `spec/errors.json`
//! (a test keeps the enum and the table equal). An error always says what is wrong,
//! where (field and byte offset when there is one) and why.
//!
//! ```
//! use ninfer_ternary::{gguf, Error, ErrorClass};
//!
//! // A file that is not GGUF: the reader names the rule, the field and the byte offset.
//! let e: Error = gguf::parse(b"GGUX\x03\0\0\0", gguf::Mode::Strict).unwrap_err();
//! assert_eq!(e.class(), ErrorClass::GgufMagic);
//! assert_eq!((e.field(), e.offset()), ("header.magic", Some(0)));
//! assert_eq!(ErrorClass::from_id("gguf.magic"), Some(ErrorClass::GgufMagic));
//! assert_eq!(e.class().exit_code(), 2);
//! ```

use std::fmt;

macro_rules! error_classes {
    ($($variant:ident => $id:literal,)*) => {
        /// The rule an input broke. Ids match `spec/errors.json`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ErrorClass { $(#[doc = concat!("`", $id, "`: see its summary in `spec/errors.json`.")] $variant,)* }

        impl ErrorClass {
            /// Every class, in registry order.
            pub const ALL: &'static [ErrorClass] = &[$(ErrorClass::$variant,)*];

            /// The registry id, e.g. `gguf.magic`.
            pub fn id(self) -> &'static str {
                match self { $(ErrorClass::$variant => $id,)* }
            }

            /// Looks a class up by its registry id.
            pub fn from_id(id: &str) -> Option<ErrorClass> {
                match id { $($id => Some(ErrorClass::$variant),)* _ => None }
            }
        }
    };
}

error_classes! {
    IoRead => "io.read",
    IoWrite => "io.write",
    IoNotRegular => "io.not_regular",
    IoSameFile => "io.same_file",
    IoOutputExists => "io.output_exists",
    IoInputInOutput => "io.input_in_output",
    IoForeignOutput => "io.foreign_output",
    IoStdout => "io.stdout",
    IoMemory => "io.memory",
    GgufTruncated => "gguf.truncated",
    GgufMagic => "gguf.magic",
    GgufVersion => "gguf.version",
    GgufBigEndian => "gguf.big_endian",
    GgufCountOverflow => "gguf.count_overflow",
    GgufStringLength => "gguf.string_length",
    GgufStringUtf8 => "gguf.string_utf8",
    GgufKeyEmpty => "gguf.key_empty",
    GgufKeyDuplicate => "gguf.key_duplicate",
    GgufValueType => "gguf.value_type",
    GgufBoolValue => "gguf.bool_value",
    GgufNestedArray => "gguf.nested_array",
    GgufArrayLength => "gguf.array_length",
    GgufAlignmentType => "gguf.alignment_type",
    GgufAlignmentValue => "gguf.alignment_value",
    GgufArchitectureMissing => "gguf.architecture_missing",
    GgufMetadataType => "gguf.metadata_type",
    GgufMetadataMissing => "gguf.metadata_missing",
    GgufTensorNameLength => "gguf.tensor_name_length",
    GgufTensorNameDuplicate => "gguf.tensor_name_duplicate",
    GgufTensorNDims => "gguf.tensor_n_dims",
    GgufTensorDim => "gguf.tensor_dim",
    GgufTensorElementOverflow => "gguf.tensor_element_overflow",
    GgufTensorType => "gguf.tensor_type",
    GgufTensorBlockMultiple => "gguf.tensor_block_multiple",
    GgufTensorSizeOverflow => "gguf.tensor_size_overflow",
    GgufTensorOffsetAlignment => "gguf.tensor_offset_alignment",
    GgufTensorOffsetSequence => "gguf.tensor_offset_sequence",
    GgufTensorOutOfBounds => "gguf.tensor_out_of_bounds",
    GgufTensorOverlap => "gguf.tensor_overlap",
    GgufTensorMissing => "gguf.tensor_missing",
    GgufTensorShape => "gguf.tensor_shape",
    GgufId42Ambiguous => "gguf.id42_ambiguous",
    GgufNameNulTwin => "gguf.name_nul_twin",
    NinferTruncated => "ninfer.truncated",
    NinferMagic => "ninfer.magic",
    NinferMagicV1 => "ninfer.magic_v1",
    NinferMagicV3 => "ninfer.magic_v3",
    NinferMagicPart => "ninfer.magic_part",
    NinferArithOverflow => "ninfer.arith_overflow",
    NinferJsonSyntax => "ninfer.json_syntax",
    NinferDirMembers => "ninfer.dir_members",
    NinferDirType => "ninfer.dir_type",
    NinferDirIdentity => "ninfer.dir_identity",
    NinferDirName => "ninfer.dir_name",
    NinferDirDuplicateName => "ninfer.dir_duplicate_name",
    NinferDirKind => "ninfer.dir_kind",
    NinferDirFormat => "ninfer.dir_format",
    NinferDirLayout => "ninfer.dir_layout",
    NinferDirShape => "ninfer.dir_shape",
    NinferDirEncoding => "ninfer.dir_encoding",
    NinferDirResourceEmpty => "ninfer.dir_resource_empty",
    NinferDirBytes => "ninfer.dir_bytes",
    NinferRangeOrder => "ninfer.range_order",
    NinferRangeAlignment => "ninfer.range_alignment",
    NinferRangeBounds => "ninfer.range_bounds",
    NinferObjectMissing => "ninfer.object_missing",
    NinferObjectKind => "ninfer.object_kind",
    CodecLength => "codec.length",
    CodecScaleNonfinite => "codec.scale_nonfinite",
    CodecUnsupported => "codec.unsupported",
    PermShape => "perm.shape",
    HadamardShape => "hadamard.shape",
    PackTemplate => "pack.template",
    PackMixedTernary => "pack.mixed_ternary",
    PackHadamard => "pack.hadamard",
    PackProfile => "pack.profile",
    PackRoundtrip => "pack.roundtrip",
    SpecInvalid => "spec.invalid",
    CliUsage => "cli.usage",
    ProtocolParams => "protocol.params",
    DumpFormat => "dump.format",
    VerifyInput => "verify.input",
    VerifyMutation => "verify.mutation",
    CorpusManifest => "corpus.manifest",
    CorpusFilter => "corpus.filter",
    CorpusIntegrity => "corpus.integrity",
    ReaderCapabilities => "reader.capabilities",
    ReaderAdapter => "reader.adapter",
    KernelAbi => "kernel.abi",
    KernelCase => "kernel.case",
    KernelCompile => "kernel.compile",
    KernelEntryMissing => "kernel.entry_missing",
    KernelSignature => "kernel.signature",
    KernelTimeout => "kernel.timeout",
    KernelCrash => "kernel.crash",
    KernelOutOfBounds => "kernel.out_of_bounds",
    KernelOutOfBoundsRead => "kernel.out_of_bounds_read",
    KernelMisaligned => "kernel.misaligned",
    KernelNondeterministic => "kernel.nondeterministic",
    KernelDeadlock => "kernel.deadlock",
    KernelUnsupported => "kernel.unsupported",
    KernelTierUnavailable => "kernel.tier_unavailable",
    KernelInclude => "kernel.include",
    KernelCache => "kernel.cache",
    KernelCompileLimit => "kernel.compile_limit",
    InternalInvariant => "internal.invariant",
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// A specific, located failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The rule that was broken.
    class: ErrorClass,
    /// Absolute byte offset in the input where the offending field starts, when known.
    offset: Option<u64>,
    /// The field or object, e.g. `tensor_infos[3].dims[1]` or `text/final_norm`.
    field: String,
    /// What is wrong and why, in words a user can act on.
    detail: String,
}

impl Error {
    /// An error of `class` about `field`, with no byte offset.
    pub fn new(class: ErrorClass, field: impl Into<String>, detail: impl Into<String>) -> Self {
        Error {
            class,
            offset: None,
            field: field.into(),
            detail: detail.into(),
        }
    }

    /// An error of `class` about `field` at absolute byte `offset` of the input.
    pub fn at(
        class: ErrorClass,
        offset: u64,
        field: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        Error {
            class,
            offset: Some(offset),
            field: field.into(),
            detail: detail.into(),
        }
    }

    /// An I/O failure on `path`.
    pub fn io(class: ErrorClass, path: &std::path::Path, err: std::io::Error) -> Self {
        Error::new(class, path.display().to_string(), err.to_string())
    }

    /// The rule that was broken.
    pub fn class(&self) -> ErrorClass {
        self.class
    }

    /// Absolute byte offset in the input where the offending field starts, when known.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }

    /// The field or object, e.g. `tensor_infos[3].dims[1]` or `text/final_norm`.
    pub fn field(&self) -> &str {
        &self.field
    }

    /// What is wrong and why, in words a user can act on.
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// Sets the byte offset, keeping class, field and detail (a caller that knows where the
    /// failing value lies in its input).
    pub fn with_offset(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }

    /// Replaces the detail, keeping class, field and offset (a caller rewording a failure).
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
    }

    /// Replaces the field, keeping class and offset (used to add context from a caller).
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = field.into();
        self
    }

    /// The field rewritten from the old one (a caller that prefixes where it looked).
    pub(crate) fn map_field(mut self, f: impl FnOnce(&str) -> String) -> Self {
        self.field = f(&self.field);
        self
    }

    /// The offset rewritten from the old one (a caller that rebases a relative offset; `None`
    /// where the rebased offset cannot be stated).
    pub(crate) fn map_offset(mut self, f: impl FnOnce(Option<u64>) -> Option<u64>) -> Self {
        self.offset = f(self.offset);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] ", self.class)?;
        if !self.field.is_empty() {
            write!(f, "{}", crate::text::escape(&self.field))?;
            if let Some(off) = self.offset {
                write!(f, " at byte {off}")?;
            }
            write!(f, ": ")?;
        } else if let Some(off) = self.offset {
            write!(f, "at byte {off}: ")?;
        }
        f.write_str(&crate::text::escape(&self.detail))
    }
}

impl std::error::Error for Error {}

/// The crate's result type: [`Error`] unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl ErrorClass {
    /// The process exit status a command that stops on this error returns: 2, the project's
    /// code for "the input or the command line could not be processed" (0 = pass, 1 = a check
    /// failed). One place, so a CLI never invents its own status for a class.
    pub fn exit_code(self) -> u8 {
        2
    }
}

/// Checked arithmetic that turns overflow into a located error of `class`.
pub fn checked_mul(a: u64, b: u64, class: ErrorClass, what: &str) -> Result<u64> {
    a.checked_mul(b)
        .ok_or_else(|| Error::new(class, what, format!("{a} * {b} overflows u64")))
}

/// Checked addition that turns overflow into a located error of `class`.
pub fn checked_add(a: u64, b: u64, class: ErrorClass, what: &str) -> Result<u64> {
    a.checked_add(b)
        .ok_or_else(|| Error::new(class, what, format!("{a} + {b} overflows u64")))
}

/// `align_up(x, a)` for a power-of-two or any non-zero `a`, checked.
pub fn align_up(x: u64, a: u64, class: ErrorClass, what: &str) -> Result<u64> {
    debug_assert!(a > 0);
    Ok(checked_add(x, a - 1, class, what)? / a * a)
}

/// Rule switches for the single-fault proof of the conformance corpus
/// (`src/tests/single_fault.rs`): inside [`rule_switch::with_disabled`] the reference reader's
/// checks of the named classes are skipped where the parse can go on without them, so a
/// must-reject case can be shown to fail for its own rule and no other. Only builds with the
/// `internals` feature (tests, benches, fuzz) have the switch; elsewhere [`enforced`] is the
/// constant `true` and every check compiles as before.
#[cfg(any(test, feature = "internals"))]
pub mod rule_switch {
    use super::ErrorClass;
    use std::cell::{Cell, RefCell};

    thread_local! {
        static ANY: Cell<bool> = const { Cell::new(false) };
        static DISABLED: RefCell<Vec<ErrorClass>> = const { RefCell::new(Vec::new()) };
    }

    /// Runs `f` on this thread with the checks of `classes` disabled (restored afterwards,
    /// also on a panic).
    pub fn with_disabled<T>(classes: &[ErrorClass], f: impl FnOnce() -> T) -> T {
        struct Restore(Vec<ErrorClass>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let prev = std::mem::take(&mut self.0);
                ANY.with(|a| a.set(!prev.is_empty()));
                DISABLED.with(|d| *d.borrow_mut() = prev);
            }
        }
        let prev = DISABLED.with(|d| std::mem::replace(&mut *d.borrow_mut(), classes.to_vec()));
        ANY.with(|a| a.set(!classes.is_empty()));
        let _restore = Restore(prev);
        f()
    }

    /// Whether the check of `class` runs (false only inside [`with_disabled`] naming it).
    pub fn enforced(class: ErrorClass) -> bool {
        !ANY.with(Cell::get) || DISABLED.with(|d| !d.borrow().contains(&class))
    }
}

/// Whether the reference reader's check of `class` runs: always, except inside
/// [`rule_switch::with_disabled`] (an `internals`-only test switch). A check site reads
/// `if violated && enforced(class) { return Err(..) }` only where the parse can continue past
/// the violation; every other site stays unconditional.
#[cfg(any(test, feature = "internals"))]
#[inline]
pub fn enforced(class: ErrorClass) -> bool {
    rule_switch::enforced(class)
}

/// Whether the reference reader's check of `class` runs: in this build always (the rule switch
/// exists only with the `internals` feature).
#[cfg(not(any(test, feature = "internals")))]
#[inline(always)]
pub fn enforced(_class: ErrorClass) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_switch_disables_only_the_named_classes_and_restores_them() {
        use ErrorClass as C;
        assert!(enforced(C::GgufMagic));
        let inner = rule_switch::with_disabled(&[C::GgufMagic], || {
            // Nested: the inner set replaces the outer one, then the outer one is back.
            let nested = rule_switch::with_disabled(&[C::GgufVersion], || {
                (enforced(C::GgufMagic), enforced(C::GgufVersion))
            });
            (enforced(C::GgufMagic), enforced(C::GgufVersion), nested)
        });
        assert_eq!(inner, (false, true, (true, false)));
        assert!(enforced(C::GgufMagic) && enforced(C::GgufVersion));
        // A panic inside restores the switch too.
        let r = std::panic::catch_unwind(|| {
            rule_switch::with_disabled(&[C::GgufMagic], || panic!("inside"))
        });
        assert!(r.is_err() && enforced(C::GgufMagic));
        // The reader honours it: a bad magic is refused, and read on with the switch off.
        let mut f = b"GGUX\x03\0\0\0".to_vec();
        f.extend_from_slice(&[0; 16]);
        assert_eq!(
            crate::gguf::parse(&f, crate::gguf::Mode::Spec)
                .unwrap_err()
                .class,
            C::GgufMagic
        );
        let off = rule_switch::with_disabled(&[C::GgufMagic], || {
            crate::gguf::parse(&f, crate::gguf::Mode::Spec).map(|g| g.version)
        });
        assert_eq!(off.unwrap(), 3);
    }

    #[test]
    fn every_class_is_in_the_spec_registry_and_back() {
        let spec = crate::spec::get();
        let ids: Vec<&str> = spec.errors.classes.iter().map(|c| c.id.as_str()).collect();
        let ours: Vec<&str> = ErrorClass::ALL.iter().map(|c| c.id()).collect();
        assert_eq!(
            ids, ours,
            "src/error.rs and spec/errors.json must list the same classes in the same order"
        );
        for c in ErrorClass::ALL {
            assert_eq!(ErrorClass::from_id(c.id()), Some(*c));
        }
    }

    #[test]
    fn display_names_class_field_and_offset() {
        let e = Error::at(
            ErrorClass::GgufMagic,
            0,
            "header.magic",
            "expected 47 47 55 46",
        );
        assert_eq!(
            e.to_string(),
            "[gguf.magic] header.magic at byte 0: expected 47 47 55 46"
        );
    }
}

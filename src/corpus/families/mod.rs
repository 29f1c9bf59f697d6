//! One module per corpus family.

pub mod boundaries;
pub mod codec;
pub mod gguf;
pub mod kernel;
pub mod ninfer;
pub mod pack;
pub mod registry;
pub mod verify;

/// A generator step that failed on the generator's own fixed inputs: a bug in this tool, never
/// an input (`internal.invariant`), naming the step.
pub(crate) fn bug(step: &str, why: impl std::fmt::Display) -> crate::Error {
    crate::Error::new(
        crate::ErrorClass::InternalInvariant,
        format!("corpus generate: {step}"),
        why.to_string(),
    )
}

//! One module per corpus family.

#[cfg(feature = "internals")]
pub mod boundaries;
#[cfg(not(feature = "internals"))]
pub(crate) mod boundaries;
#[cfg(feature = "internals")]
pub mod codec;
#[cfg(not(feature = "internals"))]
pub(crate) mod codec;
#[cfg(feature = "internals")]
pub mod gguf;
#[cfg(not(feature = "internals"))]
pub(crate) mod gguf;
#[cfg(feature = "internals")]
pub mod kernel;
#[cfg(not(feature = "internals"))]
pub(crate) mod kernel;
#[cfg(feature = "internals")]
pub mod ninfer;
#[cfg(not(feature = "internals"))]
pub(crate) mod ninfer;
#[cfg(feature = "internals")]
pub mod pack;
#[cfg(not(feature = "internals"))]
pub(crate) mod pack;
#[cfg(feature = "internals")]
pub mod registry;
#[cfg(not(feature = "internals"))]
pub(crate) mod registry;
#[cfg(feature = "internals")]
pub mod verify;
#[cfg(not(feature = "internals"))]
pub(crate) mod verify;

/// A generator step that failed on the generator's own fixed inputs: a bug in this tool, never
/// an input (`internal.invariant`), naming the step.
pub(crate) fn bug(step: &str, why: impl std::fmt::Display) -> crate::Error {
    crate::Error::new(
        crate::ErrorClass::InternalInvariant,
        format!("corpus generate: {step}"),
        why.to_string(),
    )
}

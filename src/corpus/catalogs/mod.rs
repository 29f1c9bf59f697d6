//! Catalogs of deliberately broken and boundary inputs: the source of the conformance corpus's
//! hostile GGUF and `.ninfer` violation families, also read by the tests and the fuzz seeds.
//! They are data (same bytes on every call), not part of the readers: the readers never import
//! them.

#[cfg(feature = "internals")]
pub mod gguf_hostile;
#[cfg(not(feature = "internals"))]
pub(crate) mod gguf_hostile;
#[cfg(feature = "internals")]
pub mod ninfer_violations;
#[cfg(not(feature = "internals"))]
pub(crate) mod ninfer_violations;

//! Catalogs of deliberately broken and boundary inputs: the source of the conformance corpus's
//! hostile GGUF and `.ninfer` violation families, also read by the tests and the fuzz seeds.
//! They are data (same bytes on every call), not part of the readers: the readers never import
//! them.

internal_mod!(gguf_hostile);
internal_mod!(ninfer_violations);

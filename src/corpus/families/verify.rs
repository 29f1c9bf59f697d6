//! The verify family — PENDING HOOK.
//!
//! The verifier (`verify/`, FORMATS.md §8) is built on another branch. When it lands, this
//! function returns one case per mutation of the verifier issue: the artifact (and template,
//! source GGUF, dumps) as files, `kind: "verify"`, and the expected gate outcomes as the
//! observation (`{"gates": {"payload_order": "FAIL", ...}}`). The manifest, runner and
//! protocol need no change: add the kind to [`crate::corpus::protocol::respond`] and list the
//! cases here. PROTOCOL.md §8 documents the planned schema.

use crate::corpus::Case;

/// Why the family is empty (recorded in MANIFEST.json `pending`).
pub const PENDING: &str = "the verifier is built on another branch; its mutations and expected gate outcomes plug in here (PROTOCOL.md §8)";

pub fn cases() -> Vec<Case> {
    Vec::new()
}

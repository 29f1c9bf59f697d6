//! Fuzzing support for `ninfer-ternary`: the structured GGUF generator ([`structured`]), plus
//! the checks, seeds and target table of the `ninfer-ternary-testkit` crate (`testkit/`),
//! re-exported here for the targets in `fuzz_targets/`. The root crate's tests replay every seed
//! and finding through the same testkit functions.

pub use ninfer_ternary_testkit::{checks, deep, seeds, targets};
pub mod structured;

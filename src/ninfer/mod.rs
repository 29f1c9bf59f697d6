//! The `.ninfer` v2 container: prefix, JSON directory, payload (spec/ninfer-container.md#ninfer-container).

/// The JSON directory: parsing, validation, serialization.
pub mod directory;
/// A duplicate-refusing JSON value and a locator for error offsets.
pub mod json;
/// Encoded sizes of tensor layouts.
pub mod layout;
/// The zero-copy reader.
pub mod reader;
pub mod writer;

pub use directory::{Directory, Identity, Object, ObjectBody};
pub use reader::{Artifact, ObjectView, RowSplitView};
pub use writer::{plan, PlannedObject};

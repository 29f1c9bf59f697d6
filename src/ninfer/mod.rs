//! The `.ninfer` v2 container: prefix, JSON directory, payload (spec/ninfer-container.md#ninfer-container).

pub mod directory;
pub mod json;
pub mod layout;
pub mod reader;
pub mod writer;

pub use directory::{Directory, Identity, Object, ObjectBody};
pub use reader::{Artifact, ObjectView, RowSplitView};
pub use writer::{plan, PlannedObject};

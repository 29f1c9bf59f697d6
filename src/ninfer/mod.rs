//! The `.ninfer` v2 container: prefix, JSON directory, payload (FORMATS.md §3).

pub mod directory;
pub mod json;
pub mod layout;
pub mod reader;
pub mod violations;
pub mod writer;

pub use directory::{Directory, Identity, Object, ObjectBody};
pub use reader::{Artifact, ObjectView, RowSplitView};
pub use writer::{plan, PlannedObject};

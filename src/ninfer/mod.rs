//! The `.ninfer` v2 container: prefix, JSON directory, payload (spec/ninfer-container.md#ninfer-container).
//!
//! ```
//! use ninfer_ternary::ninfer::{plan, writer, Artifact, Identity, ObjectView, PlannedObject};
//! use ninfer_ternary::{Error, ErrorClass};
//!
//! // Plan, write and read back a container holding one raw-bytes resource.
//! let id = Identity { model_id: "m".into(), weights_id: "w".into() };
//! let dir = plan(id, vec![PlannedObject::resource("notes", 3)]).unwrap();
//! let mut bytes = Vec::new();
//! writer::write_to(&mut bytes, &dir, |_, _, w| {
//!     w.write_all(b"abc").map_err(|e| Error::new(ErrorClass::IoWrite, "notes", e.to_string()))
//! })
//! .unwrap();
//! let a = Artifact::parse(&bytes).unwrap();
//! let notes = a.object("notes").unwrap();
//! assert!(matches!(a.view_object(notes).unwrap(), ObjectView::Resource { .. }));
//! // A broken magic is refused with its class at byte 0.
//! let mut bad = bytes.clone();
//! bad[0] = b'X';
//! let Err(e) = Artifact::parse(&bad) else { panic!("a broken magic must be refused") };
//! assert_eq!((e.class(), e.offset()), (ErrorClass::NinferMagic, Some(0)));
//! ```

/// The JSON directory: parsing, validation, serialization.
pub mod directory;
/// A duplicate-refusing JSON value and a locator for error offsets.
#[cfg(feature = "internals")]
pub mod json;
#[cfg(not(feature = "internals"))]
pub(crate) mod json;
/// Encoded sizes of tensor layouts.
#[cfg(feature = "internals")]
pub mod layout;
#[cfg(not(feature = "internals"))]
pub(crate) mod layout;
/// The zero-copy reader.
pub mod reader;
pub mod writer;

pub use directory::{Directory, Identity, Object, ObjectBody};
pub use reader::{check_magic, Artifact, ObjectView, RowSplitView};
pub use writer::{plan, PlannedObject};

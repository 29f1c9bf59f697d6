//! `diff`: where two artifacts (two `.ninfer` files, or two GGUFs) differ, and whether it
//! matters. Identity and header differences; objects added, removed and reordered; for every
//! object whose bytes differ, the first differing byte mapped to plane / row / group / element,
//! the decoded values on both sides and their ULP distance, the counts of differing rows and
//! values, and a verdict: `identical`, `same values, different bytes` or `differs`.
//!
//! Both files are memory-mapped; equal objects are confirmed by a chunked comparison spread
//! over the thread budget (`pool`), so two identical multi-GB artifacts compare at the speed
//! the page cache or the disk delivers. Only an object whose bytes differ is decoded, row by
//! differing row.

#[cfg(feature = "internals")]
pub mod locate;
#[cfg(not(feature = "internals"))]
pub(crate) mod locate;
#[cfg(feature = "internals")]
pub mod report;
#[cfg(not(feature = "internals"))]
pub(crate) mod report;

use crate::error::{Error, ErrorClass, Result};
use crate::gguf::Mode;
use crate::ninfer::Artifact;
pub use report::{DiffReport, FieldDiff, Location, ObjectDiff, Verdict};

/// What kind of file a diff input is (by its first bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A `.ninfer` container (`NINFER`).
    Ninfer,
    /// A GGUF (`GGUF`).
    Gguf,
}

impl FileKind {
    /// The kind of `bytes`, or `None` when neither magic starts them.
    pub fn of(bytes: &[u8]) -> Option<FileKind> {
        if bytes.starts_with(b"NINFER") {
            Some(FileKind::Ninfer)
        } else if bytes.starts_with(b"GGUF") {
            Some(FileKind::Gguf)
        } else {
            None
        }
    }

    /// The name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            FileKind::Ninfer => "ninfer",
            FileKind::Gguf => "gguf",
        }
    }
}

/// Diffs two files of the same kind (`cli.usage` for a pair of different or unknown kinds;
/// the readers' own classes for a file that does not parse).
pub fn diff_bytes(a_name: &str, a: &[u8], b_name: &str, b: &[u8]) -> Result<DiffReport> {
    let kind = |name: &str, bytes: &[u8]| {
        FileKind::of(bytes).ok_or_else(|| {
            Error::at(
                ErrorClass::CliUsage,
                0,
                name,
                "neither a .ninfer (NINFER) nor a GGUF (GGUF) file: diff compares two of one kind",
            )
        })
    };
    let (ka, kb) = (kind(a_name, a)?, kind(b_name, b)?);
    if ka != kb {
        return Err(Error::new(
            ErrorClass::CliUsage,
            b_name,
            format!(
                "{a_name} is a {} file and {b_name} a {} file: diff compares two of one kind",
                ka.as_str(),
                kb.as_str()
            ),
        ));
    }
    // One parallel pass over both files first: byte-identical files (the common answer when a
    // packer has not regressed) need no object to be compared again.
    // Its per-chunk verdicts also spare the second look at every object that lies, at the same
    // offsets in both files, in equal chunks only.
    let chunks = locate::ChunkMap::of(a, b);
    let same_file = a.len() == b.len() && chunks.all_equal();
    let mut r = match ka {
        FileKind::Ninfer => {
            let (x, y) = (Artifact::parse(a)?, Artifact::parse(b)?);
            report::ninfer(&x, &y, &chunks)?
        }
        FileKind::Gguf => {
            let x = crate::gguf::parse(a, Mode::Strict)?;
            let y = crate::gguf::parse(b, Mode::Strict)?;
            report::gguf(&x, &y, &chunks)?
        }
    };
    r.kind = ka.as_str().to_string();
    r.a = a_name.to_string();
    r.b = b_name.to_string();
    r.a_bytes = a.len() as u64;
    r.b_bytes = b.len() as u64;
    r.files_byte_identical = same_file;
    r.finish();
    Ok(r)
}

/// Diffs two files on disk (memory-mapped).
pub fn diff_files(a: &std::path::Path, b: &std::path::Path) -> Result<DiffReport> {
    let (ma, mb) = (crate::fsio::map_file(a)?, crate::fsio::map_file(b)?);
    diff_bytes(&a.display().to_string(), &ma, &b.display().to_string(), &mb)
}

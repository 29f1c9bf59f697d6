//! Claiming an output before any work, and remembering the claim for the commit.
//!
//! The rules (README "Output rules"): the output's folder must exist and be writable; a file
//! output is never a FIFO, device, socket or directory; no output is, or contains, one of the
//! command's inputs; an existing output needs `--force`; and an existing *directory* is
//! replaced only when this tool wrote it (its [`MARKER`] file or its manifest) or it is empty.
//! Checking all of this first makes a bad output fail in milliseconds, not after the run.
//!
//! Each claim is recorded: the commit ([`super::commit`]) replaces an existing node only for a
//! path claimed with `--force`, so a file that appears while the command runs is never
//! replaced without it.

use crate::error::{Error, ErrorClass, Result};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::input;

/// The file this tool puts at the root of every directory output it writes: its presence
/// is what lets a later `--force` replace the directory (nothing else is ever removed).
pub const MARKER: &str = ".ninfer-ternary-output";

/// What kind of node an output is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// A single file, replaced by rename.
    File,
    /// A directory the command writes files into.
    Directory,
}

/// Whether a commit may replace an existing node at the output path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replace {
    /// Never: an existing node (even one that appeared during the run) makes the commit fail
    /// with `io.output_exists`, and the temporary file is removed.
    Never,
    /// Replace it (the user passed `--force`, or the tool wrote the file itself).
    Allow,
}

impl Replace {
    /// `Allow` when `force`, else `Never`.
    pub fn from_force(force: bool) -> Replace {
        if force {
            Replace::Allow
        } else {
            Replace::Never
        }
    }
}

/// Claims recorded by [`claim_output`]: (absolute path, kind, force).
static CLAIMS: Mutex<Vec<(PathBuf, OutputKind, bool)>> = Mutex::new(Vec::new());

/// `path` absolute, its folder resolved (symlinks, `..`), its own name kept as given, so that
/// the claim and the commit of one output compare equal however it was spelled.
fn key(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir)
            .map(|d| d.join(name))
            .unwrap_or(abs.clone()),
        _ => abs,
    }
}

/// How the commit of `path` may treat an existing node: as claimed (the file itself, or a
/// directory output that holds it); a path no command claimed keeps the library default,
/// `Allow` (library callers and scratch files; every CLI output is claimed).
pub fn replace_for(path: &Path) -> Replace {
    let k = key(path);
    let claims = CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, _, force)) = claims.iter().rev().find(|(p, _, _)| *p == k) {
        return Replace::from_force(*force);
    }
    let inside = claims
        .iter()
        .rev()
        .find(|(p, kind, _)| *kind == OutputKind::Directory && k.starts_with(p));
    match inside {
        Some((_, _, force)) => Replace::from_force(*force),
        None => Replace::Allow,
    }
}

/// The folder an output is created in (`.` for a bare name).
pub fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Refuses an output whose folder is missing, not a folder, or not writable (a read-only file
/// system, no permission): the error names the user's path and says why, before any work.
pub fn check_parent(path: &Path) -> Result<()> {
    let dir = parent_of(path);
    let bad = |why: String| Error::new(ErrorClass::IoWrite, path.display().to_string(), why);
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(m) => {
            return Err(bad(format!(
                "its folder {} is {}, not a folder",
                dir.display(),
                input::kind_of(&m)
            )))
        }
        Err(e) => {
            return Err(bad(format!(
                "its folder {} cannot be used: {e}",
                dir.display()
            )))
        }
    }
    // A probe file, created exclusively and removed at once: unlike access(2) it also
    // answers for root, for read-only mounts and for pseudo file systems (/proc).
    tempfile::Builder::new()
        .prefix(".ninfer-ternary-probe-")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| {
            bad(format!(
                "its folder {} is not writable ({})",
                dir.display(),
                e.kind()
            ))
        })
}

/// Checks, before any work, that a command may write `path` (module docs) and records the
/// claim for the commit. `inputs` are the command's input files: none may be the output (by
/// device and inode, so hard links, symlinks and other spellings count: `io.same_file`) nor
/// lie inside a directory output (`io.input_in_output`), `--force` or not.
pub fn claim_output(path: &Path, kind: OutputKind, force: bool, inputs: &[&Path]) -> Result<()> {
    check_parent(path)?;
    let link = std::fs::symlink_metadata(path).ok();
    let meta = match std::fs::metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(ErrorClass::IoWrite, path, e)),
    };
    match (&link, &meta) {
        (None, _) => {}
        // A dangling symlink: the commit replaces the link (never its target), so it needs
        // --force like any existing entry.
        (Some(_), None) => refuse_existing(path, force)?,
        (Some(l), Some(m)) => {
            if kind == OutputKind::Directory && l.file_type().is_symlink() {
                return Err(Error::new(
                    ErrorClass::IoNotRegular,
                    path.display().to_string(),
                    "is a symbolic link; a directory output must be a real directory \
                     (the tool never writes through a link)",
                ));
            }
            check_kind(path, m, kind)?;
            check_inputs(path, m, kind, inputs)?;
            refuse_existing(path, force)?;
            if kind == OutputKind::Directory {
                check_ours(path)?;
            }
        }
    }
    let mut claims = CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
    claims.push((key(path), kind, force));
    Ok(())
}

fn check_kind(path: &Path, meta: &std::fs::Metadata, kind: OutputKind) -> Result<()> {
    match kind {
        OutputKind::File if meta.is_file() => Ok(()),
        OutputKind::Directory if meta.is_dir() => Ok(()),
        OutputKind::File => Err(input::not_regular(path, meta, "output")),
        OutputKind::Directory => {
            let e = input::not_regular(path, meta, "output directory").with_detail(format!(
                "is {}; the output must be a directory",
                input::kind_of(meta)
            ));
            Err(e)
        }
    }
}

fn check_inputs(
    path: &Path,
    meta: &std::fs::Metadata,
    kind: OutputKind,
    inputs: &[&Path],
) -> Result<()> {
    let out_real = std::fs::canonicalize(path).ok();
    for input in inputs {
        let Ok(im) = std::fs::metadata(input) else {
            continue;
        };
        if (im.dev(), im.ino()) == (meta.dev(), meta.ino()) {
            return Err(Error::new(
                ErrorClass::IoSameFile,
                path.display().to_string(),
                format!(
                    "is the same file as the input {} (device {}, inode {}); \
                     writing it would destroy the input",
                    input.display(),
                    meta.dev(),
                    meta.ino()
                ),
            ));
        }
        let in_real = std::fs::canonicalize(input).ok();
        if let (OutputKind::Directory, Some(o), Some(i)) = (kind, &out_real, &in_real) {
            if i.starts_with(o) {
                return Err(Error::new(
                    ErrorClass::IoInputInOutput,
                    path.display().to_string(),
                    format!(
                        "holds the input {} ({}); replacing the directory would destroy \
                         the input — write the output somewhere else",
                        input.display(),
                        i.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn refuse_existing(path: &Path, force: bool) -> Result<()> {
    if force {
        return Ok(());
    }
    Err(Error::new(
        ErrorClass::IoOutputExists,
        path.display().to_string(),
        "exists; pass --force to replace it",
    ))
}

/// Whether directory `dir` may be replaced as a whole: it is empty or carries [`MARKER`].
pub fn is_ours_or_empty(dir: &Path) -> bool {
    if std::fs::symlink_metadata(dir.join(MARKER)).is_ok_and(|m| m.is_file()) {
        return true;
    }
    std::fs::read_dir(dir).is_ok_and(|mut rd| rd.next().is_none())
}

/// Refuses a directory this tool did not write (no [`MARKER`], not empty), `--force` or not.
pub fn check_ours(dir: &Path) -> Result<()> {
    if is_ours_or_empty(dir) {
        return Ok(());
    }
    Err(foreign(dir))
}

/// The error for a non-empty directory this tool did not write.
pub fn foreign(dir: &Path) -> Error {
    Error::new(
        ErrorClass::IoForeignOutput,
        dir.display().to_string(),
        format!(
            "is a non-empty directory this tool did not write (no {MARKER} file); it is never \
             replaced, even with --force — name a new or empty directory"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_output_refuses_inputs_by_identity_and_non_regular_nodes() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.gguf");
        std::fs::write(&input, b"in").unwrap();
        let hard = dir.path().join("hard");
        std::fs::hard_link(&input, &hard).unwrap();
        let soft = dir.path().join("soft");
        std::os::unix::fs::symlink(&input, &soft).unwrap();
        let dotted = dir.path().join(".").join("in.gguf");
        for spelling in [&input, &hard, &soft, &dotted] {
            let e = claim_output(spelling, OutputKind::File, true, &[&input]).unwrap_err();
            assert_eq!(e.class(), ErrorClass::IoSameFile, "{}", spelling.display());
        }
        // Negative control: a different existing file with --force is allowed, without is not.
        let other = dir.path().join("other");
        std::fs::write(&other, b"o").unwrap();
        claim_output(&other, OutputKind::File, true, &[&input]).unwrap();
        let e = claim_output(&other, OutputKind::File, false, &[&input]).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoOutputExists);
        claim_output(&dir.path().join("new"), OutputKind::File, false, &[&input]).unwrap();
        // Non-regular outputs, even with --force.
        let e = claim_output(Path::new("/dev/null"), OutputKind::File, true, &[]).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoNotRegular);
        let e = claim_output(dir.path(), OutputKind::File, true, &[]).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoNotRegular);
        let e = claim_output(&other, OutputKind::Directory, true, &[]).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoNotRegular);
    }

    #[test]
    fn a_directory_is_replaced_only_when_ours_or_empty_and_never_holding_an_input() {
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("out");
        std::fs::create_dir(&d).unwrap();
        claim_output(&d, OutputKind::Directory, true, &[]).unwrap();
        std::fs::write(d.join("user.txt"), b"mine").unwrap();
        let e = claim_output(&d, OutputKind::Directory, true, &[]).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoForeignOutput);
        std::fs::write(d.join(MARKER), b"").unwrap();
        claim_output(&d, OutputKind::Directory, true, &[]).unwrap();
        // An input anywhere inside the output is refused, marker or not, force or not.
        let input = d.join("sub").join("a.ninfer");
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(&input, b"x").unwrap();
        for force in [true, false] {
            let e = claim_output(&d, OutputKind::Directory, force, &[&input]).unwrap_err();
            assert_eq!(e.class(), ErrorClass::IoInputInOutput);
        }
        // Negative control: an input beside the directory is fine.
        let beside = root.path().join("b.ninfer");
        std::fs::write(&beside, b"x").unwrap();
        claim_output(&d, OutputKind::Directory, true, &[&beside]).unwrap();
        // A symlinked directory output is refused.
        let link = root.path().join("link");
        std::os::unix::fs::symlink(&d, &link).unwrap();
        let e = claim_output(&link, OutputKind::Directory, true, &[]).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoNotRegular);
    }

    #[test]
    fn a_missing_or_unwritable_folder_is_refused_by_the_users_path() {
        let p = Path::new("/nonexistent/dir/r.json");
        let e = claim_output(p, OutputKind::File, false, &[]).unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoWrite);
        assert_eq!(e.field(), "/nonexistent/dir/r.json");
        // /proc is mounted read-only for new files.
        let e = claim_output(Path::new("/proc/r.json"), OutputKind::File, false, &[]);
        assert_eq!(e.unwrap_err().class(), ErrorClass::IoWrite);
        // Negative control: a writable folder passes.
        let d = tempfile::tempdir().unwrap();
        claim_output(&d.path().join("r.json"), OutputKind::File, false, &[]).unwrap();
    }

    #[test]
    fn claims_are_remembered_for_the_commit() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a"), d.path().join("b"));
        claim_output(&a, OutputKind::File, false, &[]).unwrap();
        claim_output(&b, OutputKind::File, true, &[]).unwrap();
        assert_eq!(replace_for(&a), Replace::Never);
        assert_eq!(replace_for(&d.path().join(".").join("a")), Replace::Never);
        assert_eq!(replace_for(&b), Replace::Allow);
        let out = d.path().join("dir");
        claim_output(&out, OutputKind::Directory, false, &[]).unwrap();
        assert_eq!(replace_for(&out.join("x")), Replace::Never);
        // Negative control: an unclaimed path keeps the library default.
        assert_eq!(replace_for(&d.path().join("c")), Replace::Allow);
    }
}

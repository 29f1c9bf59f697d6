//! The corpus is data (issue #32): before a `check-reader` run, and again after it, every file
//! the manifest names for the selected cases — the case file and each extra input — must be
//! confined to the corpus root and hold the size and sha256 the manifest records.
//!
//! Confined means: a relative path without `..` (and not absolute); once resolved (symlinks
//! followed) it still lies under the root's canonical path; and it is a regular file. A symlink
//! whose target resolves inside the root is allowed (a copy tool may deduplicate that way; the
//! target is what is hashed); one that leaves the root, or dangles, is refused. A path that fails
//! confinement is never opened and its metadata never reported, so nothing outside the corpus
//! reaches a message. A failure is `corpus.integrity`, never a reader verdict: the reference
//! reader is not blamed for a tampered corpus, and a changed file voids the run.

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::manifest::{CaseEntry, Manifest};
use crate::error::{Error, ErrorClass, Result};

/// When a check runs, for the wording of its errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Before any adapter ran.
    Before,
    /// After the run: a difference now means the corpus changed while adapters ran.
    After,
}

/// What a file's metadata says about its content: any write changes the ctime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

/// The stamp of `rel` as it is now, if it is still confined.
fn stamp_now(root: &Path, rel: &str, stage: Stage) -> Option<Stamp> {
    let path = confine(root, rel, stage).ok()?;
    std::fs::symlink_metadata(path).ok().map(|m| Stamp::of(&m))
}

/// The files a check found intact, with their metadata, for [`Manifest::verify_unchanged`].
#[derive(Clone, Debug, Default)]
pub struct Snapshot(BTreeMap<String, Stamp>);

/// One distinct file to check: what the manifest records for it, and which case names it.
struct Expected<'m> {
    sha256: &'m str,
    bytes: u64,
    case: &'m str,
}

impl Manifest {
    /// The cases whose id `select` accepts, in manifest order.
    pub fn selected(&self, select: impl Fn(&str) -> bool) -> Vec<&CaseEntry> {
        self.cases.iter().filter(|c| select(&c.id)).collect()
    }

    /// Checks that every file of `selected` (case files and inputs) is confined to `root` and
    /// matches the manifest's size and sha256 (`corpus.integrity`). `stage` words the error:
    /// after a run a difference voids the run.
    pub fn verify_integrity(
        &self,
        root: &Path,
        selected: &[&CaseEntry],
        stage: Stage,
    ) -> Result<Snapshot> {
        self.check(root, selected, stage, None)
    }

    /// The check after a run, given the snapshot of the check before it: a file whose inode,
    /// size, mtime and ctime are all as they were has not been written since (any write, even
    /// one that puts the old mtime back, moves the ctime, which no unprivileged process can
    /// set) and is not hashed again; every other file is checked in full.
    pub fn verify_unchanged(
        &self,
        root: &Path,
        selected: &[&CaseEntry],
        before: &Snapshot,
    ) -> Result<()> {
        self.check(root, selected, Stage::After, Some(before))
            .map(drop)
    }

    fn check(
        &self,
        root: &Path,
        selected: &[&CaseEntry],
        stage: Stage,
        before: Option<&Snapshot>,
    ) -> Result<Snapshot> {
        let root = root.canonicalize().map_err(|e| {
            fail(
                stage,
                &root.display().to_string(),
                format!("the corpus root cannot be resolved: {e}"),
            )
        })?;
        let files: Vec<(&str, Expected<'_>)> =
            self.expected(selected, stage)?.into_iter().collect();
        // Hashing is most of a persistent run's overhead (tens of MB): one file at a time per
        // core; the first error in file order is reported, whichever thread found it.
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<(usize, Result<Stamp>)>> = Mutex::default();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((rel, want)) = files.get(i) else {
                        return;
                    };
                    let unchanged = before
                        .and_then(|b| b.0.get(*rel))
                        .filter(|then| stamp_now(&root, rel, stage).as_ref() == Some(*then));
                    let r = match unchanged {
                        Some(then) => Ok(*then),
                        None => check_file(&root, rel, want, stage),
                    };
                    results
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .push((i, r));
                });
            }
        });
        let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
        results.sort_by_key(|(i, _)| *i);
        let mut stamps = BTreeMap::new();
        for (i, r) in results {
            stamps.insert(files[i].0.to_string(), r?);
        }
        Ok(Snapshot(stamps))
    }

    /// Every distinct file of `selected` with what the manifest records for it. An input has no
    /// digest of its own: it must be the `file` of some case of the manifest, whose `sha256`
    /// and `bytes` then apply; two cases naming one file must agree on both.
    fn expected<'m>(
        &'m self,
        selected: &[&'m CaseEntry],
        stage: Stage,
    ) -> Result<BTreeMap<&'m str, Expected<'m>>> {
        let by_file: BTreeMap<&str, &CaseEntry> =
            self.cases.iter().map(|c| (c.file.as_str(), c)).collect();
        let mut out: BTreeMap<&str, Expected<'m>> = BTreeMap::new();
        for case in selected {
            let mut files = vec![(case.file.as_str(), *case)];
            for input in &case.inputs {
                let owner = by_file.get(input.as_str()).ok_or_else(|| {
                    fail(
                        stage,
                        input,
                        format!(
                            "case {} names input '{input}', which is no case's file in the \
                             manifest, so no digest covers it",
                            case.id
                        ),
                    )
                })?;
                files.push((input.as_str(), *owner));
            }
            for (rel, owner) in files {
                let want = Expected {
                    sha256: &owner.sha256,
                    bytes: owner.bytes,
                    case: &owner.id,
                };
                if let Some(seen) = out.get(rel) {
                    if (seen.sha256, seen.bytes) != (want.sha256, want.bytes) {
                        return Err(fail(
                            stage,
                            rel,
                            format!(
                                "the manifest contradicts itself: case {} records {} bytes sha256 \
                                 {}, case {} records {} bytes sha256 {}",
                                seen.case,
                                seen.bytes,
                                seen.sha256,
                                want.case,
                                want.bytes,
                                want.sha256
                            ),
                        ));
                    }
                    continue;
                }
                out.insert(rel, want);
            }
        }
        Ok(out)
    }
}

/// The path `rel` names under `root` (canonical), refused unless it is relative, free of `..`,
/// resolves under `root` and is a regular file. Nothing about a path that leaves the root
/// (its target, size or kind) is reported.
pub fn confine(root: &Path, rel: &str, stage: Stage) -> Result<PathBuf> {
    let lexical = if rel.is_empty() {
        Some("the path is empty")
    } else if rel.contains('\0') {
        Some("the path contains a NUL byte")
    } else {
        Path::new(rel).components().find_map(|c| match c {
            Component::RootDir | Component::Prefix(_) => {
                Some("the path is absolute; manifest paths are relative to the corpus root")
            }
            Component::ParentDir => Some("the path contains '..'; it could leave the corpus root"),
            Component::CurDir | Component::Normal(_) => None,
        })
    };
    if let Some(why) = lexical {
        return Err(fail(stage, rel, why.to_string()));
    }
    let resolved = root.join(rel).canonicalize().map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => {
                "missing (or a symlink whose target does not exist)".to_string()
            }
            _ => format!("cannot be resolved: {e}"),
        };
        fail(stage, rel, why)
    })?;
    if !resolved.starts_with(root) {
        return Err(fail(
            stage,
            rel,
            "resolves outside the corpus root (through a symlink); it is not read".to_string(),
        ));
    }
    let meta = std::fs::metadata(&resolved)
        .map_err(|e| fail(stage, rel, format!("cannot be inspected: {e}")))?;
    if !meta.is_file() {
        return Err(fail(
            stage,
            rel,
            format!(
                "is {}, not a regular file",
                if meta.is_dir() {
                    "a directory"
                } else {
                    "a special file"
                }
            ),
        ));
    }
    Ok(resolved)
}

/// Confines `rel`, then compares its size and sha256 with the manifest's.
fn check_file(root: &Path, rel: &str, want: &Expected<'_>, stage: Stage) -> Result<Stamp> {
    let path = confine(root, rel, stage)?;
    // The resolved path has no symlink left: O_NOFOLLOW refuses one swapped in since.
    let file = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .map_err(|e| fail(stage, rel, format!("cannot be opened: {e}")))?
    };
    let meta = file
        .metadata()
        .map_err(|e| fail(stage, rel, format!("cannot be inspected: {e}")))?;
    if !meta.is_file() || meta.len() != want.bytes {
        return Err(fail(
            stage,
            rel,
            format!(
                "is {} bytes, the manifest records {} (case {})",
                meta.len(),
                want.bytes,
                want.case
            ),
        ));
    }
    // Bounded by the recorded size (+1 to see growth), streamed: no allocation by file size.
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut taken = file.take(want.bytes.saturating_add(1));
    let mut total = 0u64;
    loop {
        let n = taken
            .read(&mut buf)
            .map_err(|e| fail(stage, rel, format!("cannot be read: {e}")))?;
        if n == 0 {
            break;
        }
        total += n as u64;
        hasher.update(&buf[..n]);
    }
    let got: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if total != want.bytes {
        return Err(fail(
            stage,
            rel,
            format!(
                "changed size while it was read ({total} bytes read, the manifest records {}; case {})",
                want.bytes, want.case
            ),
        ));
    }
    if got != want.sha256 {
        return Err(fail(
            stage,
            rel,
            format!(
                "sha256 is {got}, the manifest records {} (case {}): the file was modified",
                want.sha256, want.case
            ),
        ));
    }
    Ok(Stamp::of(&meta))
}

fn fail(stage: Stage, rel: &str, why: String) -> Error {
    let detail = match stage {
        Stage::Before => format!("{why}; no case was run (regenerate or restore the corpus)"),
        Stage::After => format!(
            "{why} — it changed while the adapters ran, so this run's results are void (not a \
             reader verdict); restore the corpus and run again"
        ),
    };
    Error::new(ErrorClass::CorpusIntegrity, rel, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn relative_paths_inside_the_root_are_confined() {
        let d = tmp();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("gguf")).unwrap();
        std::fs::write(root.join("gguf/a.gguf"), b"x").unwrap();
        // Unusual but harmless: a leading './'.
        for rel in ["gguf/a.gguf", "./gguf/a.gguf"] {
            assert_eq!(
                confine(&root, rel, Stage::Before).unwrap(),
                root.join("gguf/a.gguf")
            );
        }
    }

    #[test]
    fn absolute_parent_empty_and_missing_paths_are_refused() {
        let d = tmp();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("gguf")).unwrap();
        for (rel, why) in [
            ("/etc/hostname", "absolute"),
            ("../x", "'..'"),
            ("gguf/../gguf/a", "'..'"),
            ("", "empty"),
            ("gguf/none", "missing"),
            ("gguf", "directory"),
        ] {
            let e = confine(&root, rel, Stage::Before).unwrap_err();
            assert_eq!(e.class(), ErrorClass::CorpusIntegrity, "{rel}");
            assert!(e.detail().contains(why), "{rel}: {e}");
        }
    }

    #[test]
    fn symlinks_are_followed_only_inside_the_root() {
        let outer = tmp();
        let root = outer.path().join("corpus");
        std::fs::create_dir(&root).unwrap();
        let root = root.canonicalize().unwrap();
        std::fs::write(outer.path().join("secret"), b"hunter2").unwrap();
        std::fs::write(root.join("real"), b"x").unwrap();
        std::os::unix::fs::symlink(outer.path().join("secret"), root.join("out")).unwrap();
        std::os::unix::fs::symlink("real", root.join("in")).unwrap();
        std::os::unix::fs::symlink("nowhere", root.join("dangling")).unwrap();
        assert_eq!(
            confine(&root, "in", Stage::Before).unwrap(),
            root.join("real")
        );
        let e = confine(&root, "out", Stage::Before).unwrap_err();
        assert!(e.detail().contains("outside"), "{e}");
        // Neither the target's name nor its size is reported.
        assert!(
            !e.to_string().contains("secret") && !e.to_string().contains('7'),
            "{e}"
        );
        assert!(confine(&root, "dangling", Stage::Before).is_err());
    }
}

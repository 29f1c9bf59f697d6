//! Long in-order reads of memory-mapped inputs that may not be in memory.
//!
//! Why: on the CI VM a read through the page cache costs far more CPU than the disk time, because
//! every fresh page-cache page is a host fault (virtio-balloon free-page reporting). A cold
//! `verify --sweep` of the 27B artifact spent 13.8 s reading 6.17 GB through its maps, where
//! `dd iflag=direct` reads at 0.9–1.8 GB/s (benches/RESULTS.md, "cold verify"). So a reader that
//! walks a long range of a map in order asks [`for_each_block`] for it, block by block:
//! - a block already in memory is handed over as the map's own bytes (no copy);
//! - a block that is not is read with `O_DIRECT` into one of a few reused page-aligned buffers,
//!   by a reader thread one block ahead of the consumer, and the page cache is left alone.
//!
//! The bytes are the same either way; only where they come from differs. Direct reads are used
//! only where they can work and where residency can be seen:
//! - the memory must be a map made by [`super::map_file`] (anything else is used in place);
//! - the file system must accept `O_DIRECT` on the file; a refused switch or a failed read falls
//!   back to the map for the rest of that file;
//! - Linux reports a file's page-cache residency (`mincore`) only to a process that owns the
//!   file or may write it (kernel commit 134fca9063ad, Linux 5.0); for any other file every
//!   page reads as resident, so such files are always read through the map, as before.
//!
//! The cost: what a walk read direct is not left in the page cache, so a second run reads it
//! from disk again. `NINFER_READ=mapped` restores reads through the maps (and the cache).

use super::direct_io::{set_direct, AlignedBuf, ALIGN};
use std::fs::File;
use std::ops::{ControlFlow, Range};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex};

/// Bytes of one block across all lanes: 16 MiB, four device requests of the CI VM's 4 MiB
/// `max_sectors_kb` in flight (`dd iflag=direct` of 2 GiB: 1.0 GB/s with 4 MiB blocks, 1.8 GB/s
/// with 16 MiB, 1.5 GB/s with 32 MiB).
const BLOCK: usize = 16 << 20;
/// Lanes one buffer has room for, each with a page of slack on both sides for alignment.
const MAX_LANES: usize = 4;
/// Capacity of one block buffer.
const BUF: usize = BLOCK + MAX_LANES * 2 * ALIGN;
/// Buffers one walk uses: one with the consumer, one being read.
const SETS: usize = 2;
/// Free buffers kept between walks, so later walks reuse pages instead of faulting in new ones.
const POOL_KEEP: usize = 4;
/// Walks shorter than this read through the map: a reader thread and direct requests cost more
/// than they save on a few pages.
pub const MIN_DIRECT: usize = 256 << 10;
/// [`MIN_DIRECT`], lowered by tests so that the nano model's small objects take the direct path.
static MIN_DIRECT_NOW: AtomicUsize = AtomicUsize::new(MIN_DIRECT);

/// Lets the tests walk small inputs direct (the bytes are the same either way, so a concurrent
/// test that sees the lower threshold is unaffected).
#[cfg(test)]
pub(crate) fn set_min_direct_for_tests(n: usize) {
    MIN_DIRECT_NOW.store(n, Ordering::Relaxed);
}

/// How long walks read cold stretches of a map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadMode {
    /// Direct into reused buffers (the default).
    Direct,
    /// Through the map and the page cache (`NINFER_READ=mapped`).
    Mapped,
}

impl ReadMode {
    /// The mode `NINFER_READ` asks for: `mapped`, else direct.
    pub fn parse(v: Option<&str>) -> ReadMode {
        match v {
            Some("mapped") => ReadMode::Mapped,
            _ => ReadMode::Direct,
        }
    }

    /// The process's mode, read from the environment once.
    pub fn current() -> ReadMode {
        static M: std::sync::OnceLock<ReadMode> = std::sync::OnceLock::new();
        *M.get_or_init(|| ReadMode::parse(std::env::var("NINFER_READ").ok().as_deref()))
    }
}

/// Bytes read with `O_DIRECT` by every walk so far, page padding at both ends included (for
/// stats lines and tests).
pub(crate) static DIRECT_BYTES: AtomicU64 = AtomicU64::new(0);

const DIRECT_UNTRIED: u8 = 0;
const DIRECT_ON: u8 = 1;
const DIRECT_OFF: u8 = 2;

/// A file map that walks may read direct.
struct Region {
    start: usize,
    len: usize,
    file: File,
    direct: AtomicU8,
}

impl Region {
    /// Whether direct reads may be tried (switching the file to `O_DIRECT` on first use).
    fn direct_ok(&self) -> bool {
        match self.direct.load(Ordering::Acquire) {
            DIRECT_ON => true,
            DIRECT_OFF => false,
            _ => {
                let on = set_direct(&self.file, true).is_ok();
                self.direct
                    .store(if on { DIRECT_ON } else { DIRECT_OFF }, Ordering::Release);
                on
            }
        }
    }

    fn give_up_direct(&self) {
        self.direct.store(DIRECT_OFF, Ordering::Release);
    }
}

static REGIONS: Mutex<Vec<Arc<Region>>> = Mutex::new(Vec::new());

fn regions() -> std::sync::MutexGuard<'static, Vec<Arc<Region>>> {
    REGIONS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Keeps a map registered for direct reads; dropping it (before the map) unregisters it.
pub(crate) struct Registration(usize);

impl Drop for Registration {
    fn drop(&mut self) {
        regions().retain(|r| r.start != self.0);
    }
}

/// Registers `map`, a read-only map of `file`, for direct reads (`None` for an empty map). The
/// registration must be dropped before the map is unmapped.
pub(crate) fn register(map: &[u8], file: File) -> Option<Registration> {
    if map.is_empty() {
        return None;
    }
    let start = map.as_ptr() as usize;
    regions().push(Arc::new(Region {
        start,
        len: map.len(),
        file,
        direct: AtomicU8::new(DIRECT_UNTRIED),
    }));
    Some(Registration(start))
}

/// The registered map holding all of `bytes`, and the file offset of its first byte.
fn region_of(bytes: &[u8]) -> Option<(Arc<Region>, u64)> {
    let (lo, hi) = (
        bytes.as_ptr() as usize,
        bytes.as_ptr() as usize + bytes.len(),
    );
    regions()
        .iter()
        .find(|r| r.start <= lo && hi <= r.start + r.len)
        .map(|r| (r.clone(), (lo - r.start) as u64))
}

/// Whether every page of `bytes` is in memory. Memory that is not a registered map counts as
/// resident (there is nothing to read).
#[cfg(any(test, feature = "internals"))]
pub fn resident(bytes: &[u8]) -> bool {
    if bytes.is_empty() || region_of(bytes).is_none() {
        return true;
    }
    pages_resident(bytes)
}

fn pages_resident(bytes: &[u8]) -> bool {
    let lo = bytes.as_ptr() as usize;
    let start = lo - lo % ALIGN;
    let len = lo + bytes.len() - start;
    let mut vec = vec![0u8; len.div_ceil(ALIGN)];
    // SAFETY: [start, start + len) lies inside a live mapping (it rounds `bytes`, a slice of a
    // registered map, out to pages) and `vec` has one byte per page of it.
    let rc = unsafe { libc::mincore(start as *mut libc::c_void, len, vec.as_mut_ptr()) };
    // A failed probe (page size other than ALIGN, ENOMEM) says nothing: read through the map.
    rc != 0 || vec.iter().all(|&v| v & 1 == 1)
}

/// One of the parallel arrays a walk reads: `bytes` holds `n` units of `unit` bytes.
#[derive(Clone, Copy, Debug)]
pub struct Lane<'a> {
    /// The lane's bytes, a slice of a map (or any memory).
    pub bytes: &'a [u8],
    /// Bytes per unit (a row, or 1).
    pub unit: usize,
}

/// Whether a walk over `lanes` would read anything direct from disk: reads are direct
/// ([`ReadMode`]), the lanes are long enough, and one of them lies in a registered map that has
/// not given up direct reads and whose pages are not all in memory.
pub fn cold(lanes: &[Lane<'_>]) -> bool {
    ReadMode::current() == ReadMode::Direct
        && lanes.iter().all(|l| l.unit > 0)
        && lanes.iter().map(|l| l.bytes.len()).sum::<usize>()
            >= MIN_DIRECT_NOW.load(Ordering::Relaxed)
        && lanes.iter().any(|l| cold_region(l.bytes).is_some())
}

/// The registered map holding `bytes` and their file offset, when they are to be read direct:
/// not empty, in a map that has not given up direct reads, and not all in memory.
fn cold_region(bytes: &[u8]) -> Option<(Arc<Region>, u64)> {
    if bytes.is_empty() {
        return None;
    }
    let (region, off) = region_of(bytes)?;
    (region.direct_ok() && !pages_resident(bytes)).then_some((region, off))
}

/// Where one lane's block came from.
#[derive(Clone, Copy)]
enum Src {
    /// The map itself.
    Map,
    /// `[at, at + len)` of the block buffer.
    Buf(usize, usize),
}

fn pool() -> std::sync::MutexGuard<'static, Vec<AlignedBuf>> {
    static POOL: Mutex<Vec<AlignedBuf>> = Mutex::new(Vec::new());
    POOL.lock().unwrap_or_else(|p| p.into_inner())
}

fn take_buf() -> Option<AlignedBuf> {
    pool().pop().or_else(|| AlignedBuf::new(BUF).ok())
}

fn keep_buf(b: AlignedBuf) {
    let mut p = pool();
    if p.len() < POOL_KEEP {
        p.push(b);
    }
}

/// Reads the lanes' bytes of `units` into `buf` where they are cold; the rest stay in the map.
fn load(lanes: &[Lane<'_>], units: &Range<usize>, buf: Option<&mut AlignedBuf>) -> Vec<Src> {
    let mut at = 0;
    let mut buf = buf;
    lanes
        .iter()
        .map(|l| {
            let sub = &l.bytes[units.start * l.unit..units.end * l.unit];
            let Some(buf) = buf.as_deref_mut() else {
                return Src::Map;
            };
            match read_direct(sub, &mut buf.bytes_mut()[at..]) {
                Some((skip, used)) => {
                    let src = Src::Buf(at + skip, sub.len());
                    at += used;
                    src
                }
                None => Src::Map,
            }
        })
        .collect()
}

/// Reads `sub` (a slice of a registered map) direct into the front of `dst` when it is cold:
/// `(where sub starts in dst, bytes of dst used)`; `None` leaves it to the map.
fn read_direct(sub: &[u8], dst: &mut [u8]) -> Option<(usize, usize)> {
    let (region, off) = cold_region(sub)?;
    let lo = off - off % ALIGN as u64;
    let end = off + sub.len() as u64;
    let hi = end.div_ceil(ALIGN as u64) * ALIGN as u64;
    let want = (hi - lo) as usize;
    if want > dst.len() {
        return None;
    }
    let need = (end - lo) as usize;
    let mut got = 0;
    while got < need {
        match region.file.read_at(&mut dst[got..want], lo + got as u64) {
            // End of file inside the last page: the bytes `sub` needs are all there or missing.
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if got < need {
        // Refused (EINVAL alignment), failed or short: this file is read through its map, and
        // this cold stretch is asked for in bulk rather than faulted in page by page.
        region.give_up_direct();
        super::will_need(sub);
        return None;
    }
    DIRECT_BYTES.fetch_add(got as u64, Ordering::Relaxed);
    Some(((off - lo) as usize, want))
}

/// The unit ranges of a walk: blocks of at most [`BLOCK`] bytes across the lanes.
fn blocks(lanes: &[Lane<'_>], n: usize) -> impl Iterator<Item = Range<usize>> {
    let per_unit: usize = lanes.iter().map(|l| l.unit).sum::<usize>().max(1);
    let step = (BLOCK / per_unit).max(1);
    (0..n.div_ceil(step)).map(move |b| b * step..((b + 1) * step).min(n))
}

/// Calls `f(units, slices)` for consecutive ranges of units covering every unit of the lanes
/// in order, `slices[i]` holding lane `i`'s bytes of those units, until `f` breaks (its value
/// is returned). Cold blocks of registered maps are read direct, one block ahead, on a reader
/// thread; every other block is the map's own bytes. Every lane must hold the same number of
/// units.
pub fn for_each_block<B>(
    lanes: &[Lane<'_>],
    f: impl FnMut(Range<usize>, &[&[u8]]) -> ControlFlow<B>,
) -> Option<B> {
    for_each_block_with(std::thread::Builder::new, take_buf, lanes, f)
}

fn units_of(lanes: &[Lane<'_>]) -> usize {
    let n = lanes.first().map_or(0, |l| l.bytes.len() / l.unit.max(1));
    for l in lanes {
        assert!(
            l.unit > 0 && l.bytes.len() == n * l.unit,
            "bulk lanes must hold the same number of whole units ({} bytes of {}-byte units, want {n})",
            l.bytes.len(),
            l.unit
        );
    }
    n
}

/// Each lane's bytes of `units`: from `buf` where `srcs` says it was read there, else the
/// lane's own (a missing `srcs` entry means the map).
fn slices<'l>(
    lanes: &[Lane<'l>],
    units: &Range<usize>,
    buf: Option<&'l AlignedBuf>,
    srcs: &[Src],
) -> Vec<&'l [u8]> {
    lanes
        .iter()
        .enumerate()
        .map(|(i, l)| match (srcs.get(i), buf) {
            (Some(Src::Buf(at, len)), Some(b)) => &b.bytes()[*at..at + len],
            _ => &l.bytes[units.start * l.unit..units.end * l.unit],
        })
        .collect()
}

/// [`for_each_block`] with the reader thread's builder and the buffer source given (tests pass
/// ones that fail).
fn for_each_block_with<B>(
    builder: fn() -> std::thread::Builder,
    take_buf: fn() -> Option<AlignedBuf>,
    lanes: &[Lane<'_>],
    mut f: impl FnMut(Range<usize>, &[&[u8]]) -> ControlFlow<B>,
) -> Option<B> {
    let n = units_of(lanes);
    if lanes.len() > MAX_LANES || !cold(lanes) {
        for units in blocks(lanes, n) {
            if let ControlFlow::Break(b) = f(units.clone(), &slices(lanes, &units, None, &[])) {
                return Some(b);
            }
        }
        return None;
    }
    std::thread::scope(|s| {
        let (full_tx, full_rx) = sync_channel::<(Range<usize>, Option<AlignedBuf>, Vec<Src>)>(1);
        let (free_tx, free_rx) = sync_channel::<AlignedBuf>(SETS);
        let reader = builder()
            .name("ninfer-read".into())
            .spawn_scoped(s, move || {
                // Buffers asked for, and those that exist (an allocation may fail: then the
                // blocks go through the map, and nothing is waited for that never comes back).
                let (mut asked, mut owned) = (0, 0);
                for units in blocks(lanes, n) {
                    let mut buf = if asked < SETS {
                        asked += 1;
                        let b = take_buf();
                        owned += usize::from(b.is_some());
                        b
                    } else if owned == 0 {
                        None
                    } else {
                        match free_rx.recv() {
                            Ok(b) => Some(b),
                            Err(_) => return,
                        }
                    };
                    let srcs = load(lanes, &units, buf.as_mut());
                    if full_tx.send((units, buf, srcs)).is_err() {
                        return;
                    }
                }
                drop(full_tx);
                while let Ok(b) = free_rx.recv() {
                    keep_buf(b);
                }
            });
        let mut out = None;
        match reader {
            Ok(_) => {
                for (units, buf, srcs) in full_rx.iter() {
                    let flow = f(units.clone(), &slices(lanes, &units, buf.as_ref(), &srcs));
                    if let ControlFlow::Break(b) = flow {
                        // Not handed back: the reader must not start another read.
                        if let Some(b) = buf {
                            keep_buf(b);
                        }
                        out = Some(b);
                        break;
                    }
                    if let Some(b) = buf {
                        let _ = free_tx.send(b).map_err(|e| keep_buf(e.0));
                    }
                }
                // Closing both channels stops the reader wherever it waits.
                drop(free_tx);
                drop(full_rx);
            }
            // No thread (a thread or address-space limit): the same blocks, read here.
            Err(_) => {
                let mut buf = take_buf();
                for units in blocks(lanes, n) {
                    let srcs = load(lanes, &units, buf.as_mut());
                    if let ControlFlow::Break(b) =
                        f(units.clone(), &slices(lanes, &units, buf.as_ref(), &srcs))
                    {
                        out = Some(b);
                        break;
                    }
                }
                if let Some(b) = buf {
                    keep_buf(b);
                }
            }
        }
        out
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    fn pattern(len: usize, seed: u64) -> Vec<u8> {
        (0..len as u64)
            .map(|i| ((i.wrapping_add(seed) * 2654435761) >> 13) as u8)
            .collect()
    }

    /// Whether the temp directory's file system takes O_DIRECT at all.
    pub(crate) fn fs_takes_direct(dir: &std::path::Path) -> bool {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_DIRECT)
            .open(dir.join("probe"))
            .is_ok()
    }

    /// Writes `data`, syncs it and drops its pages from the page cache, so that it is cold.
    pub(crate) fn cold_file(path: &std::path::Path, data: &[u8]) {
        let mut f = File::create(path).unwrap();
        f.write_all(data).unwrap();
        f.sync_all().unwrap();
        evict(path);
        drop(f);
    }

    /// `data` as a cold file in a new temp directory, and its map.
    fn cold_map(data: &[u8]) -> (tempfile::TempDir, super::super::Mapped) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("input");
        cold_file(&p, data);
        let map = super::super::map_file(&p).unwrap();
        (dir, map)
    }

    /// Drops a clean file's pages from the page cache.
    pub(crate) fn evict(path: &std::path::Path) {
        use std::os::fd::AsRawFd;
        let f = File::open(path).unwrap();
        // SAFETY: advice on a descriptor we own; no memory is passed.
        let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        assert_eq!(rc, 0);
    }

    /// Walks `lanes` and returns each lane's bytes in order and the blocks seen.
    fn walk(lanes: &[Lane<'_>], builder: fn() -> std::thread::Builder) -> (Vec<Vec<u8>>, usize) {
        walk_with(lanes, builder, take_buf)
    }

    fn walk_with(
        lanes: &[Lane<'_>],
        builder: fn() -> std::thread::Builder,
        alloc: fn() -> Option<AlignedBuf>,
    ) -> (Vec<Vec<u8>>, usize) {
        let mut got = vec![Vec::new(); lanes.len()];
        let mut blocks = 0;
        let mut next = 0;
        let r = for_each_block_with::<()>(builder, alloc, lanes, |units, s| {
            assert_eq!(units.start, next, "blocks in order, none skipped");
            next = units.end;
            blocks += 1;
            for (g, (l, s)) in got.iter_mut().zip(lanes.iter().zip(s)) {
                assert_eq!(s.len(), units.len() * l.unit);
                g.extend_from_slice(s);
            }
            ControlFlow::Continue(())
        });
        assert!(r.is_none());
        (got, blocks)
    }

    #[test]
    fn cold_lanes_are_read_direct_and_equal_the_map() {
        let data = pattern(3 * BLOCK + 12_345, 1);
        let (dir, map) = cold_map(&data);
        // Lanes at odd offsets and widths, as a row-split object's planes lie: 3 rows of
        // 1000, 24 and 2 bytes each, 20000 rows.
        let n = 20_000;
        let (a, b, c) = (7usize, 7 + n * 1000 + 3, 7 + n * 1024 + 4099);
        let lanes = [
            Lane {
                bytes: &map[a..a + n * 1000],
                unit: 1000,
            },
            Lane {
                bytes: &map[b..b + n * 24],
                unit: 24,
            },
            Lane {
                bytes: &map[c..c + n * 2],
                unit: 2,
            },
        ];
        if !cold(&lanes) {
            // tmpfs keeps "evicted" pages: there is nothing cold to read here.
            eprintln!("skipped: the temp file system kept the evicted pages");
            return;
        }
        let before = DIRECT_BYTES.load(Ordering::Relaxed);
        let (got, blocks) = walk(&lanes, std::thread::Builder::new);
        for (g, l) in got.iter().zip(&lanes) {
            assert!(g == l.bytes, "a walk's bytes equal the map's");
        }
        assert!(blocks >= 2, "{blocks} blocks");
        if fs_takes_direct(dir.path()) {
            assert!(
                DIRECT_BYTES.load(Ordering::Relaxed) > before,
                "the cold lanes went direct"
            );
        }
        // Negative control: once the map has been read, the same walk is warm and the
        // lanes are handed over in place.
        let sum: u64 = map.iter().map(|&x| x as u64).sum();
        assert!(sum > 0);
        assert!(!cold(&lanes), "a map just read is resident");
        for_each_block_with::<()>(std::thread::Builder::new, take_buf, &lanes, |units, s| {
            let want = &lanes[0].bytes[units.start * 1000..];
            assert_eq!(
                s[0].as_ptr(),
                want.as_ptr(),
                "warm blocks are the map's own bytes"
            );
            ControlFlow::Continue(())
        });
    }

    #[test]
    fn a_break_stops_the_walk_and_its_value_is_returned() {
        let (_dir, map) = cold_map(&pattern(4 * BLOCK, 2));
        let lanes = [Lane {
            bytes: &map[..],
            unit: 1,
        }];
        let mut seen = 0;
        let r = for_each_block(&lanes, |units, _| {
            seen += 1;
            if units.end >= 2 * BLOCK {
                ControlFlow::Break(units.end)
            } else {
                ControlFlow::Continue(())
            }
        });
        assert_eq!(r, Some(2 * BLOCK));
        assert_eq!(seen, 2, "nothing after the break");
        // The reader thread was stopped, not left blocked: a second walk of the same map
        // still runs to the end.
        let (got, _) = walk(&lanes, std::thread::Builder::new);
        assert!(got[0] == map[..]);
    }

    #[test]
    fn a_refused_reader_thread_reads_the_same_bytes_on_the_calling_thread() {
        let data = pattern(2 * BLOCK + 999, 3);
        let (_dir, map) = cold_map(&data);
        let lanes = [Lane {
            bytes: &map[1..],
            unit: 2 * BLOCK + 998,
        }];
        // A stack no address space holds: the OS refuses the thread.
        let (got, blocks) = walk(&lanes, || std::thread::Builder::new().stack_size(1 << 60));
        assert_eq!(blocks, 1, "one unit larger than a block is one block");
        assert!(got[0] == data[1..]);
    }

    #[test]
    fn buffers_that_cannot_be_allocated_leave_the_walk_to_the_map() {
        let data = pattern(5 * BLOCK + 17, 6);
        let (_dir, map) = cold_map(&data);
        let lanes = [Lane {
            bytes: &map[..],
            unit: 1,
        }];
        // Five blocks, no buffer at all: the reader must not wait for buffers that never
        // existed (it did, and the walk hung), on its thread or the calling one.
        for builder in [
            std::thread::Builder::new as fn() -> std::thread::Builder,
            || std::thread::Builder::new().stack_size(1 << 60),
        ] {
            let (got, blocks) = walk_with(&lanes, builder, || None);
            assert_eq!(blocks, 6);
            assert!(got[0] == data[..]);
        }
    }

    #[test]
    fn a_failed_direct_read_falls_back_to_the_map() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("input");
        let data = pattern(BLOCK + 4096 * 3 + 5, 4);
        cold_file(&p, &data);
        let file = File::open(&p).unwrap();
        // SAFETY: a read-only map of a file no one else writes during the test.
        let map = unsafe { memmap2::Mmap::map(&file) }.unwrap();
        // Registered with a descriptor that cannot read: every direct read fails.
        let write_only = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        let _reg = register(&map, write_only).expect("we own the file");
        let lanes = [Lane {
            bytes: &map[3..],
            unit: 1,
        }];
        assert!(cold(&lanes));
        let (got, _) = walk(&lanes, std::thread::Builder::new);
        assert!(got[0] == data[3..]);
        let (region, _) = region_of(&map[3..]).unwrap();
        assert_eq!(
            region.direct.load(Ordering::Relaxed),
            DIRECT_OFF,
            "the file gave up direct reads"
        );
    }

    #[test]
    fn memory_that_is_not_a_registered_map_is_used_in_place() {
        let v = pattern(3 * BLOCK / 2, 5);
        let lanes = [Lane { bytes: &v, unit: 3 }];
        assert!(resident(&v) && !cold(&lanes));
        let mut blocks = 0;
        for_each_block::<()>(&lanes, |units, s| {
            assert_eq!(s[0].as_ptr(), v[units.start * 3..].as_ptr());
            blocks += 1;
            ControlFlow::Continue(())
        });
        assert_eq!(blocks, 2);
        // A map is unregistered when it is dropped.
        let (_dir, map) = cold_map(&v);
        let at = map.as_ptr() as usize;
        assert!(region_of(&map).is_some());
        drop(map);
        assert!(regions().iter().all(|r| r.start != at));
    }

    #[test]
    fn read_mode_parses_its_one_spelling() {
        assert_eq!(ReadMode::parse(Some("mapped")), ReadMode::Mapped);
        for other in [None, Some(""), Some("direct"), Some("MAPPED")] {
            assert_eq!(ReadMode::parse(other), ReadMode::Direct);
        }
    }
}

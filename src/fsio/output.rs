//! The writer behind every atomic output ([`super::write_atomic`]).
//!
//! Small outputs are written with one ordinary `write` at the end. An output larger than one
//! block (16 MiB) is written in whole blocks by a background thread, so that making the next
//! block overlaps writing the last, and those blocks bypass the page cache (`O_DIRECT`).
//!
//! Why direct: on the CI VM (Firecracker, free-page reporting to the host) a page-cache write
//! touches fresh guest pages that the host must fault in first. `dd` of 17.5 GB from
//! `/dev/zero` spent 44–51 s in the kernel's page-cache copy, against 15.1 s (3.5 s of CPU) with
//! `oflag=direct` (benches/RESULTS.md, "write path"). A direct write DMAs from the same few
//! reused blocks instead. The cost: the output is not left in the page cache, so the first
//! reader after it reads from disk. `NINFER_WRITE=buffered` restores page-cache writes.
//!
//! Direct I/O is used only where it works: the file's flags must accept `O_DIRECT`, and a
//! direct write refused with `EINVAL` (an alignment the device rejects) is retried through the
//! page cache, after which the file stays buffered. The blocks are 4096-aligned in memory and
//! in the file; the last, partial block is always written through the page cache. A write
//! thread the OS refuses (a thread or address-space limit) is not a panic: the blocks are then
//! written on the calling thread, the same bytes, only without the overlap.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::direct_io::{set_direct, AlignedBuf};

/// A write block: [`BLOCK`] bytes, page-aligned for `O_DIRECT`.
type Block = AlignedBuf;

/// Bytes per block: large enough that the kernel splits one direct write into several device
/// requests in flight (4 MiB `max_sectors_kb` on the CI VM: 16 MiB blocks wrote 1.53 GB/s,
/// 1 MiB blocks 1.09 GB/s).
pub(crate) const BLOCK: usize = 16 << 20;
/// Blocks in use at once: one being filled, up to two queued or being written.
const BLOCKS: usize = 3;

/// How large outputs reach the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// Whole blocks with `O_DIRECT` where the file system accepts it (the default).
    Direct,
    /// Everything through the page cache (`NINFER_WRITE=buffered`).
    Buffered,
}

impl WriteMode {
    /// The mode the environment asks for: `NINFER_WRITE=buffered`, else direct.
    pub fn from_env() -> WriteMode {
        match std::env::var("NINFER_WRITE").as_deref() {
            Ok("buffered") => WriteMode::Buffered,
            _ => WriteMode::Direct,
        }
    }
}

/// Where the background thread puts blocks: a file, or a stand-in in tests. Called by one
/// thread at a time, in file order.
pub(crate) trait BlockSink: Send + Sync + 'static {
    /// Writes `bytes` at `offset`; `whole` is false for the partial last block.
    fn write_block(&self, bytes: &[u8], offset: u64, whole: bool) -> io::Result<()>;
}

/// Where a file stands with direct I/O.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direct {
    /// Not tried yet: the file is ordinary until its first whole block.
    Untried,
    On,
    /// Refused, not wanted, or switched off for the last block.
    Off,
}

/// A file written at explicit offsets, direct while it may be.
struct FileSink {
    file: Arc<File>,
    state: std::sync::Mutex<Direct>,
    used_direct: std::sync::atomic::AtomicBool,
}

impl FileSink {
    fn new(file: Arc<File>, mode: WriteMode) -> FileSink {
        let state = match mode {
            WriteMode::Direct => Direct::Untried,
            WriteMode::Buffered => Direct::Off,
        };
        FileSink {
            file,
            state: state.into(),
            used_direct: false.into(),
        }
    }

    /// Whether any block went out with `O_DIRECT` (the tests' evidence of the mode).
    #[cfg_attr(not(test), allow(dead_code))]
    fn went_direct(&self) -> bool {
        self.used_direct.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl BlockSink for FileSink {
    fn write_block(&self, bytes: &[u8], offset: u64, whole: bool) -> io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match (*state, whole) {
            (Direct::Untried, true) => {
                *state = match set_direct(&self.file, true) {
                    Ok(()) => Direct::On,
                    Err(_) => Direct::Off,
                }
            }
            (Direct::On, false) => {
                set_direct(&self.file, false)?;
                *state = Direct::Off;
            }
            _ => {}
        }
        match self.file.write_all_at(bytes, offset) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && *state == Direct::On => {
                // The device refused this alignment: the rest goes through the page cache.
                set_direct(&self.file, false)?;
                *state = Direct::Off;
                self.file.write_all_at(bytes, offset)
            }
            Err(e) => Err(e),
            Ok(()) => {
                if *state == Direct::On {
                    self.used_direct
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                }
                Ok(())
            }
        }
    }
}

/// The background writer: full blocks in, empty blocks back, the first error kept.
struct Pipeline {
    full: SyncSender<(Block, usize, u64)>,
    empty: Receiver<Block>,
    thread: JoinHandle<io::Result<()>>,
}

impl Pipeline {
    /// Starts the write thread from `builder`; `Err` when the OS refuses the thread.
    fn start(sink: Arc<dyn BlockSink>, builder: std::thread::Builder) -> io::Result<Pipeline> {
        let (full, full_rx) = sync_channel::<(Block, usize, u64)>(BLOCKS - 1);
        let (empty_tx, empty) = sync_channel::<Block>(BLOCKS);
        let thread = builder.name("ninfer-write".into()).spawn(move || {
            for (block, len, offset) in full_rx {
                sink.write_block(&block.bytes()[..len], offset, len == BLOCK)?;
                // The filler may have finished and dropped its end: nothing to return to.
                let _ = empty_tx.send(block);
            }
            Ok(())
        })?;
        Ok(Pipeline {
            full,
            empty,
            thread,
        })
    }

    /// The write thread's result once it has stopped (after an error, or after `full` closed).
    fn join(self) -> io::Result<()> {
        drop(self.full);
        match self.thread.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// The output stream of [`super::write_atomic`]: [`Write`] into blocks, written in order.
pub struct OutputFile {
    sink: Arc<dyn BlockSink>,
    block: Option<Block>,
    filled: usize,
    /// File offset of the current block's first byte.
    offset: u64,
    allocated: usize,
    pipeline: Option<Pipeline>,
    /// A write-thread error seen by `write`, kept for `finish`.
    failed: Option<io::ErrorKind>,
    /// Makes the write thread's builder (tests pass one the OS refuses).
    builder: fn() -> std::thread::Builder,
    /// The OS refused the write thread: blocks are written on the calling thread, in order.
    inline: bool,
}

impl OutputFile {
    /// Writes into the empty `file` (opened for writing, not with `O_DIRECT`); the caller
    /// keeps its own handle to sync it after [`OutputFile::finish`].
    pub fn new(file: Arc<File>, mode: WriteMode) -> OutputFile {
        Self::with_sink(Arc::new(FileSink::new(file, mode)))
    }

    fn with_sink(sink: Arc<dyn BlockSink>) -> OutputFile {
        OutputFile {
            sink,
            block: None,
            filled: 0,
            offset: 0,
            allocated: 0,
            pipeline: None,
            failed: None,
            builder: std::thread::Builder::new,
            inline: false,
        }
    }

    fn block(&mut self) -> io::Result<&mut Block> {
        let b = match self.block.take() {
            Some(b) => b,
            None => self.next_block()?,
        };
        Ok(self.block.insert(b))
    }

    /// An empty block: a new one while fewer than [`BLOCKS`] exist, else one the write thread
    /// has finished with.
    fn next_block(&mut self) -> io::Result<Block> {
        if self.allocated < BLOCKS {
            self.allocated += 1;
            return Block::new(BLOCK);
        }
        let got = self.pipeline.as_ref().map(|p| p.empty.recv());
        match got {
            Some(Ok(b)) => Ok(b),
            _ => Err(self.thread_error()),
        }
    }

    /// The error that stopped the write thread.
    fn thread_error(&mut self) -> io::Error {
        let e = match self.pipeline.take() {
            Some(p) => match p.join() {
                Err(e) => e,
                Ok(()) => io::Error::other("the write thread stopped early"),
            },
            None => io::Error::from(self.failed.unwrap_or(io::ErrorKind::Other)),
        };
        self.failed = Some(e.kind());
        e
    }

    /// Hands the full current block to the write thread (started on the first one).
    fn send_block(&mut self) -> io::Result<()> {
        if self.pipeline.is_none() && !self.inline {
            match Pipeline::start(self.sink.clone(), (self.builder)()) {
                Ok(p) => self.pipeline = Some(p),
                // No thread (a thread or address-space limit): same bytes, written here.
                Err(_) => self.inline = true,
            }
        }
        if self.inline {
            // The block stays ours: the next fill reuses it.
            let Some(block) = self.block.as_ref() else {
                return Err(io::Error::other(
                    "internal invariant: no full block to write",
                ));
            };
            if let Err(e) = self.sink.write_block(block.bytes(), self.offset, true) {
                self.failed = Some(e.kind());
                return Err(e);
            }
        } else {
            let Some(block) = self.block.take() else {
                return Err(io::Error::other(
                    "internal invariant: no full block to send",
                ));
            };
            let sent = self
                .pipeline
                .as_ref()
                .map(|p| p.full.send((block, BLOCK, self.offset)));
            if !matches!(sent, Some(Ok(()))) {
                return Err(self.thread_error());
            }
        }
        self.offset += BLOCK as u64;
        self.filled = 0;
        Ok(())
    }

    /// Writes what is left and waits for the write thread (the file is not synced).
    pub fn finish(mut self) -> io::Result<()> {
        if let Some(kind) = self.failed {
            return Err(io::Error::new(kind, "an earlier write failed"));
        }
        let tail = self.filled;
        match self.pipeline.take() {
            Some(p) => {
                if let Some(block) = self.block.take() {
                    if p.full.send((block, tail, self.offset)).is_err() {
                        return p.join().and(Err(io::Error::other("write thread stopped")));
                    }
                }
                p.join()?;
            }
            None => {
                if let Some(block) = &self.block {
                    self.sink
                        .write_block(&block.bytes()[..tail], self.offset, false)?;
                }
            }
        }
        Ok(())
    }
}

impl Drop for OutputFile {
    /// An output abandoned before [`OutputFile::finish`] (its producer failed) still waits for
    /// the blocks already queued, so no write thread outlives its writer.
    fn drop(&mut self) {
        if let Some(p) = self.pipeline.take() {
            drop(p.full);
            let _ = p.thread.join();
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(kind) = self.failed {
            return Err(io::Error::new(kind, "an earlier write failed"));
        }
        let at = self.filled;
        let n = buf.len().min(BLOCK - at);
        self.block()?.bytes_mut()[at..at + n].copy_from_slice(&buf[..n]);
        self.filled += n;
        if self.filled == BLOCK {
            self.send_block()?;
        }
        Ok(n)
    }

    /// Blocks are written when full and at [`OutputFile::finish`]; a flush has nothing to add.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn pattern(len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| ((i as u64 * 2654435761) >> 13) as u8)
            .collect()
    }

    /// Writes `data` in uneven pieces and returns the file's bytes and whether it went direct.
    fn write_through(data: &[u8], mode: WriteMode) -> (Vec<u8>, bool) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        let sink = Arc::new(FileSink::new(Arc::new(File::create(&p).unwrap()), mode));
        let mut out = OutputFile::with_sink(sink.clone());
        let mut rest = data;
        let mut k = 1usize;
        while !rest.is_empty() {
            let n = k.min(rest.len());
            out.write_all(&rest[..n]).unwrap();
            rest = &rest[n..];
            k = k * 7 % 5_000_011 + 1;
        }
        out.finish().unwrap();
        (std::fs::read(&p).unwrap(), sink.went_direct())
    }

    /// Whether this directory's file system takes O_DIRECT at all.
    fn fs_takes_direct() -> bool {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .custom_flags(libc::O_DIRECT)
            .open(dir.path().join("probe"))
            .is_ok()
    }

    #[test]
    fn every_size_and_mode_writes_the_same_bytes() {
        for len in [
            0,
            1,
            4095,
            BLOCK - 1,
            BLOCK,
            BLOCK + 1,
            3 * BLOCK + 12345,
            5 * BLOCK,
        ] {
            let data = pattern(len);
            for mode in [WriteMode::Direct, WriteMode::Buffered] {
                let (got, direct) = write_through(&data, mode);
                assert!(got == data, "{len} bytes, {mode:?}");
                // Direct only when asked for, and only for whole blocks.
                assert!(
                    !direct || (mode == WriteMode::Direct && len >= BLOCK),
                    "{len} {mode:?}"
                );
            }
        }
    }

    #[test]
    fn large_outputs_bypass_the_page_cache_where_the_file_system_allows() {
        let data = pattern(2 * BLOCK + 100);
        let (got, direct) = write_through(&data, WriteMode::Direct);
        assert!(got == data);
        assert_eq!(direct, fs_takes_direct());
        // Negative control: the buffered mode never goes direct.
        assert!(!write_through(&data, WriteMode::Buffered).1);
    }

    #[test]
    fn a_refused_write_thread_writes_the_same_bytes_on_the_calling_thread() {
        let data = pattern(3 * BLOCK + 777);
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        let sink = Arc::new(FileSink::new(
            Arc::new(File::create(&p).unwrap()),
            WriteMode::Direct,
        ));
        let mut out = OutputFile::with_sink(sink.clone());
        // A stack no system can map: the spawn fails, as under a thread or address-space cap.
        out.builder = || std::thread::Builder::new().stack_size(1 << 60);
        out.write_all(&data).unwrap();
        assert!(
            out.inline && out.pipeline.is_none(),
            "the write thread must have been refused"
        );
        out.finish().unwrap();
        assert!(std::fs::read(&p).unwrap() == data);
        assert_eq!(sink.went_direct(), fs_takes_direct());
    }

    /// A slow sink (20 ms a block, like a busy disk) that fails on its `fail_at`-th block and
    /// records the offsets it saw.
    struct Failing {
        fail_at: usize,
        seen: Mutex<Vec<u64>>,
    }

    impl BlockSink for Failing {
        fn write_block(&self, _: &[u8], offset: u64, _: bool) -> io::Result<()> {
            std::thread::sleep(std::time::Duration::from_millis(20));
            let mut seen = self.seen.lock().unwrap();
            seen.push(offset);
            if seen.len() == self.fail_at {
                return Err(io::Error::from_raw_os_error(libc::ENOSPC));
            }
            Ok(())
        }
    }

    fn failing_output(fail_at: usize) -> (OutputFile, Arc<Failing>) {
        let sink = Arc::new(Failing {
            fail_at,
            seen: Mutex::new(Vec::new()),
        });
        (OutputFile::with_sink(sink.clone()), sink)
    }

    #[test]
    fn a_write_thread_error_reaches_the_writer_or_finish() {
        // Failing on the 2nd of 10 blocks: some later write or finish reports ENOSPC, and no
        // block after the failed one is written.
        let (mut out, sink) = failing_output(2);
        let block = vec![7u8; BLOCK];
        let mut write_err = None;
        for _ in 0..10 {
            if let Err(e) = out.write_all(&block) {
                write_err = Some(e);
                break;
            }
        }
        let e = match write_err {
            Some(e) => e,
            None => out.finish().unwrap_err(),
        };
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
        assert_eq!(*sink.seen.lock().unwrap(), [0, BLOCK as u64]);
        // The last, partial block failing is reported by finish.
        let (mut out, _) = failing_output(2);
        out.write_all(&vec![1u8; BLOCK + 10]).unwrap();
        assert_eq!(out.finish().unwrap_err().raw_os_error(), Some(libc::ENOSPC));
        // Negative control: a sink that never fails finishes cleanly.
        let (mut out, sink) = failing_output(usize::MAX);
        out.write_all(&vec![1u8; 2 * BLOCK + 10]).unwrap();
        out.finish().unwrap();
        assert_eq!(
            *sink.seen.lock().unwrap(),
            [0, BLOCK as u64, 2 * BLOCK as u64]
        );
        // A writer dropped unfinished (its producer failed) waits for its queued blocks.
        let (mut out, sink) = failing_output(usize::MAX);
        out.write_all(&vec![1u8; 2 * BLOCK + 10]).unwrap();
        drop(out);
        assert_eq!(*sink.seen.lock().unwrap(), [0, BLOCK as u64]);
    }
}

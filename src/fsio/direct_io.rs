//! Direct I/O plumbing: page-aligned heap buffers (`O_DIRECT` needs the memory, the file
//! offset and the length aligned; the page size satisfies every block device) and the switch
//! that turns `O_DIRECT` on for an open file.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

/// Memory and file alignment of a direct read or write.
pub(crate) const ALIGN: usize = 4096;

/// A zero-initialised, page-aligned buffer of a fixed length: an anonymous private mapping, so
/// the kernel zeroes a page only when it is first touched (a 1 KiB output fills one page of its
/// 16 MiB write block, not all of them). Not heap memory: the heap-peak probe does not see it.
pub(crate) struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: an AlignedBuf owns its mapping exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A buffer of `len` bytes; a refused mapping is an error, not an abort.
    pub(crate) fn new(len: usize) -> io::Result<AlignedBuf> {
        let len = len.max(1);
        // SAFETY: a fresh anonymous private mapping; no existing memory is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!(
                    "{len}-byte aligned I/O buffer: {}",
                    io::Error::last_os_error()
                ),
            ));
        }
        debug_assert_eq!(p as usize % ALIGN, 0, "mmap returns page-aligned memory");
        // mmap never returns null on success; refuse it like a failed mapping if it did.
        let Some(ptr) = NonNull::new(p.cast()) else {
            return Err(io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("{len}-byte aligned I/O buffer: mmap returned null"),
            ));
        };
        Ok(AlignedBuf { ptr, len })
    }

    /// Its bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping holds `len` bytes, zero until written.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Its bytes, writable.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as `bytes`, and `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: mapped in `new` with this length; no borrow of it outlives `self`.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

/// Turns `O_DIRECT` on or off for an open file.
pub(crate) fn set_direct(file: &File, on: bool) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL read and set the status flags of a descriptor we own; no memory
    // is passed.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            return Err(io::Error::last_os_error());
        }
        let want = if on {
            flags | libc::O_DIRECT
        } else {
            flags & !libc::O_DIRECT
        };
        if libc::fcntl(fd, libc::F_SETFL, want) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_zeroed_and_writable() {
        for len in [1, 4095, 4096, 1 << 20] {
            let mut b = AlignedBuf::new(len).unwrap();
            assert_eq!(b.bytes().as_ptr() as usize % ALIGN, 0);
            assert_eq!(b.bytes().len(), len);
            assert!(b.bytes().iter().all(|&x| x == 0));
            b.bytes_mut()[len - 1] = 7;
            assert_eq!(b.bytes()[len - 1], 7);
        }
    }
}

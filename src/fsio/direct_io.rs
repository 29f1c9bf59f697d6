//! Direct I/O plumbing: page-aligned heap buffers (`O_DIRECT` needs the memory, the file
//! offset and the length aligned; the page size satisfies every block device) and the switch
//! that turns `O_DIRECT` on for an open file.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;

/// Memory and file alignment of a direct read or write.
pub(crate) const ALIGN: usize = 4096;

/// A zero-initialised, [`ALIGN`]-aligned heap buffer of a fixed length.
pub(crate) struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: an AlignedBuf owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    fn layout(len: usize) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(len.max(1), ALIGN).expect("aligned buffer layout")
    }

    /// A buffer of `len` bytes; allocation failure is an error, not an abort.
    pub(crate) fn new(len: usize) -> io::Result<AlignedBuf> {
        // SAFETY: the layout has a non-zero size. Zeroed, so every byte is initialised and
        // `bytes` may hand out any range of it.
        let ptr = unsafe { std::alloc::alloc_zeroed(Self::layout(len)) };
        NonNull::new(ptr)
            .map(|ptr| AlignedBuf { ptr, len })
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::OutOfMemory,
                    format!("{len}-byte aligned I/O buffer"),
                )
            })
    }

    /// Its bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: the allocation holds `len` initialised bytes.
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
        // SAFETY: allocated in `new` with the same layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), Self::layout(self.len)) }
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

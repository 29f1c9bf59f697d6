//! The binary's global allocator: `System` plus live/peak byte counters, for the `verify`
//! statistics line. Compiled into the binary only (`src/bin/ninfer-ternary.rs` includes this
//! file with `#[path]`; `lib.rs` does not declare it), so the library never carries a global
//! allocator and library users are unaffected. The binary hands [`peak`] to
//! `verify::heap::install`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// `System` plus live/peak byte counters.
pub struct PeakAlloc;

// SAFETY: every call forwards to `System` unchanged; the counters only observe sizes.
unsafe impl GlobalAlloc for PeakAlloc {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            add(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        CURRENT.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(l);
        if !p.is_null() {
            add(l.size());
        }
        p
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            CURRENT.fetch_sub(l.size(), Ordering::Relaxed);
            add(new);
        }
        q
    }
}

fn add(n: usize) {
    let now = CURRENT.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

/// Peak live heap bytes since the process started.
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

//! A peak-tracking global allocator for the `verify` statistics line. The library only defines
//! it; the binary registers it (`#[global_allocator]`), so library users are unaffected.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// `System` plus live/peak byte counters.
pub struct PeakAlloc;

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
    ACTIVE.store(1, Ordering::Relaxed);
    let now = CURRENT.fetch_add(n, Ordering::Relaxed) + n;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

/// Peak live heap bytes, or `None` when [`PeakAlloc`] is not the global allocator.
pub fn peak() -> Option<usize> {
    (ACTIVE.load(Ordering::Relaxed) == 1).then(|| PEAK.load(Ordering::Relaxed))
}

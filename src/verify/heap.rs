//! Where `verify` reads the process's peak heap from. The allocator that counts belongs to the
//! binary (`src/peak_alloc.rs`), which installs its probe here at start-up; a library user
//! installs nothing and the statistics line says so.

use std::sync::OnceLock;

static PROBE: OnceLock<fn() -> usize> = OnceLock::new();

/// Registers the function that reports peak live heap bytes (the binary's allocator). The
/// first registration wins.
pub fn install(probe: fn() -> usize) {
    let _ = PROBE.set(probe);
}

/// Peak live heap bytes, or `None` when no counting allocator was installed.
pub fn peak() -> Option<usize> {
    PROBE.get().map(|probe| probe())
}

#[cfg(test)]
mod tests {
    #[test]
    fn peak_is_none_until_a_probe_is_installed_then_reads_it() {
        // The library's unit tests run without the binary's allocator.
        assert_eq!(super::peak(), None);
        super::install(|| 4096);
        assert_eq!(super::peak(), Some(4096));
        super::install(|| 1);
        assert_eq!(super::peak(), Some(4096), "the first probe wins");
    }
}

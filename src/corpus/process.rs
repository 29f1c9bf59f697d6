//! Starting an adapter (PROTOCOL.md §5.1): the command line, the environment and the limits of
//! one adapter process, run under `crate::contain` (own process group under a supervisor,
//! deadlines on every pipe, resource limits, every descendant killed). Shared by the per-case
//! runner, persistent sessions and the differential fuzzer, so that none imports another.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

use crate::contain::{Job, Limits};

/// How to start and bound an adapter: the part of `runner::RunOptions` a process needs.
#[derive(Clone, Debug)]
pub struct AdapterCommand {
    /// The corpus root (absolute): case files and inputs are passed under it.
    pub corpus: PathBuf,
    /// Adapter command; the case file (or `--persistent`) is appended.
    pub adapter: String,
    /// Time limit per case.
    pub timeout: Duration,
    /// Address-space cap per adapter process (MiB; 0 = none).
    pub memory_mb: u64,
}

impl AdapterCommand {
    /// The limits of one adapter process: the deadline and address-space cap asked for, the
    /// contain defaults for the rest (CPU seconds from the deadline, 1 GiB files, processes).
    /// A persistent adapter lives for the whole run, so it has no CPU-seconds cap (each of its
    /// answers has the deadline).
    pub fn limits(&self, persistent: bool) -> Limits {
        let mut l = Limits::with_timeout(self.timeout);
        l.memory_mb = self.memory_mb;
        if persistent {
            l.cpu_seconds = 0;
        }
        l
    }

    /// The adapter as a contained job: `/bin/sh -c '<adapter> "$1"' adapter <arg>`, one thread
    /// per numeric library (cases run side by side).
    pub fn job(&self, arg: impl AsRef<OsStr>, persistent: bool) -> Job {
        Job::shell(&format!("{} \"$1\"", self.adapter), "adapter")
            .arg(arg)
            .env("OPENBLAS_NUM_THREADS", "1")
            .env("OMP_NUM_THREADS", "1")
            .env("MKL_NUM_THREADS", "1")
            .limits(self.limits(persistent))
    }
}

/// The failure text of an adapter that left processes running after it exited.
pub(crate) fn leftovers_reason(n: u32) -> String {
    format!(
        "left {n} process{} running after it exited, holding its pipes or detached \
         (PROTOCOL.md §5.1: an adapter ends everything it starts; they were killed)",
        if n == 1 { "" } else { "es" }
    )
}

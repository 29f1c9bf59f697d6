//! One thread budget for nested fan-out (the verifier's gates of `run_gates` and the row
//! ranges each gate splits, the unpack proof's rows): together they never run more than
//! [`threads`] threads, the calling thread included. Threads are started with
//! `std::thread::Builder::spawn_scoped`; a spawn the OS refuses (an address-space cap, a thread limit) is not a panic: that share of
//! the work runs on the calling thread instead, so the result is the same, only slower.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Environment variable that sets the thread count (a positive integer; anything else is
/// ignored and the OS's available parallelism is used).
pub const THREADS_ENV: &str = "NINFER_TERNARY_THREADS";

/// Threads the verifier may run at once: `$NINFER_TERNARY_THREADS` if it is a positive
/// integer, else the OS's available parallelism (at least 1). Read once per process.
pub fn threads() -> usize {
    static T: OnceLock<usize> = OnceLock::new();
    *T.get_or_init(|| {
        std::env::var(THREADS_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n >= 1)
            .unwrap_or_else(available_threads)
    })
}

/// The OS's available parallelism (at least 1), whatever the environment says.
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A count of threads that may still be started (the thread that owns the budget is not
/// counted: a budget of `n` threads holds `n - 1` spare).
#[derive(Debug)]
pub struct Budget {
    spare: AtomicUsize,
}

impl Budget {
    /// A budget of `total` threads in all (`0` is taken as 1: the calling thread only).
    pub const fn new(total: usize) -> Budget {
        Budget {
            spare: AtomicUsize::new(total.saturating_sub(1)),
        }
    }

    /// Takes up to `want` spare threads; returns how many it got (maybe 0).
    fn take(&self, want: usize) -> usize {
        let mut cur = self.spare.load(Ordering::Relaxed);
        loop {
            let got = cur.min(want);
            if got == 0 {
                return 0;
            }
            match self.spare.compare_exchange_weak(
                cur,
                cur - got,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return got,
                Err(now) => cur = now,
            }
        }
    }

    /// Returns `n` threads to the budget.
    fn give(&self, n: usize) {
        self.spare.fetch_add(n, Ordering::AcqRel);
    }

    /// Spare threads left now.
    #[cfg(any(test, feature = "internals"))]
    pub fn spare(&self) -> usize {
        self.spare.load(Ordering::Relaxed)
    }
}

/// The process-wide budget of [`threads`] threads that every fan-out of the verifier shares.
pub fn global() -> &'static Budget {
    static B: OnceLock<Budget> = OnceLock::new();
    B.get_or_init(|| Budget::new(threads()))
}

/// Gives one spare thread back when dropped (also when the worker panics).
struct Permit<'b>(&'b Budget);

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.0.give(1);
    }
}

/// Runs `work(i, w)` for each worker `i` of `w = 1 + spare taken` (at most `want` workers, at
/// least 1), worker 0 on the calling thread and the others on threads started by `builder()`;
/// results in worker order. A helper gives its thread back to `budget` as soon as it ends; a
/// refused spawn gives it back at once and its `work` runs on the calling thread afterwards.
/// A worker's panic is resumed on the calling thread.
pub fn workers<R: Send>(
    budget: &Budget,
    want: usize,
    builder: impl Fn() -> std::thread::Builder,
    work: impl Fn(usize, usize) -> R + Sync,
) -> Vec<R> {
    let w = 1 + budget.take(want.max(1) - 1);
    if w == 1 {
        return vec![work(0, 1)];
    }
    let work = &work;
    std::thread::scope(|s| {
        let spawned: Vec<_> = (1..w)
            .map(|i| {
                let permit = Permit(budget);
                builder()
                    .spawn_scoped(s, move || {
                        let _permit = permit;
                        work(i, w)
                    })
                    .ok()
                // A refused spawn drops its closure, and with it the permit.
            })
            .collect();
        let mut out = Vec::with_capacity(w);
        out.push(work(0, w));
        for (k, h) in spawned.into_iter().enumerate() {
            out.push(match h {
                Some(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                None => work(k + 1, w),
            });
        }
        out
    })
}

/// The crate's one work queue: `item(&mut state, k)` for every `k` in `0..n`, each exactly once,
/// on up to `want` [`workers`] of `budget`; a free worker claims the next unclaimed `k`, so a
/// slow item never holds up the others. Each worker makes its `state` with `init()` before its
/// first item and hands it to `done` after its last (a worker that claims nothing makes none).
/// Results in `k` order.
pub fn queue<S, R: Send>(
    budget: &Budget,
    want: usize,
    n: usize,
    builder: impl Fn() -> std::thread::Builder,
    init: impl Fn() -> S + Sync,
    item: impl Fn(&mut S, usize) -> R + Sync,
    done: impl Fn(S) + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let per_worker = workers(budget, want.min(n), builder, |_, _| {
        let mut mine = Vec::new();
        let mut state = None;
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= n {
                break;
            }
            let s = state.get_or_insert_with(&init);
            mine.push((k, item(s, k)));
        }
        if let Some(s) = state {
            done(s);
        }
        mine
    });
    let mut all: Vec<(usize, R)> = per_worker.into_iter().flatten().collect();
    all.sort_by_key(|(k, _)| *k);
    all.into_iter().map(|(_, r)| r).collect()
}

/// Runs `main()` on the calling thread while up to `helpers` threads (spare threads of
/// `budget`, started by `builder()`) run `helper(i)`, `i` in `1..=started`; returns `main`'s
/// result once every helper has ended. A spawn the OS refuses gives its thread back and runs
/// its `helper` on the calling thread after `main` (so `main` must not wait for helpers to
/// make progress it cannot make itself). A helper's panic is resumed on the calling thread.
pub fn with_helpers<R>(
    budget: &Budget,
    helpers: usize,
    builder: impl Fn() -> std::thread::Builder,
    helper: impl Fn(usize) + Sync,
    main: impl FnOnce() -> R,
) -> R {
    let n = budget.take(helpers);
    let helper = &helper;
    std::thread::scope(|s| {
        let spawned: Vec<_> = (1..=n)
            .map(|i| {
                let permit = Permit(budget);
                builder()
                    .spawn_scoped(s, move || {
                        let _permit = permit;
                        helper(i)
                    })
                    .ok()
                // A refused spawn drops its closure, and with it the permit.
            })
            .collect();
        let out = main();
        for (k, h) in spawned.into_iter().enumerate() {
            match h {
                Some(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                None => helper(k + 1),
            }
        }
        out
    })
}

/// `f` over contiguous sub-ranges of `range` (at most `want` of them, none under `min_len`
/// long unless there is only one), concatenated in range order: the output is `f(range)`'s.
pub fn ranges_with<T: Send>(
    budget: &Budget,
    builder: impl Fn() -> std::thread::Builder,
    range: std::ops::Range<u64>,
    want: usize,
    min_len: u64,
    f: impl Fn(std::ops::Range<u64>) -> Vec<T> + Sync,
) -> Vec<T> {
    let n = range.end.saturating_sub(range.start);
    let want = (want as u64).min(n / min_len.max(1)).max(1) as usize;
    let parts = workers(budget, want, builder, |i, w| {
        let step = n.div_ceil(w as u64);
        let lo = (range.start + i as u64 * step).min(range.end);
        let hi = (lo + step).min(range.end);
        f(lo..hi)
    });
    let mut out = Vec::with_capacity(n as usize);
    for p in parts {
        out.extend(p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A builder whose spawn the OS must refuse: a 1 PiB stack does not fit in the 47-bit
    /// user address space of x86-64/aarch64 Linux.
    fn refused() -> std::thread::Builder {
        std::thread::Builder::new().stack_size(1 << 50)
    }

    fn sums(r: std::ops::Range<u64>) -> Vec<u64> {
        r.map(|x| x.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (x >> 3))
            .collect()
    }

    #[test]
    fn refused_builder_really_fails() {
        // The negative control of the fallback test: this builder's spawn is an OS refusal.
        assert!(std::thread::scope(|s| refused()
            .spawn_scoped(s, || ())
            .is_err()));
    }

    #[test]
    fn results_identical_for_1_2_and_7_threads() {
        let whole = sums(0..100_003);
        for t in [1usize, 2, 7] {
            let b = Budget::new(t);
            let got = ranges_with(&b, std::thread::Builder::new, 0..100_003, t, 64, sums);
            assert_eq!(got, whole, "{t} threads");
            assert_eq!(b.spare(), t - 1, "{t} threads: budget restored");
        }
    }

    #[test]
    fn nested_fan_out_stays_within_the_budget() {
        let b = Budget::new(7);
        let live = AtomicUsize::new(1);
        let peak = AtomicUsize::new(1);
        let outer = workers(&b, 10, std::thread::Builder::new, |i, _| {
            if i > 0 {
                peak.fetch_max(live.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
            }
            let inner = ranges_with(&b, std::thread::Builder::new, 0..10_000, 7, 16, sums);
            std::thread::sleep(std::time::Duration::from_millis(5));
            if i > 0 {
                live.fetch_sub(1, Ordering::SeqCst);
            }
            inner == sums(0..10_000)
        });
        assert!(outer.iter().all(|&ok| ok));
        assert!(
            outer.len() <= 7,
            "{} outer workers for a budget of 7",
            outer.len()
        );
        assert!(peak.load(Ordering::SeqCst) <= 7);
        assert_eq!(b.spare(), 6, "every thread given back");
    }

    #[test]
    fn helpers_run_beside_main_and_refused_ones_after_it() {
        let b = Budget::new(3);
        let ran = std::sync::Mutex::new(Vec::new());
        let r = with_helpers(
            &b,
            2,
            std::thread::Builder::new,
            |i| ran.lock().unwrap().push(i),
            || 7,
        );
        assert_eq!(r, 7);
        let mut got = ran.lock().unwrap().clone();
        got.sort();
        assert_eq!(got, vec![1, 2]);
        assert_eq!(b.spare(), 2, "every helper's thread given back");
        // Refused spawns: the helpers still run, on the calling thread, after main.
        let order = std::sync::Mutex::new(Vec::new());
        with_helpers(
            &b,
            2,
            refused,
            |i| order.lock().unwrap().push(i),
            || order.lock().unwrap().push(0),
        );
        assert_eq!(*order.lock().unwrap(), vec![0, 1, 2]);
        assert_eq!(b.spare(), 2);
    }

    #[test]
    fn a_refused_spawn_falls_back_to_the_calling_thread() {
        let b = Budget::new(7);
        let got = ranges_with(&b, refused, 0..100_003, 7, 64, sums);
        assert_eq!(got, sums(0..100_003));
        assert_eq!(b.spare(), 6, "refused spawns gave their threads back");
        let ran = workers(&b, 4, refused, |i, w| (i, w));
        assert_eq!(ran, vec![(0, 4), (1, 4), (2, 4), (3, 4)]);
    }

    #[test]
    fn the_queue_runs_every_item_once_in_order_with_one_state_per_worker() {
        use std::sync::Mutex;
        let b = Budget::new(4);
        let (made, finished) = (AtomicUsize::new(0), Mutex::new(Vec::new()));
        let out = queue(
            &b,
            4,
            50,
            std::thread::Builder::new,
            || {
                made.fetch_add(1, Ordering::Relaxed);
                0usize
            },
            |count, k| {
                // A slow first item: the other workers drain the queue meanwhile.
                if k == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                *count += 1;
                k * k
            },
            |count| finished.lock().unwrap().push(count),
        );
        assert_eq!(out, (0..50).map(|k| k * k).collect::<Vec<_>>());
        let finished = finished.into_inner().unwrap();
        // Every state made is handed back, and together they ran each item once.
        assert_eq!(finished.len(), made.load(Ordering::Relaxed));
        assert!((1..=4).contains(&finished.len()), "{finished:?}");
        assert_eq!(finished.iter().sum::<usize>(), 50);
        assert_eq!(b.spare(), 3, "every helper gave its thread back");
        // No items: no worker makes a state.
        let none: Vec<()> = queue(
            &b,
            4,
            0,
            std::thread::Builder::new,
            || -> () { panic!("no state for an empty queue") },
            |_, _| (),
            |_| (),
        );
        assert!(none.is_empty());
        // Refused spawns: the calling thread runs everything.
        let out = queue(&b, 4, 5, refused, || (), |_, k| k, |_| ());
        assert_eq!(out, vec![0, 1, 2, 3, 4]);
    }
}

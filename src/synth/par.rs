//! An ordered parallel producer: `jobs` byte chunks made on worker threads (helpers of
//! [`crate::pool::with_helpers`]), handed to one sink
//! strictly in job order. The generators use it to fill both cores while the calling thread
//! writes, with the output identical to a sequential run (each job's bytes depend only on its
//! index). Memory stays bounded: a worker never runs more than `ahead` jobs past the sink.

use crate::error::Result;
use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex};

/// Jobs a worker may run ahead of the sink (each holds one chunk buffer).
const AHEAD_PER_THREAD: usize = 3;

struct State {
    next: usize,
    written: usize,
    abort: bool,
    done: BTreeMap<usize, std::thread::Result<Result<Vec<u8>>>>,
    free: Vec<Vec<u8>>,
}

/// Runs `make(i, buf)` for every `i < jobs` (appending job i's bytes to the empty `buf`) on
/// `threads` workers and `sink(i, bytes)` on the calling thread in order 0, 1, 2, …. The first
/// error (of `make`, in job order, or of `sink`) stops the run and is returned; a worker's panic
/// is resumed on the calling thread. `threads <= 1` runs everything on the calling thread.
pub(crate) fn ordered<M, S>(jobs: usize, threads: usize, make: M, sink: S) -> Result<()>
where
    M: Fn(usize, &mut Vec<u8>) -> Result<()> + Sync,
    S: FnMut(usize, &[u8]) -> Result<()>,
{
    ordered_with(std::thread::Builder::new, jobs, threads, make, sink)
}

/// [`ordered`] with the workers' thread builder given (tests pass one the OS refuses).
fn ordered_with<M, S>(
    builder: fn() -> std::thread::Builder,
    jobs: usize,
    threads: usize,
    make: M,
    mut sink: S,
) -> Result<()>
where
    M: Fn(usize, &mut Vec<u8>) -> Result<()> + Sync,
    S: FnMut(usize, &[u8]) -> Result<()>,
{
    if threads <= 1 || jobs <= 1 {
        let mut buf = Vec::new();
        for i in 0..jobs {
            buf.clear();
            make(i, &mut buf)?;
            sink(i, &buf)?;
        }
        return Ok(());
    }
    let ahead = AHEAD_PER_THREAD * threads;
    let state = Mutex::new(State {
        next: 0,
        written: 0,
        abort: false,
        done: BTreeMap::new(),
        free: Vec::new(),
    });
    let (room, ready) = (Condvar::new(), Condvar::new());
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    // The workers are pool helpers; the calling thread drains (and makes any job no worker has
    // claimed when it is needed, so a refused spawn only costs speed).
    crate::pool::with_helpers(
        &crate::pool::Budget::new(threads + 1),
        threads,
        builder,
        |_| worker(jobs, ahead, &state, &room, &ready, &make),
        || {
            let result = drain(jobs, &state, &ready, &room, &make, &mut sink);
            // Stop the workers on an error, and release any that would wait (after the last
            // job every worker returns on its own).
            if result.is_err() {
                lock().abort = true;
                room.notify_all();
            }
            result
        },
    )
}

fn worker<M>(
    jobs: usize,
    ahead: usize,
    state: &Mutex<State>,
    room: &Condvar,
    ready: &Condvar,
    make: &M,
) where
    M: Fn(usize, &mut Vec<u8>) -> Result<()> + Sync,
{
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let (i, mut buf) = {
            let mut st = lock();
            while !st.abort && st.next < jobs && st.next >= st.written + ahead {
                st = room.wait(st).unwrap_or_else(|p| p.into_inner());
            }
            if st.abort || st.next >= jobs {
                return;
            }
            st.next += 1;
            (st.next - 1, st.free.pop().unwrap_or_default())
        };
        buf.clear();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            make(i, &mut buf).map(|()| buf)
        }));
        lock().done.insert(i, r);
        ready.notify_all();
    }
}

fn drain<M, S>(
    jobs: usize,
    state: &Mutex<State>,
    ready: &Condvar,
    room: &Condvar,
    make: &M,
    sink: &mut S,
) -> Result<()>
where
    M: Fn(usize, &mut Vec<u8>) -> Result<()> + Sync,
    S: FnMut(usize, &[u8]) -> Result<()>,
{
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());
    for i in 0..jobs {
        let r = {
            let mut st = lock();
            loop {
                if let Some(r) = st.done.remove(&i) {
                    break r;
                }
                if st.next == i {
                    // No worker has claimed the job the sink needs next (none started, or all
                    // are busy ahead): make it here.
                    st.next += 1;
                    let mut buf = st.free.pop().unwrap_or_default();
                    drop(st);
                    buf.clear();
                    break std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        make(i, &mut buf).map(|()| buf)
                    }));
                }
                st = ready.wait(st).unwrap_or_else(|p| p.into_inner());
            }
        };
        let buf = match r {
            Ok(made) => made?,
            Err(panic) => {
                lock().abort = true;
                room.notify_all();
                std::panic::resume_unwind(panic)
            }
        };
        sink(i, &buf)?;
        let mut st = lock();
        st.written = i + 1;
        st.free.push(buf);
        drop(st);
        room.notify_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{Error, ErrorClass};

    fn bytes_of(i: usize, buf: &mut Vec<u8>) -> Result<()> {
        buf.extend((0..(i % 7) * 1000).map(|k| (k ^ i) as u8));
        Ok(())
    }

    #[test]
    fn output_is_in_job_order_for_every_thread_count() {
        let mut want = Vec::new();
        ordered(200, 1, bytes_of, |_, b| {
            want.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        assert!(want.len() > 100_000);
        for threads in [2, 3, 8] {
            let mut got = Vec::new();
            let mut order = Vec::new();
            ordered(200, threads, bytes_of, |i, b| {
                order.push(i);
                got.extend_from_slice(b);
                Ok(())
            })
            .unwrap();
            assert_eq!(order, (0..200).collect::<Vec<_>>());
            assert_eq!(got, want, "{threads} threads");
        }
    }

    #[test]
    fn refused_worker_threads_leave_the_caller_making_every_job_in_order() {
        let mut want = Vec::new();
        ordered(60, 1, bytes_of, |_, b| {
            want.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        // A 1 PiB stack cannot be mapped: every worker spawn is refused (pool's negative
        // control checks that this builder really fails).
        let refused = || std::thread::Builder::new().stack_size(1 << 50);
        let mut got = Vec::new();
        ordered_with(refused, 60, 3, bytes_of, |_, b| {
            got.extend_from_slice(b);
            Ok(())
        })
        .unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn the_first_error_in_job_order_is_returned() {
        let make = |i: usize, b: &mut Vec<u8>| {
            if i == 50 || i == 120 {
                return Err(Error::new(ErrorClass::IoWrite, format!("job {i}"), "boom"));
            }
            bytes_of(i, b)
        };
        let mut seen = 0;
        let e = ordered(200, 2, make, |_, _| {
            seen += 1;
            Ok(())
        })
        .unwrap_err();
        assert_eq!(e.class(), ErrorClass::IoWrite);
        assert!(e.to_string().contains("job 50"), "{e}");
        assert_eq!(seen, 50);
        // A sink error stops the run too.
        let e = ordered(200, 2, bytes_of, |i, _| {
            if i == 7 {
                Err(Error::new(ErrorClass::IoWrite, "sink", "full"))
            } else {
                Ok(())
            }
        })
        .unwrap_err();
        assert!(e.to_string().contains("full"), "{e}");
    }

    #[test]
    #[should_panic(expected = "worker bug")]
    fn a_worker_panic_reaches_the_caller() {
        let _ = ordered(
            10,
            2,
            |i, _| {
                if i == 3 {
                    panic!("worker bug");
                }
                Ok(())
            },
            |_, _| Ok(()),
        );
    }
}

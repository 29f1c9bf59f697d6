//! What happens when the user or CI stops us with SIGINT, SIGTERM or SIGHUP: one thread
//! (signal-hook's iterator) runs the registered cleanups in stage order (temporary files,
//! then scratch folders), then the signal is re-delivered with its default action, so the exit
//! status still says "killed by SIGTERM" to whoever sent it.
//!
//! Contained processes need no cleanup here: their supervisors see the lifeline close when
//! this process dies, by any signal (`contain`). A signal the user ignored before we started
//! (`nohup`) stays ignored.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};

/// When a cleanup runs relative to the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Temporary files of atomic writes.
    Temps,
    /// Scratch folders.
    Scratch,
}

type Hook = Arc<dyn Fn() + Send + Sync>;

static HOOKS: Mutex<Vec<(u64, Stage, Hook)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(1);
static STOPPING: AtomicBool = AtomicBool::new(false);

/// A registered cleanup; dropping it unregisters the cleanup without running it.
#[must_use = "the cleanup is unregistered when this is dropped"]
pub struct Registration(u64);

impl Drop for Registration {
    fn drop(&mut self) {
        let mut h = HOOKS.lock().unwrap_or_else(|p| p.into_inner());
        h.retain(|(id, _, _)| *id != self.0);
    }
}

/// Runs `f` if the process is stopped by SIGINT/SIGTERM/SIGHUP while the registration lives.
pub fn on_signal(stage: Stage, f: impl Fn() + Send + Sync + 'static) -> Registration {
    install();
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    HOOKS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push((id, stage, Arc::new(f)));
    Registration(id)
}

/// Whether a stop signal has arrived (long loops may check it to stop starting work).
#[cfg(feature = "internals")]
pub fn stopping() -> bool {
    STOPPING.load(Ordering::Acquire)
}

/// Whether `sig` was ignored when we started (then we leave it so).
fn ignored(sig: libc::c_int) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) != 0 || old.sa_sigaction == libc::SIG_IGN
    }
}

fn run_hooks() {
    let mut hooks: Vec<(u64, Stage, Hook)> = HOOKS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .map(|(i, s, h)| (*i, *s, Arc::clone(h)))
        .collect();
    hooks.sort_by_key(|(i, s, _)| (*s, *i));
    for (_, _, h) in hooks {
        h();
    }
}

/// Installs the signal thread once; also makes a file-size limit an error, not a death
/// (SIGXFSZ ignored: `write` then fails with EFBIG, reported as `io.write`).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: setting SIGXFSZ to ignored; contained commands get the default back.
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        }
        let sigs: Vec<libc::c_int> = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP]
            .into_iter()
            .filter(|&s| !ignored(s))
            .collect();
        let Ok(mut signals) = signal_hook::iterator::Signals::new(&sigs) else {
            return;
        };
        let spawned = std::thread::Builder::new()
            .name("ninfer-signals".into())
            .spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    STOPPING.store(true, Ordering::Release);
                    run_hooks();
                    let _ = signal_hook::low_level::emulate_default_handler(sig);
                    // Not reached for INT/TERM/HUP (their default action ends the process).
                    std::process::exit(128 + sig);
                }
            });
        drop(spawned);
    });
}

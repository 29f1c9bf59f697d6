//! Standard output failures follow the command-line convention: a closed pipe
//! (`inspect … | head -1`) ends the command quietly, any other failure (a full disk,
//! `/dev/full`) is an `io.stdout` error, never a panic.
//!
//! The commands print with `print!`/`println!`, which panic when the write fails; the panic
//! hook installed here turns exactly that panic into the convention (the hook sees the
//! message std's print macros use, "failed printing to stdout: `<io error>`"). The final flush
//! is checked by [`crate::cli::main`] through [`error`](crate::cli::stdout::error).

use crate::error::{Error, ErrorClass};

/// The message prefix std's `print!` family panics with when stdout cannot be written.
const PRINT_PANIC: &str = "failed printing to stdout: ";

/// Whether `e` is a write to a pipe whose reader has gone.
pub fn is_epipe(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::BrokenPipe
}

/// The classed error for a failed write or flush of stdout.
pub fn error(e: &std::io::Error) -> Error {
    Error::new(ErrorClass::IoStdout, "stdout", e.to_string())
}

/// Installs the panic hook described in the module documentation; every other panic goes
/// to the default hook unchanged.
pub fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied());
        let Some(io_text) = msg.and_then(|m| m.strip_prefix(PRINT_PANIC)) else {
            return default(info);
        };
        crate::fsio::remove_live_temps();
        // std formats the io::Error as "<description> (os error N)".
        if io_text.ends_with(&format!("(os error {})", libc::EPIPE)) {
            std::process::exit(0);
        }
        eprintln!(
            "error: {}",
            Error::new(ErrorClass::IoStdout, "stdout", io_text.to_string())
        );
        std::process::exit(2);
    }));
}

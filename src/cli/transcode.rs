//! `transcode`: argument handling for the lossless fixes in [`crate::gguf::transcode`] —
//! PTQ1_0 ↔ PQ2_0 (`--to`) and the header-only retag of legacy Prism id 42 (`--retag-42`).

use crate::codec::TernaryType;
use crate::gguf::{self, Mode};
use std::path::Path;
use std::process::ExitCode;

/// What to do with the input.
#[derive(Clone, Copy)]
enum Job {
    To(TernaryType),
    Retag,
}

fn job(to: Option<TernaryType>, retag: bool) -> crate::Result<Job> {
    Ok(match (to, retag) {
        (Some(_), true) => {
            return Err(super::usage(
                "--to/--retag-42",
                "use either --to or --retag-42",
            ))
        }
        (None, false) => {
            return Err(super::usage(
                "--to/--retag-42",
                "nothing to do: pass --to pq2_0|ptq1_0 or --retag-42",
            ))
        }
        (None, true) => Job::Retag,
        (Some(t), false) => Job::To(t),
    })
}

/// Runs `transcode INPUT -o OUTPUT (--to FORMAT | --retag-42)`.
pub fn run(
    input: &Path,
    output: &Path,
    to: Option<TernaryType>,
    retag: bool,
    force: bool,
) -> crate::Result<ExitCode> {
    let job = job(to, retag)?;
    super::check_output(output, force, &[input])?;
    let map = crate::fsio::map_file(input)?;
    let mut n = 0;
    let changed = &mut n;
    // The input map moves into the fill step and is unmapped before the output is re-opened,
    // so the two are never mapped at once.
    crate::fsio::write_atomic(
        output,
        move |w| {
            let g = gguf::parse(&map, Mode::Spec)?;
            *changed = match job {
                Job::To(ty) => gguf::transcode::transcode(&g, ty, w)?.1,
                Job::Retag => gguf::transcode::retag_legacy(&g, w)?.1,
            };
            Ok(())
        },
        |tmp| {
            let m = crate::fsio::map_file(tmp)?;
            gguf::parse(&m, Mode::Spec).map(|_| ())
        },
    )?;
    let what = match job {
        Job::To(ty) => format!("transcoded to {}", ty.name()),
        Job::Retag => "retagged 42 -> 142".to_string(),
    };
    let size = super::file_len(output)?;
    println!(
        "{what}: {n} tensors; wrote {} ({size} bytes)",
        output.display()
    );
    Ok(ExitCode::SUCCESS)
}

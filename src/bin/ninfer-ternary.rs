#[path = "../peak_alloc.rs"]
mod peak_alloc;

#[global_allocator]
static ALLOC: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

fn main() -> std::process::ExitCode {
    ninfer_ternary::verify::install_peak_probe(peak_alloc::peak);
    ninfer_ternary::cli::main()
}

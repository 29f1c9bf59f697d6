#[global_allocator]
static ALLOC: ninfer_ternary::verify::heap::PeakAlloc = ninfer_ternary::verify::heap::PeakAlloc;

fn main() -> std::process::ExitCode {
    ninfer_ternary::cli::main()
}

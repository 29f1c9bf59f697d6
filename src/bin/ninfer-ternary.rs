fn main() -> std::process::ExitCode {
    ninfer_ternary::cli::main()
}

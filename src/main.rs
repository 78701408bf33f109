//! The command line (`smith_calibrate::commands::cli`).

fn main() -> std::process::ExitCode {
    smith_calibrate::commands::cli::main()
}

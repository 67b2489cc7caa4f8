//! The `jouleplan` binary: a thin shell over the library.

fn main() {
    std::process::exit(jouleplan::cli::main_with(std::env::args_os()));
}

fn main() {
    std::process::exit(lockstep::cli::main());
}

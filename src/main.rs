//! The `capi-topology` binary: parse the command line and hand over to the library's CLI.

fn main() -> std::process::ExitCode {
    capi_topology::cli::run()
}

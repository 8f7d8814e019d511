//! The `capi-topology` binary: parse the command line and hand over to the library's CLI.

/// mimalloc: the webhooks allocate many small objects per request; glibc's allocator was a third
/// of the admission time in profiles (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    capi_topology::cli::run()
}

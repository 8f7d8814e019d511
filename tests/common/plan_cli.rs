//! `capi-topology plan` run from the repository root: shared by `tests/plan.rs` and
//! `tests/reference_examples.rs`.

use std::process::Command;

/// Runs `capi-topology plan ARGS` from the repository root: exit code, stdout, stderr.
pub fn plan(args: &[&str]) -> (i32, String, String) {
    run("plan", args)
}

/// Runs `capi-topology SUBCOMMAND ARGS` from the repository root: exit code, stdout, stderr.
pub fn run(subcommand: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_capi-topology"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg(subcommand)
        .args(args)
        .output()
        .expect("run capi-topology");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

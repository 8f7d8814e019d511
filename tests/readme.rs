//! The README cannot drift from the binary: every `console` block is run and its output compared.
//!
//! The convention, as README.md states it: in a ```` ```console ```` block, a line starting with
//! `$ ` is a command (run from the repository root by bash, `capi-topology` and
//! `cargo run --release --` standing for the binary under test, stderr merged into stdout), and
//! the lines after it are what it prints. A line `...` stands for any number of lines; a line
//! ending in `...` stands for one line starting with what comes before. The commands of one block
//! run in one shell, in order (so `&` and `kill %1` work), and whatever a block leaves running is
//! stopped when it ends. Every ```` ```sh ```` block must hold only commands this test cannot run
//! (they need a cluster, a registry, nightly Rust, or would run this very test), listed below.

use std::path::Path;
use std::process::{Command, Stdio};

/// Commands a `sh` block may hold, and why they are not run here.
const NOT_RUN: [(&str, &str); 8] = [
    ("cargo test", "runs this test"),
    ("cargo install", "installs into the user's cargo home"),
    (
        "cargo +nightly fuzz",
        "needs the nightly toolchain and runs for minutes",
    ),
    ("cd fuzz", "part of the fuzzing commands"),
    ("docker ", "needs a container engine and a registry"),
    ("kubectl ", "needs a cluster"),
    ("capi-topology plan --kubeconfig", "reads a management cluster"),
    (
        "capi-topology cluster-api",
        "reads a management cluster (the e2e runs it beside Cluster API's managers)",
    ),
];

/// One command of a `console` block and what it should print.
#[derive(Debug)]
struct Step {
    command: String,
    expected: Vec<String>,
}

/// A `console` block: where it starts in README.md, and its steps.
#[derive(Debug)]
struct Block {
    line: usize,
    steps: Vec<Step>,
}

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README.md")
}

/// The fenced blocks of `text` with the given info string: (first line number, lines).
fn fenced<'a>(text: &'a str, info: &str) -> Vec<(usize, Vec<&'a str>)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, Vec<&str>)> = None;
    for (i, line) in text.lines().enumerate() {
        match current.as_mut() {
            None if line == format!("```{info}") => current = Some((i + 1, Vec::new())),
            None => {}
            Some(_) if line.starts_with("```") => blocks.extend(current.take()),
            Some((_, lines)) => lines.push(line),
        }
    }
    blocks
}

fn console_blocks(text: &str) -> Vec<Block> {
    fenced(text, "console")
        .into_iter()
        .map(|(line, lines)| {
            let mut steps: Vec<Step> = Vec::new();
            for text in lines {
                match (text.strip_prefix("$ "), steps.last_mut()) {
                    (Some(command), _) => steps.push(Step {
                        command: command.to_owned(),
                        expected: Vec::new(),
                    }),
                    (None, Some(step)) => step.expected.push(text.to_owned()),
                    (None, None) => {
                        panic!("README.md:{line}: a console block must start with a `$ ` command")
                    }
                }
            }
            Block { line, steps }
        })
        .collect()
}

/// `command` with the binary under test in place of `capi-topology` / `cargo run --release --`.
fn with_binary(command: &str) -> String {
    let binary = format!("'{}' ", env!("CARGO_BIN_EXE_capi-topology"));
    for prefix in ["cargo run --release -- ", "capi-topology "] {
        if let Some(rest) = command.strip_prefix(prefix) {
            return binary + rest;
        }
    }
    command.to_owned()
}

const MARKER: &str = "@@readme-step@@";

/// Runs a block's commands in one bash; returns each step's output lines.
fn run(block: &Block) -> Vec<Vec<String>> {
    let mut script = String::from("exec 2>&1\ntrap 'kill $(jobs -p) 2>/dev/null' EXIT\n");
    for step in &block.steps {
        script.push_str(&format!("echo '{MARKER}'\n{}\n", with_binary(&step.command)));
    }
    let output = Command::new("timeout")
        .args(["-k", "5", "180", "bash", "-c", &script])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let mut steps: Vec<Vec<String>> = Vec::new();
    for line in text.lines() {
        if line == MARKER {
            steps.push(Vec::new());
        } else if let Some(step) = steps.last_mut() {
            step.push(line.trim_end().to_owned());
        }
    }
    steps
}

/// Whether `actual` matches `expected` with its elisions.
fn matches(expected: &[String], actual: &[String]) -> bool {
    let expected: Vec<&str> = expected.iter().map(|l| l.trim_end()).collect();
    let mut actual: Vec<&str> = actual.iter().map(String::as_str).collect();
    while actual.last() == Some(&"") {
        actual.pop();
    }
    // reachable[j]: the expected lines so far can account for the first j actual lines.
    let mut reachable = vec![false; actual.len() + 1];
    reachable[0] = true;
    for want in expected {
        let mut next = vec![false; actual.len() + 1];
        for j in 0..=actual.len() {
            if !reachable[j] {
                continue;
            }
            if want == "..." {
                next[j..].iter_mut().for_each(|r| *r = true);
                break;
            }
            let fits = actual.get(j).is_some_and(|got| match want.strip_suffix("...") {
                Some(prefix) if !prefix.is_empty() => got.starts_with(prefix),
                _ => *got == want,
            });
            if fits {
                next[j + 1] = true;
            }
        }
        reachable = next;
    }
    reachable[actual.len()]
}

#[test]
fn every_console_block_prints_what_the_readme_says() {
    let blocks = console_blocks(&readme());
    assert!(blocks.len() >= 5, "the README's examples are console blocks");
    let mut failures = Vec::new();
    for block in &blocks {
        let outputs = run(block);
        for (i, step) in block.steps.iter().enumerate() {
            let got = outputs.get(i).cloned().unwrap_or_default();
            if !matches(&step.expected, &got) {
                failures.push(format!(
                    "README.md:{} `$ {}`\n--- the README says\n{}\n--- it prints\n{}",
                    block.line,
                    step.command,
                    step.expected.join("\n"),
                    got.join("\n")
                ));
            }
        }
    }
    eprintln!("ran {} console blocks of README.md", blocks.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_other_command_block_is_one_this_test_cannot_run() {
    for (line, lines) in fenced(&readme(), "sh") {
        for command in lines.iter().filter(|l| !l.trim().is_empty()) {
            assert!(
                NOT_RUN.iter().any(|(prefix, _)| command.starts_with(prefix)),
                "README.md:{line}: `{command}` is neither run by tests/readme.rs (make the block a \
                 `console` block with its output) nor a known command it cannot run"
            );
        }
    }
}

#[test]
fn elisions_match_what_they_say() {
    let lines = |text: &str| text.lines().map(str::to_owned).collect::<Vec<_>>();
    assert!(matches(&lines("a\n...\nd"), &lines("a\nb\nc\nd")));
    assert!(matches(&lines("a\n...\nd"), &lines("a\nd")));
    assert!(matches(&lines("{\"x\":...\n"), &lines("{\"x\": 1}")));
    assert!(!matches(&lines("a\nb"), &lines("a\nc")));
    assert!(!matches(&lines("a"), &lines("a\nb")));
}

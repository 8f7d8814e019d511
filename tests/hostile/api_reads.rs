//! Hostile API servers behind `--kubeconfig`: one that accepts and never answers, one that
//! redirects, one whose answer never ends. Each read must end in seconds with an error naming
//! the request, in bounded memory. The servers are plain HTTP on 127.0.0.1, an ephemeral port,
//! and stop by themselves.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::offline::{run_measured, temp_dir, text};

/// How long a test server lives: past it, it stops accepting and its connections close.
const SERVER_LIFE: Duration = Duration::from_secs(30);
/// The bound on each command: a safety bound, not a timing target.
const SOON: Duration = Duration::from_secs(20);
/// Most memory the command may take while refusing an endless answer (64 MiB read at most).
const PEAK_KIB: u64 = 256 * 1024;

/// What the test server does once it has read a request's head.
#[derive(Clone, Copy)]
enum Behaviour {
    Silent,
    Redirect,
    Endless,
}

/// Starts a server on 127.0.0.1 that treats each connection as `behaviour` says, until
/// [`SERVER_LIFE`] has passed; its address.
fn serve(behaviour: Behaviour) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    listener.set_nonblocking(true).expect("nonblocking");
    let started = Instant::now();
    std::thread::spawn(move || {
        while started.elapsed() < SERVER_LIFE {
            match listener.accept() {
                Ok((stream, _)) => {
                    std::thread::spawn(move || answer(stream, behaviour, started));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    format!("http://{address}")
}

fn answer(mut stream: TcpStream, behaviour: Behaviour, started: Instant) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(SERVER_LIFE));
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
        head.push(byte[0]);
    }
    match behaviour {
        Behaviour::Silent => {
            while started.elapsed() < SERVER_LIFE && stream.read(&mut byte).is_ok_and(|n| n == 1) {}
        }
        Behaviour::Redirect => {
            let _ = stream.write_all(
                b"HTTP/1.1 307 Temporary Redirect\r\nLocation: https://elsewhere.example/api\r\nContent-Length: 0\r\n\r\n",
            );
        }
        Behaviour::Endless => {
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
            );
            let chunk = format!("{:x}\r\n{}\r\n", 1 << 16, " ".repeat(1 << 16));
            while started.elapsed() < SERVER_LIFE && stream.write_all(chunk.as_bytes()).is_ok() {}
        }
    }
}

/// A kubeconfig for `server`, written in `dir`.
fn kubeconfig(dir: &std::path::Path, server: &str) -> String {
    let path = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: c, cluster: {{server: \"{server}\"}}}}]\n\
         users: [{{name: u, user: {{token: not-a-secret}}}}]\n\
         contexts: [{{name: x, context: {{cluster: c, user: u}}}}]\ncurrent-context: x\n"
    );
    std::fs::write(&path, text).expect("kubeconfig");
    path.display().to_string()
}

/// Runs `plan` against `behaviour`'s server with `timeout`; its stderr, after checking the
/// command failed within [`SOON`] and [`PEAK_KIB`].
fn plan_against(name: &str, behaviour: Behaviour, timeout: &str) -> String {
    let dir = temp_dir(name);
    let config = kubeconfig(&dir, &serve(behaviour));
    let (output, peak) = run_measured(
        SOON,
        &[
            "plan",
            "-f",
            "examples/quickstart",
            "--kubeconfig",
            &config,
            "--request-timeout",
            timeout,
        ],
    );
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    if let Some(peak) = peak {
        assert!(peak < PEAK_KIB, "peak {peak} KiB");
    }
    let _ = std::fs::remove_dir_all(&dir);
    stderr
}

#[test]
fn a_server_that_never_answers_times_out_naming_the_request() {
    let stderr = plan_against("silent", Behaviour::Silent, "1s");
    assert!(stderr.contains("GET /api"), "{stderr}");
    assert!(stderr.contains(": timed out after 1s"), "{stderr}");
}

#[test]
fn a_redirect_is_a_clear_error_not_a_json_one() {
    let stderr = plan_against("redirect", Behaviour::Redirect, "30s");
    assert!(
        stderr.contains("the server answered 307 Temporary Redirect to https://elsewhere.example/api"),
        "{stderr}"
    );
    assert!(!stderr.contains("EOF while parsing"), "{stderr}");
}

#[test]
fn an_endless_answer_is_cut_at_the_bound() {
    let stderr = plan_against("endless", Behaviour::Endless, "0");
    assert!(
        stderr.contains("the answer is larger than 64 MiB, the most read at once"),
        "{stderr}"
    );
}

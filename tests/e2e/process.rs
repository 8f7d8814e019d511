//! Processes the suite starts: long-running ones in their own process group with a pid file and a
//! log, stopped (whole group) when their guard drops; short commands run with a hard deadline.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long a stopped process group gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(10);

/// A directory of one environment: logs, data, certificates and the pid files of its processes.
///
/// Its name records the test process that owns it, so a later run can tell a stale directory (owner
/// gone) from a live one, stop the processes its pid files name, and remove it.
pub struct RunDir {
    path: PathBuf,
    owned: bool,
}

impl RunDir {
    /// Creates a fresh run directory under the suite's state directory, after reaping stale runs.
    pub fn create(label: &str) -> RunDir {
        let state = state_dir();
        fs::create_dir_all(&state).expect("create the e2e state directory");
        reap_stale_runs(&state);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let path = state.join(format!("run-{}-{label}-{nanos}", std::process::id()));
        fs::create_dir_all(path.join("pids")).expect("create the run directory");
        RunDir { path, owned: true }
    }

    /// Another handle on the existing run directory `path`, which it does not remove when
    /// dropped (its owner does).
    pub fn adopt(path: &Path) -> RunDir {
        RunDir {
            path: path.to_path_buf(),
            owned: false,
        }
    }

    /// The directory itself.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A path inside the directory.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        if thread::panicking() {
            eprintln!("e2e: logs of the failed run kept in {}", self.path.display());
        } else {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// Where run directories live: `$CAPI_TOPOLOGY_E2E_STATE`, else `<tmp>/capi-topology-e2e`.
fn state_dir() -> PathBuf {
    std::env::var_os("CAPI_TOPOLOGY_E2E_STATE")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("capi-topology-e2e"))
}

/// Stops the processes of runs whose owning test process is gone and removes their directories
/// (including the logs kept by failed runs).
fn reap_stale_runs(state: &Path) {
    let Ok(entries) = fs::read_dir(state) else { return };
    for entry in entries.flatten() {
        let dir = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(owner) = name
            .strip_prefix("run-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if is_alive(owner) {
            continue;
        }
        for pid_file in fs::read_dir(dir.join("pids")).into_iter().flatten().flatten() {
            if let Some(record) = PidRecord::read(&pid_file.path()) {
                if record.is_running() {
                    eprintln!(
                        "e2e: stopping stale {} (pid {})",
                        record.exe.display(),
                        record.pid
                    );
                    signal_group(record.pid, "KILL");
                }
            }
            let _ = fs::remove_file(pid_file.path());
        }
        let _ = fs::remove_dir_all(&dir);
    }
}

fn is_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Sends `signal` to the process group `pgid` (the suite starts every process as a group leader).
fn signal_group(pgid: u32, signal: &str) {
    let _ = Command::new("kill")
        .args(["-s", signal, "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// What a pid file says: the pid and the executable, so a reused pid is never signalled.
struct PidRecord {
    pid: u32,
    exe: PathBuf,
}

impl PidRecord {
    fn read(path: &Path) -> Option<PidRecord> {
        let text = fs::read_to_string(path).ok()?;
        let (pid, exe) = text.trim().split_once(' ')?;
        Some(PidRecord {
            pid: pid.parse().ok()?,
            exe: PathBuf::from(exe),
        })
    }

    fn is_running(&self) -> bool {
        fs::read_link(format!("/proc/{}/exe", self.pid)).is_ok_and(|exe| {
            // A deleted binary reads as "<path> (deleted)".
            exe.to_string_lossy().starts_with(&*self.exe.to_string_lossy())
        })
    }
}

/// A long-running process of the environment; dropping it stops its whole process group.
pub struct Supervised {
    name: String,
    child: Child,
    log: PathBuf,
    pid_file: PathBuf,
}

impl Supervised {
    /// Starts `command` in its own process group, output to `<run>/<name>.log`, pid file in
    /// `<run>/pids/<name>.pid`.
    pub fn spawn(run: &RunDir, name: &str, mut command: Command) -> Supervised {
        let log = run.join(&format!("{name}.log"));
        let out = File::create(&log).expect("create a log file");
        let err = out.try_clone().expect("clone a log file handle");
        let program = PathBuf::from(command.get_program());
        command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0);
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name} ({}): {e}", program.display()));
        let exe = fs::canonicalize(&program).unwrap_or(program);
        let pid_file = run.path().join("pids").join(format!("{name}.pid"));
        fs::write(&pid_file, format!("{} {}\n", child.id(), exe.display())).expect("write a pid file");
        Supervised {
            name: name.to_owned(),
            child,
            log,
            pid_file,
        }
    }

    /// The exit status if the process has ended.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Fails with the end of the log if the process has ended.
    pub fn ensure_running(&mut self) -> Result<(), String> {
        match self.exited() {
            None => Ok(()),
            Some(status) => Err(format!("{} exited ({status}):\n{}", self.name, self.log_tail(40))),
        }
    }

    /// The last `lines` lines of the process's log.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Kills the process group at once (SIGKILL: no clean-up, as when a node dies).
    pub fn kill(&mut self) {
        signal_group(self.child.id(), "KILL");
        let _ = self.child.wait();
        let _ = fs::remove_file(&self.pid_file);
    }

    /// Stops the process group: SIGTERM, then SIGKILL after a grace period.
    pub fn stop(&mut self) {
        if self.exited().is_none() {
            signal_group(self.child.id(), "TERM");
            let deadline = Instant::now() + GRACE;
            while self.exited().is_none() && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(50));
            }
        }
        // Also reaches children left in the group after the leader exited.
        signal_group(self.child.id(), "KILL");
        let _ = self.child.wait();
        let _ = fs::remove_file(&self.pid_file);
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What a bounded command printed.
#[derive(Debug)]
pub struct Finished {
    /// Whether it exited with status 0.
    pub success: bool,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

/// Runs `command` to completion with `stdin`, killing it (and failing) once `timeout` passes.
pub fn run_bounded(
    mut command: Command,
    stdin: Option<&[u8]>,
    timeout: Duration,
) -> Result<Finished, String> {
    let shown = format!("{command:?}");
    command
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command.spawn().map_err(|e| format!("cannot run {shown}: {e}"))?;
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let bytes = bytes.to_vec();
        thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let mut delay = Duration::from_millis(5);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                signal_group(child.id(), "KILL");
                let _ = child.wait();
                return Err(format!("{shown} did not finish within {timeout:?}"));
            }
            Ok(None) => {
                thread::sleep(delay);
                delay = (delay * 2).min(Duration::from_millis(100));
            }
            Err(e) => return Err(format!("waiting for {shown}: {e}")),
        }
    };
    Ok(Finished {
        success: status.success(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

/// Polls `probe` until it succeeds, backing off up to one second, and fails with its last
/// complaint once `timeout` passes.
pub fn poll<T>(
    what: &str,
    timeout: Duration,
    mut probe: impl FnMut() -> Result<T, String>,
) -> Result<T, String> {
    let deadline = Instant::now() + timeout;
    let mut delay = Duration::from_millis(50);
    loop {
        let last = match probe() {
            Ok(value) => return Ok(value),
            Err(last) => last,
        };
        let now = Instant::now();
        if now >= deadline {
            return Err(format!(
                "timed out after {timeout:?} waiting for {what}; last: {last}"
            ));
        }
        thread::sleep(delay.min(deadline - now));
        delay = (delay * 2).min(Duration::from_secs(1));
    }
}

/// A loopback TCP port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("bind a loopback port")
}

/// `GET http://127.0.0.1:<port><path>` over plain HTTP/1.0: the status code and the body.
pub fn http_get(port: u16, path: &str) -> Result<(u16, String), String> {
    http_request(port, &format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"))
}

/// `POST http://127.0.0.1:<port><path>` of the JSON `body` over plain HTTP/1.0: the status code
/// and the body.
pub fn http_post(port: u16, path: &str, body: &str) -> Result<(u16, String), String> {
    http_request(
        port,
        &format!(
            "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// Sends `request` (a whole HTTP/1.0 request) and reads the status code and the body.
fn http_request(port: u16, request: &str) -> Result<(u16, String), String> {
    use std::net::{SocketAddr, TcpStream};
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    stream.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
    let mut response = String::new();
    stream.read_to_string(&mut response).map_err(|e| e.to_string())?;
    let code = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| format!("not an HTTP response: {response:?}"))?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body)
        .unwrap_or_default();
    Ok((code, body.to_owned()))
}

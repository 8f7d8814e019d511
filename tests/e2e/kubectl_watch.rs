//! A `kubectl get --watch` running in the background: one line per object seen (the list, then
//! every change), kept as the newest value per object name, so a benchmark can wait for a
//! condition over many objects without listing them all again and again.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::kubectl::Kubectl;

/// How often a watch the API server ended is started again (it closes watchers that fall behind
/// a burst of changes; kubectl then exits).
const RESTARTS: usize = 20;

/// A running watch of one resource in one namespace.
pub struct Watch {
    kubectl: Kubectl,
    args: Vec<String>,
    child: Child,
    lines: Receiver<(Instant, String)>,
    /// The newest value printed per object name.
    latest: HashMap<String, String>,
    /// What kubectl wrote to stderr (why a watch ended).
    errors: Arc<Mutex<String>>,
}

/// A started kubectl, the lines it prints and what it complains.
type Started = (Child, Receiver<(Instant, String)>, Arc<Mutex<String>>);

fn spawn(kubectl: &Kubectl, args: &[String]) -> Result<Started, String> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut command = kubectl.command(&args);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run kubectl {args:?}: {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let errors = Arc::new(Mutex::new(String::new()));
    let kept = Arc::clone(&errors);
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let mut kept = kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            kept.push_str(&line);
            kept.push('\n');
        }
    });
    let (send, lines) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if send.send((Instant::now(), line)).is_err() {
                return;
            }
        }
    });
    Ok((child, lines, errors))
}

impl Watch {
    /// Starts `kubectl get <resource> -n <namespace> --watch` printing, per object, its name and
    /// the value of the column expression `value` (e.g. `.metadata.labels.rollout`; `<none>`
    /// when missing).
    pub fn start(kubectl: &Kubectl, resource: &str, namespace: &str, value: &str) -> Result<Watch, String> {
        // Columns, not a JSONPath template: kubectl applies a template to the first list as one
        // object, columns print every listed object (a restarted watch must see them all).
        let columns = format!("custom-columns=NAME:.metadata.name,VALUE:{value}");
        let args: Vec<String> = [
            "get",
            resource,
            "-n",
            namespace,
            "--watch",
            "--no-headers",
            "-o",
            &columns,
        ]
        .iter()
        .map(|a| (*a).to_owned())
        .collect();
        let (child, lines, errors) = spawn(kubectl, &args)?;
        Ok(Watch {
            kubectl: kubectl.clone(),
            args,
            child,
            lines,
            latest: HashMap::new(),
            errors,
        })
    }

    /// Waits until `count` objects show `expected`, and returns when the last of them was seen;
    /// after `timeout`, how many showed it. A watch that ends is started again (its list shows
    /// every object as it is then).
    pub fn wait_for(&mut self, expected: &str, count: usize, timeout: Duration) -> Result<Instant, usize> {
        let deadline = Instant::now() + timeout;
        let mut restarts = 0;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((at, line)) => {
                    let mut fields = line.split_whitespace();
                    let (name, value) = (
                        fields.next().unwrap_or_default(),
                        fields.next().unwrap_or_default(),
                    );
                    self.latest.insert(name.to_owned(), value.to_owned());
                    if self.showing(expected) >= count {
                        return Ok(at);
                    }
                }
                Err(RecvTimeoutError::Timeout) => return Err(self.showing(expected)),
                Err(RecvTimeoutError::Disconnected) => {
                    let errors = self.errors.lock().map(|e| e.clone()).unwrap_or_default();
                    eprintln!("kubectl watch ended ({restarts} restarts so far): {errors}");
                    restarts += 1;
                    let restarted = (restarts <= RESTARTS)
                        .then(|| spawn(&self.kubectl, &self.args).ok())
                        .flatten();
                    let Some((child, lines, errors)) = restarted else {
                        return Err(self.showing(expected));
                    };
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    (self.child, self.lines, self.errors) = (child, lines, errors);
                }
            }
        }
    }

    /// How many objects show `expected` now.
    pub fn showing(&self, expected: &str) -> usize {
        self.latest.values().filter(|v| *v == expected).count()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

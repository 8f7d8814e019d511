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

/// A running watch of one resource in one namespace.
pub struct Watch {
    child: Child,
    lines: Receiver<(Instant, String)>,
    /// The newest value printed per object name.
    latest: HashMap<String, String>,
    /// What kubectl wrote to stderr (why a watch ended).
    errors: Arc<Mutex<String>>,
}

impl Watch {
    /// Starts `kubectl get <resource> -n <namespace> --watch` printing, per object, its name and
    /// the value of the JSONPath `value` (e.g. `{.metadata.labels.rollout}`).
    pub fn start(kubectl: &Kubectl, resource: &str, namespace: &str, value: &str) -> Result<Watch, String> {
        let template = format!("jsonpath={{.metadata.name}}{{\" \"}}{value}{{\"\\n\"}}");
        let mut command = kubectl.command(&["get", resource, "-n", namespace, "--watch", "-o", &template]);
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = command.spawn().map_err(|e| format!("cannot watch {resource}: {e}"))?;
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
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send((Instant::now(), line)).is_err() {
                    return;
                }
            }
        });
        Ok(Watch {
            child,
            lines,
            latest: HashMap::new(),
            errors,
        })
    }

    /// Waits until `count` objects show `expected`, and returns when the last of them was seen;
    /// after `timeout`, how many showed it.
    pub fn wait_for(&mut self, expected: &str, count: usize, timeout: Duration) -> Result<Instant, usize> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((at, line)) => {
                    let (name, value) = line.split_once(' ').unwrap_or((line.as_str(), ""));
                    self.latest.insert(name.to_owned(), value.to_owned());
                    if self.showing(expected) >= count {
                        return Ok(at);
                    }
                }
                Err(RecvTimeoutError::Timeout) => return Err(self.showing(expected)),
                Err(RecvTimeoutError::Disconnected) => {
                    let errors = self.errors.lock().map(|e| e.clone()).unwrap_or_default();
                    eprintln!("kubectl watch ended: {errors}");
                    return Err(self.showing(expected));
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

//! What the processes of an environment cost, from Linux `/proc`: peak resident memory
//! (`VmHWM` of `/proc/<pid>/status`) and CPU time (user + system of `/proc/<pid>/stat`), and a
//! wait for a process to fall idle. The processes are found through the pid files of the run
//! directory (`<run>/pids/<name>.pid`, see [`crate::process::Supervised`]).

use std::fs;
use std::thread;
use std::time::{Duration, Instant};

use crate::process::RunDir;

/// Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`; 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// The pid of the process the run directory started as `name` (`capi-topology`, `etcd`,
/// `kube-apiserver`).
pub fn pid_of(run: &RunDir, name: &str) -> Result<u32, String> {
    let file = run.join(&format!("pids/{name}.pid"));
    let text = fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    text.split_whitespace()
        .next()
        .and_then(|pid| pid.parse().ok())
        .ok_or_else(|| format!("{}: no pid in {text:?}", file.display()))
}

/// Peak resident set size of `pid` in MiB (`VmHWM`).
pub fn peak_rss_mib(pid: u32) -> Result<f64, String> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).map_err(|e| format!("pid {pid}: {e}"))?;
    kib_field(&status, "VmHWM:")
        .map(|kib| kib / 1024.0)
        .ok_or_else(|| format!("pid {pid}: no VmHWM"))
}

/// A `<field> <n> kB` line of `/proc/<pid>/status`, in KiB.
fn kib_field(status: &str, field: &str) -> Option<f64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// CPU seconds (user + system, all threads) `pid` has used so far.
pub fn cpu_seconds(pid: u32) -> Result<f64, String> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|e| format!("pid {pid}: {e}"))?;
    stat_cpu_ticks(&stat)
        .map(|ticks| ticks / TICKS_PER_SECOND)
        .ok_or_else(|| format!("pid {pid}: unreadable stat {stat:?}"))
}

/// utime + stime (fields 14 and 15) of a `/proc/<pid>/stat` line; the command name (field 2)
/// may hold spaces and parentheses, so fields are counted after its last `)`.
fn stat_cpu_ticks(stat: &str) -> Option<f64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // after_name starts at field 3 (state): utime is field 14, stime field 15.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Waits until `pid` has used less than `quiet_cpu` of CPU during `window`, sampling every
/// `window / 4`, and returns when its last burst of work ended (the start of the quiet
/// window). Gives up after `timeout` and returns the time of the last sample.
pub fn wait_idle(pid: u32, window: Duration, quiet_cpu: Duration, timeout: Duration) -> Instant {
    let step = window / 4;
    let deadline = Instant::now() + timeout;
    let mut samples: Vec<(Instant, f64)> = Vec::new();
    loop {
        let now = Instant::now();
        let Ok(cpu) = cpu_seconds(pid) else { return now };
        samples.push((now, cpu));
        // The oldest sample at least a whole window ago.
        if let Some(&(since, used)) = samples.iter().rev().find(|(at, _)| now - *at >= window) {
            if cpu - used < quiet_cpu.as_secs_f64() {
                return since;
            }
        }
        if now >= deadline {
            return now;
        }
        thread::sleep(step);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_ticks_are_read_after_the_command_name() {
        let stat = "4242 (capi topology) (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 9 0";
        assert_eq!(stat_cpu_ticks(stat), Some(325.0));
        assert_eq!(stat_cpu_ticks("4242 (x) S 1"), None);
    }

    #[test]
    fn peak_rss_is_read_in_kib() {
        let status = "Name:\tetcd\nVmPeak:\t  900 kB\nVmHWM:\t  204800 kB\nVmRSS:\t  1024 kB\n";
        assert_eq!(kib_field(status, "VmHWM:"), Some(204_800.0));
        assert_eq!(kib_field(status, "VmSwap:"), None);
    }

    #[test]
    fn this_process_has_a_peak_and_uses_cpu() {
        let pid = std::process::id();
        assert!(peak_rss_mib(pid).unwrap() > 0.0);
        assert!(cpu_seconds(pid).unwrap() >= 0.0);
        assert!(peak_rss_mib(0).is_err());
    }
}

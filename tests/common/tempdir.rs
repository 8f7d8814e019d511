//! A directory of one test's own under the system temp dir, removed when dropped: its name is
//! new (process id, time, counter; created only if absent), so tests running at once on one
//! machine, in one process or in several, never share a file. Each test binary uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A directory created for one test, removed with its contents when dropped.
#[derive(Debug)]
pub struct Dir(PathBuf);

impl Dir {
    /// Creates a new empty directory whose name starts with `capi-topology-<label>-`.
    pub fn new(label: &str) -> Dir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.subsec_nanos());
        let label = label.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "-");
        loop {
            let path = std::env::temp_dir().join(format!(
                "capi-topology-{label}-{}-{nanos}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            match std::fs::create_dir(&path) {
                Ok(()) => return Dir(path),
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(err) => panic!("cannot create {}: {err}", path.display()),
            }
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `name` in the directory.
    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

//! Reading manifests from files and directories.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use super::terminal::eprint_line;
use crate::api::convert::to_hub;
use crate::clock::now_rfc3339;
use crate::offline::apply::{apply, Verdict};
use crate::offline::edge::check_served;
use crate::offline::strict::{repeated_keys, Validation};
use crate::offline::yaml11_labels::first_mistyped;
use crate::store::bounds::Budget;
use crate::store::{parse_manifests_within, MemoryStore};

/// Manifest file endings read from a directory.
const MANIFEST_EXTENSIONS: [&str; 3] = ["yaml", "yml", "json"];
/// Directories nested deeper than this are not read (a guard against link loops).
const MAX_DEPTH: usize = 16;
/// Largest manifest file read, in bytes: far above any real manifest (the API server takes at
/// most 3 MiB per object), far below what would exhaust memory once parsed.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// One object and the file it came from.
#[derive(Debug, Clone)]
pub struct SourcedObject {
    /// The file, as the user named it or as found in a named directory.
    pub source: PathBuf,
    /// The object.
    pub object: Value,
    /// The paths of the keys it repeats, as written (kubectl sends their last values: a warning).
    pub duplicates: Vec<String>,
}

impl SourcedObject {
    /// Warns, on stderr as kubectl does, of each key the object repeats (unless `validate`
    /// ignores them).
    pub fn warn_repeated_keys(&self, validate: Validation) {
        for repeated in repeated_keys(&self.duplicates, &self.source, validate) {
            eprint_line(&format!("Warning: {repeated}"));
        }
    }
}

/// Every object in `paths`, in order: files as given, directories walked in name order.
pub fn read_objects(paths: &[PathBuf]) -> Result<Vec<SourcedObject>> {
    Ok(read(paths)?.objects)
}

/// What reading some paths found.
#[derive(Debug)]
pub struct Read {
    /// The manifest files read.
    pub files: usize,
    /// Their objects, in order.
    pub objects: Vec<SourcedObject>,
}

impl Read {
    /// One line saying what was read, for a command that found nothing to do in it:
    /// `read 2 files, 0 objects from a/, b.yaml`.
    pub fn summary(&self, paths: &[PathBuf]) -> String {
        let named: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        format!(
            "read {}, {} from {}",
            plural(self.files, "manifest file"),
            plural(self.objects.len(), "object"),
            named.join(", ")
        )
    }
}

/// Fails on the first object of our groups in a version no CRD serves (kubectl's mapping error).
pub fn check_versions(objects: &[SourcedObject]) -> Result<()> {
    for sourced in objects {
        check_served(&sourced.object, &sourced.source.display().to_string())?;
    }
    Ok(())
}

/// The manifest files in `paths`, in order (files as given, directories walked in name order),
/// each with the path it was found under.
pub fn manifest_files(paths: &[PathBuf]) -> Result<Vec<(PathBuf, PathBuf)>> {
    let mut found = Vec::new();
    for path in paths {
        let mut files = Vec::new();
        collect_files(path, 0, &mut files)?;
        found.extend(files.into_iter().map(|file| (path.clone(), file)));
    }
    Ok(found)
}

/// Every object in `paths` and how many files held them.
pub fn read(paths: &[PathBuf]) -> Result<Read> {
    let files: Vec<PathBuf> = manifest_files(paths)?.into_iter().map(|(_, file)| file).collect();
    let count = files.len();
    let mut objects = Vec::new();
    // One budget for every file: the command's decoded manifests are bounded, not each file's.
    let mut budget = Budget::default();
    for file in files {
        let text = read_text(&file)?;
        let parsed =
            parse_manifests_within(&text, &mut budget).with_context(|| format!("{}", file.display()))?;
        if let Some(mistyped) = first_mistyped(&text, parsed.iter().map(|(object, _)| object)) {
            bail!(mistyped.refusal(&file.display().to_string()));
        }
        objects.extend(parsed.into_iter().map(|(object, duplicates)| SourcedObject {
            source: file.clone(),
            object,
            duplicates,
        }));
    }
    Ok(Read {
        files: count,
        objects,
    })
}

/// A store holding every object in `paths`, taken as given but converted to v1beta2 (what an API
/// server storing v1beta2 returns for it).
pub fn load_store(paths: &[PathBuf]) -> Result<MemoryStore> {
    let mut store = MemoryStore::default();
    let objects = read_objects(paths)?;
    check_versions(&objects)?;
    for sourced in objects {
        let source = || sourced.source.display().to_string();
        let object = to_hub(sourced.object).with_context(source)?;
        store.insert(object).with_context(source)?;
    }
    Ok(store)
}

/// A store holding every object of `paths` as an API server would after `kubectl apply`: each
/// object admitted by the webhooks (defaulted), ClusterClass status written. Fails on the first
/// object the webhooks refuse.
pub fn admitted_store(paths: &[PathBuf]) -> Result<MemoryStore> {
    let mut store = MemoryStore::default();
    let now = now_rfc3339();
    let objects = read_objects(paths)?;
    check_versions(&objects)?;
    for sourced in objects {
        let source = sourced.source.display().to_string();
        let applied = apply(&mut store, sourced.object, &source, &now)?;
        if applied.verdict == Verdict::Denied {
            anyhow::bail!("{source}: {}", applied.message);
        }
    }
    Ok(store)
}

/// The text of the manifest file `file`: a regular file of at most [`MAX_FILE_BYTES`], read
/// with that bound even if it grows while being read.
pub fn read_text(file: &Path) -> Result<String> {
    use std::io::Read as _;
    let cannot = || format!("cannot read {}", file.display());
    // Checked before opening: opening a FIFO waits for a writer.
    let metadata = std::fs::metadata(file).with_context(cannot)?;
    if let Some(kind) = special_kind(&metadata.file_type()).or(metadata.is_dir().then_some("a directory")) {
        anyhow::bail!("cannot read {}: not a regular file ({kind})", file.display());
    }
    let opened = std::fs::File::open(file).with_context(cannot)?;
    let too_large = || {
        anyhow::anyhow!(
            "cannot read {}: larger than {} MiB, the most a manifest file may hold",
            file.display(),
            MAX_FILE_BYTES / (1024 * 1024)
        )
    };
    if metadata.len() > MAX_FILE_BYTES {
        return Err(too_large());
    }
    let mut text = String::new();
    opened
        .take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .with_context(cannot)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large());
    }
    Ok(text)
}

/// What a file that is neither a regular file nor a directory is, for messages.
fn special_kind(file_type: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_file() || file_type.is_dir() {
        None
    } else if file_type.is_fifo() {
        Some("a FIFO")
    } else if file_type.is_char_device() {
        Some("a character device")
    } else if file_type.is_block_device() {
        Some("a block device")
    } else if file_type.is_socket() {
        Some("a socket")
    } else {
        Some("not a file")
    }
}

fn collect_files(path: &Path, depth: usize, files: &mut Vec<PathBuf>) -> Result<()> {
    let metadata = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    if let Some(kind) = special_kind(&metadata.file_type()) {
        anyhow::bail!("cannot read {}: not a regular file ({kind})", path.display());
    }
    if !metadata.is_dir() {
        files.push(path.to_path_buf());
        return Ok(());
    }
    if depth >= MAX_DEPTH {
        anyhow::bail!("{}: directories nested deeper than {MAX_DEPTH}", path.display());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("cannot list {}", path.display()))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("cannot list {}", path.display()))?;
    entries.sort();
    for entry in entries {
        // A dangling link or an entry removed meanwhile is skipped like any other non-manifest.
        let Ok(metadata) = std::fs::metadata(&entry) else {
            continue;
        };
        if metadata.is_dir() {
            collect_files(&entry, depth + 1, files)?;
            continue;
        }
        let manifest = entry
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| MANIFEST_EXTENSIONS.contains(&e));
        match special_kind(&metadata.file_type()) {
            _ if !manifest => {}
            None => files.push(entry),
            Some(kind) => eprint_line(&format!(
                "Warning: skipped {}: not a regular file ({kind})",
                entry.display()
            )),
        }
    }
    Ok(())
}

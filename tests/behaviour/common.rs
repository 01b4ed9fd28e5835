//! What the scenario runners share: finding scenario files and running
//! `karpenter-sim`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `.yaml` files under `dir` (a path inside this crate), in every
/// subfolder but those named in `skip`, sorted. An unreadable folder fails
/// the test.
pub(crate) fn yaml_files(dir: &str, skip: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, skip: &[&str], out: &mut Vec<PathBuf>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                let skipped = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| skip.contains(&n));
                if !skipped {
                    walk(&path, skip, out);
                }
            } else if path.extension().is_some_and(|e| e == "yaml") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&crate_dir().join(dir), skip, &mut files);
    files.sort();
    files
}

/// This crate's folder.
pub(crate) fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `karpenter-sim` with `args`.
pub(crate) fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_karpenter-sim"))
        .args(args)
        .output()
        .expect("run karpenter-sim")
}

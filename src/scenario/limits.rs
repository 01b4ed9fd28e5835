//! The bounds that keep a hostile or broken input from hanging the loader or
//! exhausting memory: the size of a file, the depth of nesting, and the expansion
//! of YAML aliases.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use super::LoadError;

/// Limits on what the loader accepts. The defaults read any real cluster dump (a
/// 100,000-pod `kubectl get -o yaml` is about 150 MB) and refuse alias bombs and
/// pathological nesting.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadOptions {
    /// The largest file read, in bytes. Default: 1 GiB.
    pub max_file_bytes: u64,
    /// The deepest nesting of maps and lists in a document. Default: 128 (a Pod
    /// needs about 15).
    pub max_depth: usize,
    /// The most YAML alias uses (`*name`) in one file. Default: 10,000.
    pub max_aliases: usize,
    /// The most parse events that replaying aliases may add to one file, and that
    /// anchors may record; this is what stops a "billion laughs" document. Default:
    /// 100,000 (scenario files use anchors for a few labels; kubectl writes none).
    pub max_alias_expansion_events: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            max_file_bytes: 1 << 30,
            max_depth: 128,
            max_aliases: 10_000,
            max_alias_expansion_events: 100_000,
        }
    }
}

impl LoadOptions {
    /// The same options with another file size limit.
    pub fn with_max_file_bytes(mut self, bytes: u64) -> Self {
        self.max_file_bytes = bytes;
        self
    }

    /// The same options with another nesting limit.
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// serde-saphyr's options for these limits. Its own defaults are made for
    /// configuration files (at most 1,024 documents, 250,000 nodes, 1,000,000 events
    /// per file); a cluster dump is far larger, so the counting budgets scale with the
    /// file size limit while the alias and nesting limits stay tight.
    pub(crate) fn yaml_options(&self) -> serde_saphyr::Options {
        let mut options = serde_saphyr::Options::default();
        // Every node, event and document takes at least one byte of input.
        let per_byte = usize::try_from(self.max_file_bytes).unwrap_or(usize::MAX);
        if let Some(budget) = options.budget.as_mut() {
            budget.max_reader_input_bytes = Some(per_byte);
            budget.max_events = per_byte;
            budget.max_nodes = per_byte;
            budget.max_documents = per_byte;
            budget.max_total_scalar_bytes = per_byte;
            budget.max_depth = self.max_depth;
            budget.max_aliases = self.max_aliases;
            budget.max_anchors = self.max_aliases.max(50_000);
            budget.max_recorded_anchor_events = self.max_alias_expansion_events;
        }
        options.alias_limits.max_total_replayed_events = self.max_alias_expansion_events;
        options.alias_limits.max_replay_stack_depth = self.max_depth;
        options.with_snippet = false;
        options
    }
}

/// Refuses a file over the size limit.
pub(crate) fn check_size(file: &str, size: u64, options: &LoadOptions) -> Result<(), LoadError> {
    if size > options.max_file_bytes {
        return Err(LoadError::TooLarge {
            file: file.to_string(),
            size,
            limit: options.max_file_bytes,
        });
    }
    Ok(())
}

/// Reads a file (`-`: standard input) whole, refusing it past the size limit without
/// reading more than one byte past it.
pub(crate) fn read_input(
    path: &Path,
    options: &LoadOptions,
) -> Result<(Arc<str>, Vec<u8>), LoadError> {
    let name: Arc<str> = Arc::from(path.to_string_lossy().as_ref());
    let io_error = |source| LoadError::Io {
        file: name.to_string(),
        source,
    };
    let reader: Box<dyn Read> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(path).map_err(io_error)?)
    };
    let mut bytes = Vec::new();
    reader
        .take(options.max_file_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    check_size(&name, bytes.len() as u64, options)?;
    Ok((name, bytes))
}

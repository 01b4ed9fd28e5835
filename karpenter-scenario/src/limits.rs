//! The bounds that keep a hostile or broken input from hanging the loader or
//! exhausting memory: the size of a file and the depth of nesting (YAML aliases
//! are judged by what they expand to, in `aliases`).

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use karpenter_core::features::FeatureGates;

use super::LoadError;
use super::aliases::AliasUse;

/// Limits on what the loader accepts. The defaults read any real cluster dump (a
/// 100,000-pod `kubectl get -o yaml` is about 150 MB) and refuse pathological
/// nesting.
///
/// YAML aliases need no limit here: a document may take as large a share of its
/// nodes from aliases as go-yaml (what kubectl reads YAML with) allows, 99 % up to
/// 400,000 nodes, falling evenly to 10 % at 4,000,000 and beyond, so an alias bomb
/// is refused by what it would expand to while generated files that reuse objects
/// (as PyYAML writes them, with an anchor and an alias each) are read whatever
/// their number of aliases.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadOptions {
    /// The largest file read, in bytes. Default: 1 GiB.
    pub max_file_bytes: u64,
    /// The deepest nesting of maps and lists in a document. Default: 128 (a Pod
    /// needs about 15).
    pub max_depth: usize,
    /// Upstream's feature gates: a document of a gated kind (a static
    /// NodePool, NodeOverlay, CapacityBuffer) whose gate is off is skipped
    /// with a warning. Default: upstream's defaults.
    pub feature_gates: FeatureGates,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            max_file_bytes: 1 << 30,
            max_depth: 128,
            feature_gates: FeatureGates::UPSTREAM,
        }
    }
}

impl LoadOptions {
    /// The same options with another file size limit.
    pub fn with_max_file_bytes(mut self, bytes: u64) -> Self {
        self.max_file_bytes = bytes;
        self
    }

    /// The same options with these feature gates.
    pub fn with_feature_gates(mut self, gates: FeatureGates) -> Self {
        self.feature_gates = gates;
        self
    }

    /// The same options with another nesting limit.
    pub fn with_max_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth;
        self
    }

    /// serde-saphyr's options for these limits and for a file whose aliases were
    /// judged already ([`super::aliases::check`]). Its own defaults are made for
    /// configuration files (at most 1,024 documents, 250,000 nodes, 1,000,000 events,
    /// 50,000 aliases, 10 aliases per anchor); a cluster dump is far larger, so the
    /// counting budgets scale with the file size limit, and the alias budgets are
    /// set from what this file's aliases were counted to expand to: they only stand
    /// behind the count, should the deserializer replay more than it said.
    pub(crate) fn yaml_options(&self, aliases: AliasUse) -> serde_saphyr::Options {
        let mut options = serde_saphyr::Options::default();
        // Every node, event and document takes at least one byte of input.
        let per_byte = usize::try_from(self.max_file_bytes).unwrap_or(usize::MAX);
        // A node replays as at most two events (a collection's start and end).
        let events_of = |nodes: u64| {
            usize::try_from(nodes.saturating_mul(2))
                .unwrap_or(usize::MAX)
                .saturating_add(DESERIALIZER_ALIAS_SLACK)
        };
        if let Some(budget) = options.budget.as_mut() {
            budget.max_reader_input_bytes = Some(per_byte);
            budget.max_events = per_byte;
            budget.max_nodes = per_byte;
            budget.max_documents = per_byte;
            budget.max_total_scalar_bytes = per_byte;
            budget.max_depth = self.max_depth;
            budget.max_aliases = per_byte;
            budget.max_anchors = per_byte;
            budget.max_merge_keys = per_byte;
            budget.enforce_alias_anchor_ratio = false;
            budget.max_recorded_anchor_events = events_of(aliases.anchored_nodes);
            budget.max_recorded_anchor_bytes = per_byte;
        }
        options.alias_limits.max_total_replayed_events = events_of(aliases.expanded_nodes);
        options.alias_limits.max_replay_stack_depth = self.max_depth;
        options.with_snippet = false;
        options
    }
}

/// Room given to the deserializer's alias budgets beyond the counted expansion
/// (serde-saphyr's own default budget), so that a difference in how the two count
/// never refuses a file the count passed.
const DESERIALIZER_ALIAS_SLACK: usize = 1_000_000;

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
    let (reader, size): (Box<dyn Read>, u64) = if path.as_os_str() == "-" {
        (Box::new(std::io::stdin().lock()), 0)
    } else {
        let file = std::fs::File::open(path).map_err(io_error)?;
        // The size, when known, sizes the buffer once: growing it by doubling
        // would copy a 143 MB dump several times over (`take` hides the size).
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        (Box::new(file), size)
    };
    let mut bytes =
        Vec::with_capacity(usize::try_from(size.min(options.max_file_bytes)).unwrap_or_default());
    reader
        .take(options.max_file_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    check_size(&name, bytes.len() as u64, options)?;
    Ok((name, bytes))
}

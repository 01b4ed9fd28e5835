//! [`AnchorIndex`]: groups by the label their selector needs, so that the
//! groups selecting a pod are found from the pod's few labels instead of by
//! asking every group.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use super::selector::Selector;

/// Group ids by the label values their selectors require.
#[derive(Clone, Debug, Default)]
pub(super) struct AnchorIndex {
    /// Ids by label key and value: a group whose selector needs `key` to be
    /// one of some values is listed under each.
    by_label: HashMap<Arc<str>, HashMap<Arc<str>, Vec<usize>>>,
    /// Ids of groups whose selector needs no label value.
    rest: Vec<usize>,
}

impl AnchorIndex {
    /// Lists group `id` with `selector`.
    pub(super) fn add(&mut self, id: usize, selector: &Selector) {
        match selector.anchor() {
            Some((key, values)) => {
                let by_value = self.by_label.entry(Arc::from(key)).or_default();
                for value in values {
                    by_value.entry(Arc::from(&**value)).or_default().push(id);
                }
            }
            None => self.rest.push(id),
        }
    }

    /// The ids of the groups that may select a pod with `labels`, ascending.
    pub(super) fn candidates(&self, labels: &BTreeMap<String, String>) -> Vec<usize> {
        let mut ids = self.rest.clone();
        for (key, value) in labels {
            if let Some(listed) = self
                .by_label
                .get(key.as_str())
                .and_then(|by_value| by_value.get(value.as_str()))
            {
                ids.extend_from_slice(listed);
            }
        }
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

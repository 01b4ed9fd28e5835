//! [`DomainCounts`]: the domains a topology group knows and the selected pods
//! in each.
//!
//! A hostname group knows every node's hostname but counts pods on a few, and
//! disruption simulations clone groups by the thousand. So the domains known
//! when a group is made live in one shared, sorted set (groups made alike
//! share the very same set); a clone copies only what changed since (domains
//! added or forgotten) and the counts that are not zero. The set is behind an
//! `Arc`, as groups kept in a shared topology base are read by several
//! threads: one atomic count per clone, next to the maps a clone copies.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Known domains with their counts of selected pods.
#[derive(Clone, Debug, Default)]
pub(super) struct DomainCounts {
    /// Domains known from the start, shared with other groups.
    shared: Arc<BTreeSet<Arc<str>>>,
    /// Known domains not in `shared`.
    added: BTreeSet<Arc<str>>,
    /// Domains of `shared` forgotten since.
    hidden: BTreeSet<Arc<str>>,
    /// The counts that are not zero, all of known domains.
    nonzero: BTreeMap<Arc<str>, u32>,
}

impl DomainCounts {
    /// Counts over the domains of `shared`, none counted yet.
    pub(super) fn over(shared: Arc<BTreeSet<Arc<str>>>) -> DomainCounts {
        DomainCounts {
            shared,
            ..DomainCounts::default()
        }
    }

    /// How many domains are known.
    pub(super) fn len(&self) -> usize {
        self.shared.len() - self.hidden.len() + self.added.len()
    }

    /// Whether `domain` is known.
    pub(super) fn is_known(&self, domain: &str) -> bool {
        self.added.contains(domain)
            || (self.shared.contains(domain) && !self.hidden.contains(domain))
    }

    /// Makes `domain` known, with no pod if it was not known yet.
    pub(super) fn register(&mut self, domain: &Arc<str>) {
        if self.shared.contains(&**domain) {
            self.hidden.remove(&**domain);
        } else if !self.added.contains(&**domain) {
            self.added.insert(Arc::clone(domain));
        }
    }

    /// Makes `domain` known, with no pod if it was not known yet.
    pub(super) fn register_str(&mut self, domain: &str) {
        if !self.is_known(domain) {
            self.register(&Arc::from(domain));
        }
    }

    /// Counts one more pod in `domain`, making it known.
    pub(super) fn record(&mut self, domain: &str) {
        match self.nonzero.get_mut(domain) {
            Some(count) => *count = count.saturating_add(1),
            None => {
                self.register_str(domain);
                self.nonzero.insert(Arc::from(domain), 1);
            }
        }
    }

    /// Counts one pod fewer in `domain`; the domain stays known.
    pub(super) fn unrecord(&mut self, domain: &str) {
        if let Some(count) = self.nonzero.get_mut(domain) {
            *count -= 1;
            if *count == 0 {
                self.nonzero.remove(domain);
            }
        }
    }

    /// Makes `domain` unknown, with its count.
    pub(super) fn forget(&mut self, domain: &str) {
        self.nonzero.remove(domain);
        if !self.added.remove(domain)
            && let Some(shared) = self.shared.get(domain)
        {
            self.hidden.insert(Arc::clone(shared));
        }
    }

    /// The pods counted in `domain` (0 when unknown).
    pub(super) fn count(&self, domain: &str) -> u32 {
        self.nonzero.get(domain).copied().unwrap_or(0)
    }

    /// The count of a known domain; `None` when unknown.
    pub(super) fn get(&self, domain: &str) -> Option<u32> {
        match self.nonzero.get(domain) {
            Some(&count) => Some(count),
            None => self.is_known(domain).then_some(0),
        }
    }

    /// Every known domain with its count, in domain order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&Arc<str>, u32)> + '_ {
        let shared = self
            .shared
            .iter()
            .filter(|d| self.hidden.is_empty() || !self.hidden.contains(&***d));
        Merge {
            left: shared.peekable(),
            right: self.added.iter().peekable(),
        }
        .map(|domain| (domain, self.count(domain)))
    }

    /// The known domains, in order.
    pub(super) fn domains(&self) -> impl Iterator<Item = &Arc<str>> + '_ {
        self.iter().map(|(domain, _)| domain)
    }

    /// The domains holding a pod, with their counts, in order.
    pub(super) fn occupied(&self) -> impl Iterator<Item = (&Arc<str>, u32)> + '_ {
        self.nonzero.iter().map(|(domain, &count)| (domain, count))
    }

    /// Whether no domain holds a pod.
    pub(super) fn all_empty(&self) -> bool {
        self.nonzero.is_empty()
    }

    /// How many known domains hold no pod.
    pub(super) fn empty_len(&self) -> usize {
        self.len() - self.nonzero.len()
    }

    /// Whether `domain` is known and holds no pod.
    pub(super) fn is_empty_domain(&self, domain: &str) -> bool {
        !self.nonzero.contains_key(domain) && self.is_known(domain)
    }

    /// The known domains holding no pod, in order.
    pub(super) fn empty_domains(&self) -> impl Iterator<Item = &Arc<str>> + '_ {
        self.iter()
            .filter(|(_, count)| *count == 0)
            .map(|(domain, _)| domain)
    }
}

/// Two sorted iterators of distinct domains, merged in order.
struct Merge<L: Iterator, R: Iterator> {
    left: std::iter::Peekable<L>,
    right: std::iter::Peekable<R>,
}

impl<'a, L, R> Iterator for Merge<L, R>
where
    L: Iterator<Item = &'a Arc<str>>,
    R: Iterator<Item = &'a Arc<str>>,
{
    type Item = &'a Arc<str>;

    fn next(&mut self) -> Option<&'a Arc<str>> {
        match (self.left.peek(), self.right.peek()) {
            (Some(l), Some(r)) if l <= r => self.left.next(),
            (Some(_), Some(_)) | (None, Some(_)) => self.right.next(),
            (Some(_), None) => self.left.next(),
            (None, None) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(domains: &[&str]) -> Arc<BTreeSet<Arc<str>>> {
        Arc::new(domains.iter().map(|d| Arc::from(*d)).collect())
    }

    fn listed(counts: &DomainCounts) -> Vec<(String, u32)> {
        counts.iter().map(|(d, c)| (d.to_string(), c)).collect()
    }

    #[test]
    fn shared_added_and_forgotten_domains_read_as_one_sorted_set() {
        let mut counts = DomainCounts::over(set(&["b", "d"]));
        counts.register(&Arc::from("c"));
        counts.record("a");
        counts.record("d");
        counts.record("d");
        assert_eq!(
            listed(&counts),
            [("a", 1), ("b", 0), ("c", 0), ("d", 2)].map(|(d, c)| (d.to_string(), c))
        );
        assert_eq!((counts.len(), counts.empty_len()), (4, 2));
        counts.forget("b");
        counts.forget("a");
        counts.unrecord("d");
        assert_eq!(
            listed(&counts),
            [("c", 0), ("d", 1)].map(|(d, c)| (d.to_string(), c))
        );
        assert!(!counts.is_known("b") && counts.get("b").is_none());
        assert_eq!(counts.get("c"), Some(0));
        counts.unrecord("d");
        assert!(counts.all_empty() && counts.is_empty_domain("d"));
        counts.register_str("b");
        assert_eq!(counts.empty_domains().count(), 3);
    }
}

//! A topology base carried over to a later copy of its cluster
//! ([`TopologyBase::carried_over`]): updated for the placed pods moved and the
//! nodes read again since, instead of built afresh over every placed pod.
//! What it is told is all that changed, by the invariant of the set-up that
//! carries it (`provisioning/scheduler/carry/`); this is the base's own part
//! of the update, beside the representation it updates.
//!
//! The update gives what a fresh build of the changed cluster gives (in unit
//! tests every carried base is held to a fresh one, see
//! [`TopologyBase::canonical`]). What it does not update it refuses, and the
//! caller builds afresh: a pod that was not placed before, or a pod that
//! carries a required anti-affinity term (the order of the inverse groups
//! follows their carriers' placement order).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, RwLock};

use k8s_openapi::api::core::v1::Taint;

use super::base::TopologyBase;
use super::filter::NodeFilter;
use super::group::Group;
use super::inputs::{ExistingView, NodeInfo};
use crate::fast_hash::{HashMap, HashSet};
use crate::memo::GrowOnly;
use crate::scheduling::LABEL_HOSTNAME;

/// A placed pod now on another node than when the base read it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PlacedMove {
    /// The caller's id for the pod, as the base read it.
    pub pod_id: usize,
    /// The caller's id for the node it is on now.
    pub node_id: usize,
}

/// A node's labels and taints as they are now, by the caller's id for it
/// (`None`: no such node).
pub(crate) type NodeNow<'a> =
    dyn Fn(usize) -> Option<(&'a BTreeMap<String, String>, Vec<Taint>)> + 'a;

impl TopologyBase {
    /// This base (built with `memoize`, no pod left out), for a later copy of
    /// its cluster: the existing nodes are now `existing_nodes`, the nodes
    /// whose id `unchanged` names have the labels and taints they had (the
    /// others are read again through `node_now`), and the placed pods of
    /// `moves` are on other nodes. `None` when the change is more than an
    /// update handles (see the module documentation): a fresh build is
    /// needed.
    pub(crate) fn carried_over<'a>(
        mut self,
        existing_nodes: &[ExistingView<'_>],
        unchanged: &dyn Fn(usize) -> bool,
        node_now: &NodeNow<'a>,
        moves: &[PlacedMove],
    ) -> Option<TopologyBase> {
        // Only a memoizing base knows where each pod is.
        self.memo.as_ref()?;
        let reread: Vec<(usize, usize)> = self
            .placed_nodes
            .iter()
            .filter(|(id, _)| !unchanged(**id))
            .map(|(&id, &index)| (id, index))
            .collect();
        for (id, index) in reread {
            let (labels, taints) = node_now(id)?;
            self.nodes[index] = NodeInfo::new(labels, None, &taints);
        }
        for moved in moves {
            self.move_placed(moved, node_now)?;
        }
        self.read_existing(existing_nodes, unchanged);
        self.recount_inverse();
        Some(self)
    }

    /// Puts placed pod `moved.pod_id` on its new node.
    fn move_placed<'a>(&mut self, moved: &PlacedMove, node_now: &NodeNow<'a>) -> Option<()> {
        if self.carrier_pods.contains(&moved.pod_id) {
            return None;
        }
        let (namespace, at) = self.pod_slots.get(moved.pod_id)?.clone()?;
        let from = self.placed.get(&namespace)?.get(at)?.node;
        let to = match self.placed_nodes.get(&moved.node_id) {
            Some(&index) => index,
            None => {
                let index = self.nodes.len();
                let (labels, taints) = node_now(moved.node_id)?;
                self.nodes.push(NodeInfo::new(labels, None, &taints));
                self.node_ids.push(moved.node_id);
                self.on_node.push(Vec::new());
                self.placed_nodes.insert(moved.node_id, index);
                index
            }
        };
        if from == to {
            return Some(());
        }
        let pods = &mut self.on_node[from];
        let position = pods
            .iter()
            .position(|(ns, i)| *i == at && *ns == namespace)?;
        pods.swap_remove(position);
        if pods.is_empty() {
            // A fresh build knows no node of placed pods that runs none.
            let id = self.node_ids[from];
            if self.placed_nodes.get(&id) == Some(&from) {
                self.placed_nodes.remove(&id);
            }
        }
        self.on_node[to].push((Arc::clone(&namespace), at));
        self.placed.get_mut(&namespace)?[at].node = to;
        Some(())
    }

    /// Reads the existing nodes again, keeping the node read before for each
    /// id `unchanged` names, and forgets what was worked out from them.
    fn read_existing(
        &mut self,
        existing_nodes: &[ExistingView<'_>],
        unchanged: &dyn Fn(usize) -> bool,
    ) {
        let mut before = std::mem::take(&mut self.destination_nodes);
        // The hostnames counted are the existing nodes': those of the nodes
        // read before and not kept go, those of the nodes read now come.
        let mut kept_before = vec![false; self.nodes.len()];
        let existing_before = std::mem::take(&mut self.existing);
        self.existing.reserve(existing_nodes.len());
        self.destination_nodes.reserve(existing_nodes.len());
        // Emptied, not dropped: most ids come back, and their lists keep
        // room for them.
        for (positions, indices) in self.by_id.values_mut() {
            positions.clear();
            indices.clear();
        }
        let mut added: Vec<&str> = Vec::new();
        for node in existing_nodes {
            let kept = before.remove(&node.id).filter(|_| unchanged(node.id));
            if let Some(index) = kept {
                kept_before[index] = true;
            }
            let index = kept.unwrap_or_else(|| {
                self.nodes
                    .push(NodeInfo::new(node.labels, node.requirements, node.taints));
                self.node_ids.push(node.id);
                self.on_node.push(Vec::new());
                added.extend(node.labels.get(LABEL_HOSTNAME).map(String::as_str));
                let index = self.nodes.len() - 1;
                self.count_hostname(index, 1);
                index
            });
            self.destination_nodes.insert(node.id, index);
            self.by_id.entry(node.id).or_default().1.push(index);
            self.add_existing(node.id, index);
        }
        for index in existing_before {
            if !kept_before[index] {
                self.count_hostname(index, -1);
            }
        }
        // The hostnames registered are the existing nodes': those of the
        // nodes read before and not kept go, unless a node now existing has
        // one too, and those of the nodes read now come.
        let dropped: HashSet<Arc<str>> = before
            .values()
            .filter_map(|&index| self.nodes[index].label(LABEL_HOSTNAME))
            .map(Arc::from)
            .collect();
        if !dropped.is_empty() {
            if let Some(hostnames) = self.registered.get_mut(LABEL_HOSTNAME) {
                for hostname in &dropped {
                    hostnames.remove(hostname);
                }
            }
            added.extend(
                existing_nodes
                    .iter()
                    .filter_map(|node| node.labels.get(LABEL_HOSTNAME))
                    .map(String::as_str)
                    .filter(|hostname| dropped.contains(*hostname)),
            );
        }
        for hostname in added {
            self.register_hostname(hostname);
        }
        if self
            .registered
            .get(LABEL_HOSTNAME)
            .is_some_and(BTreeSet::is_empty)
        {
            self.registered.remove(LABEL_HOSTNAME);
        }
        for (&id, &index) in &self.placed_nodes {
            self.by_id.entry(id).or_default().1.push(index);
        }
        self.by_id
            .retain(|_, (positions, indices)| !positions.is_empty() || !indices.is_empty());
        self.by_label = GrowOnly::new();
        self.domain_sets = GrowOnly::new();
        self.memo = Some(RwLock::new(HashMap::default()));
    }

    /// Counts the inverse groups again over the domains the existing nodes
    /// now give, as a fresh build makes them.
    fn recount_inverse(&mut self) {
        for id in 0..self.inverse.len() {
            let identity = self.inverse[id].identity.clone();
            let key = Arc::clone(&identity.key);
            let shared = self.domain_set(&key, None, &NodeFilter::everything());
            let mut group = Group::over(identity, shared);
            group.inverse = true;
            for &(_, node) in &self.carriers[id] {
                if let Some(domain) = self.nodes[node].label(&key) {
                    group.record(domain);
                }
            }
            self.inverse[id] = group;
        }
    }

    /// What the base holds, written out so that two bases of one cluster
    /// compare equal however they were made (node indices and pod slots
    /// aside): the existing nodes in order, each id's nodes, the placed pods
    /// by namespace, the label index, and the inverse groups.
    #[cfg(test)]
    pub(crate) fn canonical(&self) -> String {
        use std::fmt::Write;
        let ids = &self.node_ids;
        let mut out = String::new();
        for &index in &self.existing {
            let _ = writeln!(out, "existing {} {:?}", ids[index], self.nodes[index]);
        }
        let _ = writeln!(out, "registered {:?}", self.registered);
        let mut hostname_counts: Vec<_> = self.hostname_counts.iter().collect();
        hostname_counts.sort();
        let _ = writeln!(out, "hostnames {hostname_counts:?}");
        let mut by_id: Vec<_> = self.by_id.iter().collect();
        by_id.sort_by_key(|(id, _)| **id);
        for (id, (positions, indices)) in by_id {
            let mut nodes: Vec<String> = indices
                .iter()
                .map(|&i| format!("{:?} with {}", self.nodes[i], self.on_node[i].len()))
                .collect();
            nodes.sort();
            let _ = writeln!(out, "id {id} at {positions:?}: {nodes:?}");
        }
        for (namespace, pods) in &self.placed {
            let mut pods: Vec<String> = pods
                .iter()
                .map(|p| format!("{:?} on {}", p.labels, ids[p.node]))
                .collect();
            pods.sort();
            let _ = writeln!(out, "placed in {namespace}: {pods:?}");
        }
        let mut pairs: Vec<String> = self
            .by_pod_label
            .iter()
            .flat_map(|(label, values)| {
                values
                    .iter()
                    .map(move |(value, pods)| format!("{label}={value}: {}", pods.len()))
            })
            .collect();
        pairs.sort();
        let _ = writeln!(out, "labels {pairs:?}");
        for (id, group) in self.inverse.iter().enumerate() {
            let carriers: Vec<usize> = self.carriers[id].iter().map(|(_, n)| ids[*n]).collect();
            let _ = writeln!(out, "inverse {id} {group:?} carried on {carriers:?}");
        }
        out
    }
}

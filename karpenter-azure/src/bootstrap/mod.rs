//! What a VM needs to join the cluster as an AKS node: its custom data.

pub(crate) mod labels;

//! The topology base carried to the next set-up, with what it read of the
//! pools (see the [module documentation](super)).
//!
//! A fresh base reads every placed pod again: its labels, its node, its
//! label pairs indexed. The next set-up instead updates the base carried for
//! the pods noted moved and the nodes read again
//! ([`Setup::carried_topology_base`], which the base does in
//! [`TopologyBase::carried_over`], next to the representation it updates),
//! so the base costs what changed rather than the cluster. It does so only
//! over the same pools' sources ([`TopologySources`]); otherwise, and when
//! the base refuses an update, the base is built afresh.
//!
//! [`Setup::carried_topology_base`]: super::super::setup::Setup::carried_topology_base

use k8s_openapi::api::core::v1::Taint;

use crate::provisioning::topology::{DomainSource, TopologyBase};
use crate::scheduling::{Requirements, WellKnownLabels};

/// What a topology base reads of the pools: each pool's requirements,
/// instance types (by address: a plan's copies of a cluster share them) and
/// taints, and the well-known labels. A base is carried to a later copy of
/// its cluster only if these are the same.
#[derive(Debug, PartialEq)]
pub(crate) struct TopologySources {
    pools: Vec<(Requirements, usize, usize, Vec<Taint>)>,
    well_known: WellKnownLabels,
}

impl TopologySources {
    /// What a base over `pools` reads, with `well_known` labels.
    pub(crate) fn of(pools: &[DomainSource<'_>], well_known: &WellKnownLabels) -> TopologySources {
        TopologySources {
            pools: pools
                .iter()
                .map(|p| {
                    (
                        p.pool_requirements.clone(),
                        p.instance_types.as_ptr().addr(),
                        p.instance_types.len(),
                        p.taints.to_vec(),
                    )
                })
                .collect(),
            well_known: well_known.clone(),
        }
    }
}

/// A topology base, with what it read of the pools.
#[derive(Debug)]
pub(crate) struct CarriedTopology {
    /// The base.
    pub(crate) base: TopologyBase,
    /// What it read of the pools.
    pub(crate) sources: TopologySources,
}

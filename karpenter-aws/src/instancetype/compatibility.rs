//! Whether an instance type can run a NodeClass's nodes, as upstream's
//! compatibility checks decide it (`pkg/providers/instancetype/compatibility/`).
//! A type that cannot keeps existing, but every offering of it is
//! unavailable, as upstream's offering resolvers mark them.
//!
//! Checked, from the catalog: the AMI family (AL2023 does not boot `a1.*`),
//! the `networkInterfaces` a type can host (network card and device index
//! within its cards, `efa-only` interfaces within its EFA count) and
//! `connectionTracking` (Nitro only). Not checked, for want of the data:
//! ENA support and nested virtualization (the catalog has neither, and
//! every type is taken to have them), and placement group strategies (the
//! catalog does not say which a type supports, and the class's group is
//! looked up only at launch). Windows families drop arm64 types
//! elsewhere: those get no `kubernetes.io/os` value (see `labels`), as
//! upstream's, so no pod can select them.

use crate::catalog::{Catalog, TypeRecord};
use crate::nodeclass::{AmiFamily, EC2NodeClass, NetworkInterface};

/// The interface type that carries EFA traffic only.
const EFA_ONLY: &str = "efa-only";
/// The only hypervisor connection tracking settings work on.
const NITRO: &str = "nitro";
/// AL2023 does not support the first Graviton generation.
const AL2023_UNSUPPORTED_PREFIX: &str = "a1.";

/// What the checks need to know of an instance type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TypeFacts<'a> {
    /// The type's name, e.g. `a1.large`.
    pub(crate) name: &'a str,
    /// Its hypervisor (`nitro`, `xen`; empty on bare metal).
    pub(crate) hypervisor: Option<&'a str>,
    /// Its network cards as (index, most ENIs), `None` when not known.
    pub(crate) network_cards: Option<&'a [(u32, u32)]>,
    /// The most EFA interfaces it takes (0: no EFA).
    pub(crate) max_efa_interfaces: u32,
}

impl<'a> TypeFacts<'a> {
    /// The facts the catalog holds of `record`.
    pub(crate) fn of(catalog: &'a Catalog, record: &'a TypeRecord) -> Self {
        TypeFacts {
            name: record.name,
            hypervisor: record.label("instance-hypervisor"),
            network_cards: catalog
                .vpc_limits(record.name)
                .map(|l| l.network_cards.as_slice()),
            max_efa_interfaces: record.efa,
        }
    }
}

/// What a NodeClass asks of every type it runs on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Compatibility<'a> {
    family: AmiFamily,
    network_interfaces: Option<&'a [NetworkInterface]>,
    connection_tracking: bool,
}

impl<'a> Compatibility<'a> {
    /// What `nodeclass` asks (a NodeClass naming no family counts as
    /// Custom, as for its resources).
    pub(crate) fn of(nodeclass: &'a EC2NodeClass) -> Self {
        let spec = &nodeclass.spec;
        Compatibility {
            family: nodeclass.ami_family().unwrap_or(AmiFamily::Custom),
            network_interfaces: spec.network_interfaces.as_deref(),
            connection_tracking: spec.connection_tracking.is_some(),
        }
    }

    /// Whether a type with `facts` can run the NodeClass's nodes.
    pub(crate) fn allows(&self, facts: &TypeFacts<'_>) -> bool {
        self.family_allows(facts) && self.interfaces_allowed(facts) && self.tracking_allows(facts)
    }

    fn family_allows(&self, facts: &TypeFacts<'_>) -> bool {
        !(self.family == AmiFamily::AL2023 && facts.name.starts_with(AL2023_UNSUPPORTED_PREFIX))
    }

    /// Every interface on a card the type has, at a device index below the
    /// card's ENI limit, and no more `efa-only` interfaces than it takes
    /// EFA interfaces. A type whose cards are not known cannot be shown to
    /// host them, and upstream refuses a type without network information.
    fn interfaces_allowed(&self, facts: &TypeFacts<'_>) -> bool {
        let Some(interfaces) = self.network_interfaces else {
            return true;
        };
        let Some(cards) = facts.network_cards.filter(|c| !c.is_empty()) else {
            return false;
        };
        let hosted = interfaces.iter().all(|interface| {
            cards.iter().any(|&(index, most)| {
                i64::from(index) == interface.network_card_index
                    && interface.device_index >= 0
                    && interface.device_index < i64::from(most)
            })
        });
        let efa_only = interfaces
            .iter()
            .filter(|i| i.interface_type == EFA_ONLY)
            .count();
        hosted && efa_only <= usize::try_from(facts.max_efa_interfaces).unwrap_or(usize::MAX)
    }

    fn tracking_allows(&self, facts: &TypeFacts<'_>) -> bool {
        !self.connection_tracking || facts.hypervisor == Some(NITRO)
    }
}

#[cfg(test)]
mod tests;

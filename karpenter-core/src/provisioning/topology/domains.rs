//! The topology domains NodePools can create, after upstream's
//! `buildDomainGroups` and `topologydomaingroup.go`.
//!
//! For a key, a NodePool offers the values its requirements allow together
//! with each of its instance types' (the type's zones cannot widen the pool's),
//! plus the values it lists itself with `In`. Each domain remembers the taints
//! of the pools offering it, so a spread constraint with
//! `nodeTaintsPolicy: Honor` only sees the domains of pools its pod tolerates.
//!
//! Domains are computed per key on first use and cached: a scheduling run
//! only ever asks for the handful of keys its pods spread or (anti-)affine on.
//! The cache is a [`GrowOnly`] memo, as the universe is shared by the
//! simulations of a disruption pass, which may run on several threads.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Taint, Toleration};

use super::inputs::DomainSource;
use crate::memo::GrowOnly;
use crate::scheduling::{Requirement, Requirements, tolerates_all};

/// Which pools offer a domain.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Offered {
    /// Some pool without taints: every pod may use the domain.
    Untainted,
    /// Only tainted pools, by index; a pod may use the domain if it tolerates
    /// all taints of one of them.
    Tainted(Vec<usize>),
}

/// What one NodePool contributes to the universe.
#[derive(Clone, Debug)]
struct Pool {
    requirements: Requirements,
    instance_types: Box<[Requirements]>,
    taints: Box<[Taint]>,
}

/// A key's domains, each with the pools that offer it, sorted.
type KeyDomains = BTreeMap<Arc<str>, Offered>;

/// The domains, per key, that the NodePools can create.
#[derive(Debug, Default)]
pub(super) struct DomainUniverse {
    pools: Vec<Pool>,
    /// Domains of each key asked for so far, sorted.
    by_key: GrowOnly<(Arc<str>, KeyDomains)>,
}

impl DomainUniverse {
    /// Keeps what the pools' domains are computed from.
    pub(super) fn new(sources: &[DomainSource<'_>]) -> DomainUniverse {
        let pools = sources
            .iter()
            .map(|source| Pool {
                requirements: source.pool_requirements.clone(),
                instance_types: source
                    .instance_types
                    .iter()
                    .map(|it| it.requirements.clone())
                    .collect(),
                taints: source.taints.into(),
            })
            .collect();
        DomainUniverse {
            pools,
            by_key: GrowOnly::new(),
        }
    }

    /// The domains of `key`, in ascending order. With `tolerations`, only
    /// those offered by a pool whose taints they all tolerate; without, all.
    pub(super) fn domains(
        &self,
        key: &Arc<str>,
        tolerations: Option<&[Toleration]>,
    ) -> Vec<Arc<str>> {
        let (_, domains) = self
            .by_key
            .find_or_add(|(k, _)| k == key, || (Arc::clone(key), self.compute(key)));
        let Some(tolerations) = tolerations else {
            return domains.keys().cloned().collect();
        };
        // Whether each pool's taints are tolerated, worked out once.
        let mut tolerated: Vec<Option<bool>> = vec![None; self.pools.len()];
        let pools = &self.pools;
        let mut pool_tolerated = |index: usize| {
            *tolerated[index]
                .get_or_insert_with(|| tolerates_all(&pools[index].taints, tolerations).is_ok())
        };
        domains
            .iter()
            .filter(|(_, offered)| match offered {
                Offered::Untainted => true,
                Offered::Tainted(offering) => offering.iter().any(|&p| pool_tolerated(p)),
            })
            .map(|(domain, _)| Arc::clone(domain))
            .collect()
    }

    fn compute(&self, key: &str) -> KeyDomains {
        let mut domains = BTreeMap::new();
        for (index, pool) in self.pools.iter().enumerate() {
            let mut offer =
                |value: &str| insert(&mut domains, value, index, pool.taints.is_empty());
            let own = pool.requirements.get_defined(key);
            for instance_type in &pool.instance_types {
                for_each_common_value(own, instance_type.get_defined(key), &mut offer);
            }
            if let Some(own) = own.filter(|r| !r.is_complement()) {
                own.values().for_each(&mut offer);
            }
        }
        domains
    }
}

/// Calls `f` with each value both requirements allow, when that set is a
/// listed one (an `In`); a complement names no domain. `None` allows
/// everything.
fn for_each_common_value(
    a: Option<&Requirement>,
    b: Option<&Requirement>,
    mut f: impl FnMut(&str),
) {
    let (listed, other) = match (a, b) {
        (Some(a), b) if !a.is_complement() => (a, b),
        (a, Some(b)) if !b.is_complement() => (b, a),
        _ => return,
    };
    listed
        .values()
        .filter(|value| other.is_none_or(|other| other.has(value)))
        .for_each(&mut f);
}

/// Records that pool `pool` offers `domain`, after upstream's
/// `TopologyDomainGroup.Insert`: an untainted pool makes the domain open to
/// every pod, and then no taint sets need tracking.
fn insert(domains: &mut BTreeMap<Arc<str>, Offered>, domain: &str, pool: usize, untainted: bool) {
    match domains.get_mut(domain) {
        None => {
            let offered = if untainted {
                Offered::Untainted
            } else {
                Offered::Tainted(vec![pool])
            };
            domains.insert(Arc::from(domain), offered);
        }
        Some(offered) => {
            if untainted {
                *offered = Offered::Untainted;
            } else if let Offered::Tainted(pools) = offered
                && !pools.contains(&pool)
            {
                pools.push(pool);
            }
        }
    }
}

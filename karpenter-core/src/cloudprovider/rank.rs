//! The order a provider launches offerings in, shared by the plan (which names
//! the offering a claim launches as) and the provider's own `create`, so that
//! the two agree on equal prices.

use std::cmp::Ordering;
use std::fmt;

use super::{InstanceType, Offering};

/// Orders two (instance type, offering) pairs: the lesser launches first.
pub type RankFn = fn((&InstanceType, &Offering), (&InstanceType, &Offering)) -> Ordering;

/// How a provider ranks the offerings a claim allows; its first is what it
/// launches. A plan built from a snapshot names the same offering when the
/// snapshot carries the provider's rank
/// ([`Snapshot::launch_rank`](crate::snapshot::Snapshot::launch_rank), which the
/// driver fills from [`CloudProvider::launch_rank`](super::CloudProvider::launch_rank)).
#[derive(Clone, Copy)]
pub struct LaunchRank {
    name: &'static str,
    rank: RankFn,
}

impl LaunchRank {
    /// A rank named `name` (for debugging and equality) ordering by `rank`.
    pub const fn new(name: &'static str, rank: RankFn) -> LaunchRank {
        LaunchRank { name, rank }
    }

    /// The engine's default: the lowest price, then the type's name, the zone and
    /// the capacity type, so that the choice is the same every run.
    pub const fn cheapest() -> LaunchRank {
        LaunchRank::new("cheapest", cheapest)
    }

    /// Orders `a` before `b` when `a` launches first.
    pub fn compare(
        &self,
        a: (&InstanceType, &Offering),
        b: (&InstanceType, &Offering),
    ) -> Ordering {
        (self.rank)(a, b)
    }

    /// The rank's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

fn cheapest(a: (&InstanceType, &Offering), b: (&InstanceType, &Offering)) -> Ordering {
    a.1.price
        .total_cmp(&b.1.price)
        .then_with(|| a.0.name.cmp(&b.0.name))
        .then_with(|| a.1.zone.cmp(&b.1.zone))
        .then_with(|| a.1.capacity_type.cmp(&b.1.capacity_type))
        .then_with(|| a.1.reservation_id().cmp(&b.1.reservation_id()))
}

impl Default for LaunchRank {
    fn default() -> Self {
        LaunchRank::cheapest()
    }
}

impl fmt::Debug for LaunchRank {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LaunchRank({})", self.name)
    }
}

/// Two ranks are the same when they have the same name.
impl PartialEq for LaunchRank {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::ResourceList;

    #[test]
    fn the_cheapest_rank_breaks_price_ties_by_type_zone_and_capacity_type() {
        let t = |name: &str| {
            InstanceType::new(
                name,
                [("kubernetes.io/os", "linux")],
                vec![],
                ResourceList::new(),
                ResourceList::new(),
            )
        };
        let (a, b) = (t("a"), t("b"));
        let cheap = Offering::new("zone-b", "spot", 0.1);
        let dear = Offering::new("zone-a", "on-demand", 0.2);
        let rank = LaunchRank::default();
        assert_eq!(rank.compare((&b, &cheap), (&a, &dear)), Ordering::Less);
        assert_eq!(rank.compare((&a, &cheap), (&b, &cheap)), Ordering::Less);
        let zone_a = Offering::new("zone-a", "spot", 0.1);
        assert_eq!(rank.compare((&a, &zone_a), (&a, &cheap)), Ordering::Less);
        assert_eq!(format!("{rank:?}"), "LaunchRank(cheapest)");
    }
}

//! Narrowing a claim's instance types as its requests grow, without asking every
//! type again.
//!
//! A claim's types all hold what its pods request so far (that is how they were
//! chosen). One more pod raises the requests, and a type drops out exactly when,
//! on some resource, its allocatable lies between what the daemons and pods
//! needed before and what they need now. With the types of each daemon group
//! sorted by their allocatable of each of the four fixed resources, those are a
//! few short runs found by binary search: the work follows the types that drop
//! out, not the types that stay.

use super::type_cache::TypeSet;
use crate::resources::ResourceList;

/// The types of one daemon group, sorted by each fixed resource.
#[derive(Debug, Default)]
struct GroupIndex {
    /// The group's daemon overhead as four amounts.
    overhead: [i64; 4],
    /// For each of cpu, memory, pods and ephemeral storage: `(allocatable,
    /// type)` ascending.
    by_resource: [Vec<(i64, usize)>; 4],
}

/// A pool's types sorted for [`FitIndex::dropped`].
#[derive(Debug, Default)]
pub(crate) struct FitIndex {
    /// Per daemon group; `None` for a group whose overhead has other resources.
    groups: Vec<Option<GroupIndex>>,
    /// The types not indexed (a negative amount of another resource in their
    /// allocatable, other resources in their group's overhead, or no group):
    /// always asked one by one.
    pub(crate) irregular: Vec<usize>,
}

impl FitIndex {
    /// Indexes the types of `options` by group (`group_of`), whose
    /// `overheads` are given, and their `fixed` allocatable (see
    /// `Template::fixed_allocatable`).
    pub(crate) fn new(
        options: &[usize],
        group_of: &[usize],
        overheads: &[&ResourceList],
        fixed: &[Option<[i64; 4]>],
    ) -> FitIndex {
        let mut groups: Vec<Option<GroupIndex>> = overheads
            .iter()
            .map(|o| {
                (!o.has_extended()).then(|| GroupIndex {
                    overhead: o.fixed_amounts(),
                    by_resource: Default::default(),
                })
            })
            .collect();
        let mut irregular = Vec::new();
        for &t in options {
            let group = groups.get_mut(group_of[t]).and_then(Option::as_mut);
            match (group, fixed[t]) {
                (Some(group), Some(allocatable)) => {
                    for (list, amount) in group.by_resource.iter_mut().zip(allocatable) {
                        list.push((amount, t));
                    }
                }
                _ => irregular.push(t),
            }
        }
        for group in groups.iter_mut().flatten() {
            group.by_resource.iter_mut().for_each(|l| l.sort_unstable());
        }
        FitIndex { groups, irregular }
    }

    /// The indexed types that held `before` (four amounts of requests, with
    /// their group's overhead; `None`: nothing is known to be held) but do not
    /// hold `after`, added to `dropped`. Types that did not hold `before` may be
    /// added too; the caller only asks about types that did.
    pub(crate) fn dropped(
        &self,
        before: Option<&[i64; 4]>,
        after: &[i64; 4],
        dropped: &mut TypeSet,
    ) {
        for group in self.groups.iter().flatten() {
            // A type holds what it must of resource r when its allocatable is
            // neither negative nor below the requests with the overhead (their
            // sum saturating, as on lists).
            let threshold = |requests: &[i64; 4], r: usize| {
                requests[r].saturating_add(group.overhead[r]).max(0)
            };
            for (r, list) in group.by_resource.iter().enumerate() {
                let low = before.map_or(i64::MIN, |before| threshold(before, r));
                let high = threshold(after, r);
                if high <= low {
                    continue;
                }
                let from = list.partition_point(|&(amount, _)| amount < low);
                let to = list.partition_point(|&(amount, _)| amount < high);
                list[from..to].iter().for_each(|&(_, t)| dropped.insert(t));
            }
        }
    }
}

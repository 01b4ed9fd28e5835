//! An independent check of a [`ProvisioningPlan`] against the [`Snapshot`] it was
//! made from: [`validate`] and the [`Violation`]s it reports.
//!
//! The validator re-derives everything from the snapshot's public data (the pods,
//! the NodePools, the instance-type catalog, the nodes, the DaemonSets) and never
//! calls into the scheduler, so it can judge any plan: the scheduler's, a
//! hand-written one, or one from another packing strategy.

mod accounting;
mod attach;
mod buffers;
mod claim_launch;
mod claims;
mod daemons;
mod describe;
mod existing;
mod index;
mod limits;
mod min_values;
mod pods;
mod pools;
mod ports;
mod reservations;
mod statics;
mod topology;
mod violation;

#[cfg(test)]
mod tests;

use super::plan::ProvisioningPlan;
use crate::snapshot::Snapshot;
use index::Checker;
pub use violation::{Rule, Subject, Violation};

/// How far `totalPricePerHour` may be from the sum of the launch prices.
const TOTAL_PRICE_TOLERANCE: f64 = 1e-6;

/// Checks `plan` against `snapshot` and returns every violation found, in a
/// deterministic order; empty when the plan keeps every rule below.
///
/// # Rules
///
/// Accounting
/// - every pending pod appears exactly once: in one claim, on one existing node,
///   or in `unschedulable` (with a reason); nothing else appears. A pod is pending
///   when it has no `nodeName` and no `status.nominatedNodeName` (a nominated pod
///   is preempting, about to schedule), the kube-scheduler marked it unschedulable
///   (a `PodScheduled` condition with reason `Unschedulable`; a pod with no status,
///   or an empty one, counts as marked), it is not `Succeeded`/`Failed` nor being
///   deleted, and it is owned neither by a DaemonSet (any owner reference of that
///   kind) nor by a Node (`v1`, a static pod's mirror);
/// - the pods of a node on its way out (its NodeClaim, or without one its Node,
///   being deleted; or tainted `karpenter.sh/disrupted`) that are reschedulable
///   (not finished, not being deleted unless a StatefulSet owns them, owned
///   neither by an `apps/v1` DaemonSet nor by a Node) appear too, exactly once;
///   one with a `karpenter.sh/do-not-disrupt` annotation, or with a
///   PodDisruptionBudget in its namespace, may also be left out (the plan may
///   judge it held in place: the validator reads neither the annotation's
///   duration nor the budgets). Such a pod, when the plan lists it, counts for
///   topology where the plan puts it (nowhere when unschedulable), not on the
///   node it leaves, as upstream leaves the pods it schedules out of its counts;
/// - a pod with Dynamic Resource Allocation claims (`resourceClaims`, or a
///   container's or init container's `resources.claims`) is not placed: it is
///   unschedulable, as upstream's default `ignore-dra-requests`.
///
/// New claims
/// - the claim's NodePool exists and may launch (not static, not being deleted,
///   `Ready` not false); every listed instance type is in the pool's catalog, once;
///   the list is not empty, holds at most [`MAX_INSTANCE_TYPES`](crate::provisioning::MAX_INSTANCE_TYPES) and the launch type;
/// - the launch is an offering of the catalog (same zone and capacity type), is
///   available, has the catalog's price, and satisfies the claim's requirements;
/// - the launch is the cheapest available offering, over the listed types, that the
///   claim's requirements allow; the list is sorted by each type's cheapest such
///   offering (ties by name), and every listed type has one and meets the claim's
///   requirements;
/// - when the pool has no limits, no pod of the claim binds a host port, and neither
///   the pool nor the pods constrain the instance type (the written requirements
///   replace that constraint with the list itself), the list is complete: no type
///   of the catalog that meets the claim's requirements, has such an offering and
///   holds the claim's pods with its daemons is left out (the claim's types only
///   narrow as pods join, so a type that fits all of them at the end fitted at
///   every step);
/// - no over-commitment: the launch type's allocatable (capacity − overhead) holds
///   the pods' requests plus those of the daemons that would run on it, and so does
///   every listed type (with its own daemons). A daemon runs on a type of a pool when
///   it tolerates the pool's taints (`PreferNoSchedule` ignored) and, for one of its
///   required node-affinity terms tried in order (or none), its `nodeSelector` with
///   the term's `matchExpressions` is compatible with the pool's requirements and
///   intersects the type's; the daemon's spec is that of its newest live pod when
///   one exists, else the template's, with the template's required node affinity
///   (the DaemonSet controller rewrites live pods' affinity to `matchFields`, which
///   upstream does not read); a daemon whose spec has Dynamic Resource Allocation
///   claims is left out (upstream's default `ignore-dra-requests`);
/// - the launched node (the type's labels, the launch's zone and capacity type, the
///   template labels, the pool's label, and for any other key of the claim's
///   requirements a value they allow) meets the claim's requirements and the
///   NodePool's;
/// - each pod on the claim tolerates the pool's `NoSchedule`/`NoExecute` taints
///   (`PreferNoSchedule` is a preference, and startup taints need no toleration), and
///   its strict node requirements are met (see below) by the claim's requirements
///   (where a well-known label left undefined is the instance types' to set) and by
///   the launched node's labels;
/// - the listed types have, for each requirement with `minValues`, at least that
///   many distinct values of its key; every `minValues` of the NodePool is written
///   on the claim as the pool writes it, or lower on a claim that says
///   `minValuesRelaxed` (upstream's `--min-values-policy BestEffort`), which lowers
///   at least one.
///
/// Existing nodes (and in-flight claims)
/// - the node exists, is not being deleted and is not tainted
///   `karpenter.sh/disrupted`;
/// - a Node with a CSINode attaches, for each CSI driver the CSINode limits,
///   no more claims than its count once the plan's pods are added (a claim
///   counting once per node; upstream's reading: every limited driver is
///   checked, so a node over a limit already takes no pod);
/// - allocatable − the requests of its bound pods that have not finished − those of
///   the pods the plan adds stays ≥ 0 for every resource;
/// - each added pod tolerates its `NoSchedule`/`NoExecute` taints (on a managed node
///   that is not initialized yet, not its startup taints nor the known ephemeral
///   ones, which will be removed) and its labels meet the pod's strict node
///   requirements.
///
/// Strict node requirements: a pod's `nodeSelector` and at least **one** of its
/// required node-affinity terms (its `matchExpressions`), as Kubernetes reads them.
/// The scheduler starts from the first term and relaxation drops earlier terms, so
/// any one term may be the one in force; preferred terms are preferences and never
/// required. A pod without required terms needs its `nodeSelector` only.
///
/// Whole plan
/// - no two pods on one node (a claim, or an existing node with its running pods)
///   bind conflicting host ports, nor a pod and a daemon on a claim's launch type;
/// - required pod anti-affinity on `kubernetes.io/hostname` (one claim or node) and
///   on `topology.kubernetes.io/zone` (the launch's zone, the node's zone label): no
///   pod the plan places shares the domain with a pod that either one's term selects
///   (running pods count, unless finished or terminating: upstream's
///   `IgnoredForTopology`). Required terms are never relaxed. A term looks in the
///   namespaces it lists and those whose labels its `namespaceSelector` selects
///   (the snapshot's Namespaces; one it lacks has only its
///   `kubernetes.io/metadata.name` label), else in the pod's own;
/// - zonal `DoNotSchedule` topology spread keeps within `maxSkew` (see "Zonal
///   spread" below for the exact rule and when it applies);
/// - NodePool limits: for each limited resource a pool's new claims add, the
///   capacity of its existing nodes plus the launch types' capacity (and one node
///   per claim for `nodes`) stays within the limit;
/// - capacity reservations: no reservation is held by more new claims (of
///   pools that are not static) than the least capacity its offerings say,
///   a claim holding every reservation whose id its requirements allow on
///   the reservation's label and the one its launch takes; a claim launching
///   into a reservation is pinned to it (capacity type `reserved` alone, its
///   id allowed on the label);
/// - CapacityBuffers (when the plan counts them): every buffer of the
///   snapshot has an entry; a resolved buffer's chunks are placed exactly
///   once (existing nodes, new claims, unschedulable), the claims hold as
///   many as it says, and only the snapshot's buffers are named. A claim's
///   and an existing node's chunks count in their over-commitment checks
///   above, each with the requests of its buffer's virtual pod;
/// - `totalPricePerHour` is the sum of the launch prices, within 1e-6.
///
/// Not checked: required pod affinity, anti-affinity or spread on other keys,
/// preferred terms and `ScheduleAnyway` constraints (relaxable), volume topology,
/// whether a lowered `minValues` was as high as the types allowed, and whether a pod listed as unschedulable could have been placed.
///
/// # Zonal spread
///
/// Kubernetes admits a pod into domain `d` of a constraint when, at that moment,
/// `count(d) + 1 − min ≤ maxSkew`, the minimum taken over the domains eligible for
/// the pod. Counts only grow, so for the **last** selected pod placed into `d`:
/// `final(d) ≤ maxSkew + min_then ≤ maxSkew + min_final`. The plan does not say
/// which pod came last, so each zone takes the most lenient bound among the new pods
/// in it: `final(d) ≤ maxSkew + max over new pods q in d of (min over V(q) of
/// final)`.
///
/// That holds when every counted pod that arrived in `d` was constrained the same
/// way, so a constraint is checked only when:
/// - it is on `topology.kubernetes.io/zone`, `DoNotSchedule`, with a label
///   selector, no `matchLabelKeys`, and the default `nodeAffinityPolicy` (Honor)
///   and `nodeTaintsPolicy` (Ignore);
/// - every pending pod the plan places that the selector picks (in the pod's
///   namespace) carries the identical constraint and the identical `nodeSelector`
///   and required node affinity: they make one upstream `TopologyGroup` with one
///   node filter;
/// - those pods have at most one required node-affinity term: relaxation never
///   removes a `DoNotSchedule` constraint, but dropping a term would change the
///   zones a pod is eligible for.
///
/// Counts: the group's placed pods (a claim's launch zone, a node's zone label) and
/// the running pods (neither finished nor terminating) the selector picks on nodes
/// whose labels meet the group's node requirements. `V(q)` is a *subset* of the
/// zones upstream takes the minimum over: the zones where a usable NodePool whose
/// taints `q` tolerates and whose requirements are compatible with `q`'s has an
/// instance type that meets both, holds `q` alone, and has an available offering
/// there that both allow. A smaller set can only raise the minimum, so the check
/// never blames a placement upstream would make; `minDomains` (which can only
/// lower upstream's minimum to 0) is ignored for the same reason.
pub fn validate(snapshot: &Snapshot, plan: &ProvisioningPlan) -> Vec<Violation> {
    let checker = Checker::new(snapshot);
    let mut out = Vec::new();
    let placed = checker.check_accounting(plan, &mut out);
    for (index, claim) in plan.node_claims.iter().enumerate() {
        // A static pool's claims are its template alone: checked apart.
        if !statics::is_static(checker.pool(&claim.node_pool)) {
            checker.check_claim(index, claim, &mut out);
        }
    }
    checker.check_static(plan, &mut out);
    checker.check_existing(plan, &mut out);
    checker.check_attach_limits(plan, &mut out);
    checker.check_host_ports(plan, &placed, &mut out);
    let moved = checker.moved(plan);
    checker.check_anti_affinity(&placed, &moved, &mut out);
    checker.check_spread(&placed, &moved, &mut out);
    checker.check_limits(plan, &mut out);
    checker.check_reservations(plan, &mut out);
    checker.check_buffers(plan, &mut out);
    let sum: f64 = plan
        .node_claims
        .iter()
        .filter_map(|c| c.launch.as_ref())
        .map(|l| l.price)
        .sum();
    if (sum - plan.total_price_per_hour).abs() > TOTAL_PRICE_TOLERANCE {
        out.push(Violation {
            rule: Rule::TotalPrice,
            subject: Subject::Plan,
            detail: format!(
                "totalPricePerHour is {} but the launches sum to {sum}",
                plan.total_price_per_hour
            ),
        });
    }
    out
}

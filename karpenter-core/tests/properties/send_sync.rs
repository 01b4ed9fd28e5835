//! Every public type of the planners is `Send` and `Sync`, checked when this
//! test builds: snapshots, options, the planning machinery (a simulator,
//! budgets' allowances, the driver) and plans may be moved to
//! another thread or shared between threads, so an embedder can plan off its
//! async executor and weigh candidates in parallel. A type that loses either
//! (an `Rc` or `RefCell` creeping into a cache) fails the build here, not in
//! an embedder's.

use karpenter_core::api::{
    Budget, Condition, Disruption, GoDuration, NillableDuration, NodeClaim, NodePool, Quantities,
};
use karpenter_core::cloudprovider::{
    CloudProvider, CloudProviderError, InstanceType, LaunchRank, Offering, OfferingFilter,
    OfferingKey, RepairPolicy, UnavailableOfferings,
};
use karpenter_core::cluster::{Cluster, ClusterError};
use karpenter_core::disruption::{
    Allowance, Blocked, Command, CommandReason, DisruptionOptions, DisruptionPlan, Simulation,
    Simulator, Stranded, StrandedReason,
};
use karpenter_core::driver::{Driver, DriverOptions, Event, Report};
use karpenter_core::planning::{MinValuesPolicy, Packing, PlanningOptions};
use karpenter_core::provisioning::{
    ExistingPlacement, Launch, NameList, PlannedClaim, ProvisioningOptions, ProvisioningPlan,
    RequirementOutput, Rule, Subject, Unschedulable, Violation,
};
use karpenter_core::resources::{QuantityError, ResourceList};
use karpenter_core::scheduling::{Requirement, RequirementError, Requirements, WellKnownLabels};
use karpenter_core::snapshot::{ClusterNode, Snapshot};

/// Fails to compile unless every type named is `Send` and `Sync`.
macro_rules! send_and_sync {
    ($($type:ty),* $(,)?) => {
        const _: () = {
            const fn send_and_sync<T: Send + Sync + ?Sized>() {}
            $(send_and_sync::<$type>();)*
        };
    };
}

// What planning reads.
send_and_sync![
    Snapshot,
    ClusterNode,
    NodePool,
    NodeClaim,
    Budget,
    Disruption,
    Condition,
    GoDuration,
    NillableDuration,
    Quantities,
    InstanceType,
    Offering,
    OfferingFilter<'static>,
    OfferingKey,
    LaunchRank,
    RepairPolicy,
    UnavailableOfferings,
    Requirement,
    Requirements,
    WellKnownLabels,
    ResourceList,
];

// Options.
send_and_sync![
    PlanningOptions,
    Packing,
    MinValuesPolicy,
    ProvisioningOptions,
    DisruptionOptions,
    DriverOptions,
];

// The planning machinery (what disruption keeps to itself is checked in
// the crate's own tests).
send_and_sync![
    Simulator<'static>,
    Allowance,
    Driver,
    dyn CloudProvider,
    dyn Cluster,
];

// Plans and what comes with them.
send_and_sync![
    ProvisioningPlan,
    PlannedClaim,
    RequirementOutput,
    Launch,
    NameList,
    ExistingPlacement,
    Unschedulable,
    Violation,
    Rule,
    Subject,
    Simulation,
    Stranded,
    StrandedReason,
    Command,
    CommandReason,
    DisruptionPlan,
    Blocked,
    Report,
    Event,
];

// Errors.
send_and_sync![
    karpenter_core::Error,
    CloudProviderError,
    ClusterError,
    QuantityError,
    RequirementError,
];

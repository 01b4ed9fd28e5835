//! Every public type of the planners is `Send` and `Sync`, checked when this
//! test builds: snapshots, options, the planning machinery (a simulator, a
//! disruption pass, candidates, budgets' allowances) and plans may be moved to
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
use karpenter_core::disruption::DisruptionOptions;
use karpenter_core::disruption::allowances::Allowances;
use karpenter_core::disruption::balanced::{Balanced, PoolTotals};
use karpenter_core::disruption::budgets::Allowance;
use karpenter_core::disruption::candidates::{Candidate, Candidates};
use karpenter_core::disruption::drift::DriftReason;
use karpenter_core::disruption::methods::drift::Drift;
use karpenter_core::disruption::methods::emptiness::Emptiness;
use karpenter_core::disruption::methods::multi_node::MultiNode;
use karpenter_core::disruption::methods::single_node::SingleNode;
use karpenter_core::disruption::methods::{Method, Pass};
use karpenter_core::disruption::plan::{Blocked, Command, CommandReason, DisruptionPlan};
use karpenter_core::disruption::pods::{Pdbs, PodBlock};
use karpenter_core::disruption::simulate::{Simulation, Simulator};
use karpenter_core::driver::{Driver, DriverOptions, Event, Report};
use karpenter_core::provisioning::{
    ExistingPlacement, Launch, NameList, Packing, PlannedClaim, ProvisioningOptions,
    ProvisioningPlan, RequirementOutput, Rule, Subject, Unschedulable, Violation,
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
    ProvisioningOptions,
    Packing,
    DisruptionOptions,
    DriverOptions,
];

// The planning machinery.
send_and_sync![
    Simulator<'static>,
    Pass<'static, 'static>,
    Candidate<'static>,
    Candidates<'static>,
    Allowances<'static>,
    Allowance,
    Balanced,
    PoolTotals,
    Pdbs<'static>,
    PodBlock,
    DriftReason,
    dyn Method,
    Emptiness,
    Drift,
    MultiNode,
    SingleNode,
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

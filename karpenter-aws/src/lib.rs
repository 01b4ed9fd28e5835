//! The AWS (EKS) cloud provider for the karpenter engine, after
//! aws/karpenter-provider-aws (main at 1d92708, core v1.14).
//!
//! Being built: the embedded catalog of EC2 instance types (made from public
//! data, sources in `data/SOURCES.md`), instance types as upstream builds
//! them for an `EC2NodeClass`, and the `karpenter.k8s.aws/v1` `EC2NodeClass`
//! itself.
//!
//! The [`Catalog`] holds, offline, the 1,382 instance types of upstream's
//! generated reference page with every `karpenter.k8s.aws/*` label, the VPC
//! and ENI limits, the network bandwidth table and the static on-demand
//! price tables (us-east-1, us-gov-east-1, us-gov-west-1, cn-north-1); it is
//! parsed once, on first use, and a broken data file is a [`CatalogError`]
//! naming the file, line and column.
//!
//! [`instance_types`] turns the catalog into the engine's
//! `InstanceType`s for a region as upstream builds them for an
//! `EC2NodeClass` with `amiFamily: AL2023` and no kubelet settings: every
//! `karpenter.k8s.aws/*` label as a requirement (`DoesNotExist` where the type
//! has none), arch, os and region; capacity less kube-reserved and the
//! eviction thresholds by upstream's formulas (ENI-limited pods, 7.5 % VM
//! memory overhead, a 20 GiB root volume), and the extended resources
//! (`vpc.amazonaws.com/pod-eni`, EFA, GPUs, Neuron). Their allocatable cpu,
//! memory, pods and ephemeral storage equal upstream's published figures for
//! all 1,382 types. [`instance_types_for`] gives them the offerings of an
//! `EC2NodeClass`: on-demand and spot in each zone of its subnets, priced
//! from the static tables (us-east-1's for a region without one), and, with
//! the `ReservedCapacity` gate, its capacity reservations, sized by the
//! NodeClass's settings (AMI family, kubelet, block devices, network
//! interfaces) and the provider's options (reserved ENIs, VM memory
//! overhead). A type the NodeClass cannot run keeps its offerings, all
//! unavailable, as upstream's. [`well_known_labels`] is the engine's
//! well-known label set with every AWS label.
//!
//! The [`EC2NodeClass`] (`karpenter.k8s.aws/v1`) reads and writes back every
//! field of upstream's CRD without loss, and [`EC2NodeClass::validate`]
//! applies the CRD's rules, naming the field of each problem. Its static
//! drift hash ([`EC2NodeClass::static_hash`], a scheme of our own over
//! upstream's hashed fields) and the drift decision
//! ([`nodeclass::drift`]) follow upstream's fields, reasons and order.
//!
//! [`interruption`] reads the interruption queue's EventBridge messages and
//! decides, as a value, what each does to the cluster's NodeClaims, and
//! which instances the instance-status poll finds unhealthy; its
//! [`interruption::poll_queue`] and [`interruption::poll_instance_status`]
//! run one pass of each loop over [`ec2::QueueApi`] and [`ec2::Ec2Api`];
//! [`repair_policies`] are upstream's node repair conditions.
//!
//! [`launch`] holds the launch decisions as pure functions: the launch
//! filters and the 60-type cut, the capacity type, the subnet per zone, the
//! launch templates, the `CreateFleet` request and what EC2's errors mean.
//!
//! [`ec2`] holds the AWS calls the provider makes, behind the traits
//! [`ec2::Ec2Api`] (EC2 and the Pricing API) and [`ec2::QueueApi`] (the
//! interruption queue), shaped after the AWS SDK for Rust, and their
//! deterministic in-memory implementations [`ec2::InMemoryEc2`] and
//! [`ec2::InMemoryQueue`] for tests and simulation.
//!
//! [`AwsCloudProvider`] is the engine's `CloudProvider` over an
//! [`ec2::Ec2Api`]: the instance types of each applied `EC2NodeClass` with
//! EC2's recent refusals marked unavailable, launches glued from
//! [`launch`]'s decisions into one `CreateFleet`, instances read back as
//! claims, drift, and price refreshes.

mod catalog;
pub mod ec2;
mod instancetype;
pub mod interruption;
pub mod launch;
pub mod nodeclass;
mod provider;
mod rank;
mod repair;

pub use catalog::{Catalog, CatalogError, CatalogProblem};
pub use instancetype::labels::well_known_labels;
pub use instancetype::{
    DEFAULT_VM_MEMORY_OVERHEAD_PERCENT, FALLBACK_PRICE_REGION, InstanceTypeError,
    InstanceTypeOptions, Zone, check_region, instance_type, instance_types, instance_types_for,
    labels, on_demand_price, zones,
};
pub use nodeclass::{EC2NodeClass, EC2NodeClassSpec, EC2NodeClassStatus, InvalidNodeClass};
pub use provider::{
    AdoptError, AwsCloudProvider, AwsConfig, PriceRefresh, PriceRefreshError, create_fleet_input,
};
pub use rank::LAUNCH_RANK;
pub use repair::repair_policies;

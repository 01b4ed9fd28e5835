//! The AWS (EKS) cloud provider for the karpenter engine, after
//! aws/karpenter-provider-aws (main at 1d92708, core v1.14): EC2 instance
//! types as upstream builds them for an `EC2NodeClass`, launches as upstream
//! makes them, interruption as upstream reads it.
//!
//! Where to start:
//! - **Planning offline** (what would Karpenter on EKS launch, and at what
//!   price?): [`instance_types_for`] gives the engine's instance types for an
//!   [`EC2NodeClass`] in a region from the embedded [`Catalog`], with
//!   [`well_known_labels`] and [`LAUNCH_RANK`] for the snapshot.
//!   `karpenter-sim --provider aws` does exactly this for manifests.
//! - **Acting on plans**: [`AwsCloudProvider`] is the engine's
//!   `CloudProvider` over any [`ec2::Ec2Api`]: the driver launches, reads
//!   back and deletes instances through it. [`ec2::InMemoryEc2`] is a
//!   deterministic EC2 for tests and simulations; an implementation over the
//!   AWS SDK is the next step.
//!
//! ```
//! use karpenter_aws::ec2::{Image, InMemoryEc2, SecurityGroup, Subnet};
//! use karpenter_aws::{AwsCloudProvider, AwsConfig, EC2NodeClass, InstanceTypeOptions};
//! use karpenter_core::api::NodeClaim;
//! use karpenter_core::cloudprovider::CloudProvider;
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // An EC2 with one subnet, one security group and an AL2023 image.
//! let ec2 = InMemoryEc2::new("us-east-1");
//! ec2.add_subnet(Subnet {
//!     subnet_id: "subnet-a".into(),
//!     availability_zone: "us-east-1a".into(),
//!     available_ip_address_count: 100,
//!     ..Subnet::default()
//! });
//! ec2.add_security_group(SecurityGroup { group_id: "sg-1".into(), ..SecurityGroup::default() });
//! ec2.add_image(Image {
//!     image_id: "ami-1".into(),
//!     architecture: "x86_64".into(),
//!     state: "available".into(),
//!     ..Image::default()
//! });
//! let config = AwsConfig { region: "us-east-1".into(), cluster_name: "demo".into(), join: None };
//! let provider = AwsCloudProvider::new(ec2.clone(), config, InstanceTypeOptions::default())?;
//!
//! // The EC2NodeClass as its status controller leaves it: terms resolved.
//! let class: EC2NodeClass = serde_json::from_value(json!({
//!     "metadata": {"name": "default"},
//!     "spec": {
//!         "role": "KarpenterNodeRole-demo",
//!         "amiSelectorTerms": [{"alias": "al2023@latest"}],
//!         "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
//!         "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}],
//!     },
//!     "status": {
//!         "subnets": [{"id": "subnet-a", "zone": "us-east-1a", "zoneID": "use1-az1"}],
//!         "securityGroups": [{"id": "sg-1"}],
//!         "amis": [{"id": "ami-1", "requirements": [
//!             {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}],
//!     },
//! }))?;
//! provider.apply_node_class(class);
//!
//! // A claim the engine planned: an m5.large or c5.large, on demand.
//! let claim: NodeClaim = serde_json::from_value(json!({
//!     "metadata": {"name": "default-abc12", "labels": {"karpenter.sh/nodepool": "default"}},
//!     "spec": {
//!         "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
//!         "requirements": [
//!             {"key": "node.kubernetes.io/instance-type", "operator": "In",
//!              "values": ["m5.large", "c5.large"]},
//!             {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
//!         ],
//!         "resources": {"requests": {"cpu": "1", "memory": "2Gi"}},
//!     },
//! }))?;
//! let launched = provider.create(&claim).await?;
//! let id = launched.status.as_ref().and_then(|s| s.provider_id.as_deref());
//! assert!(id.is_some_and(|id| id.starts_with("aws:///us-east-1a/i-")));
//! // The cheaper of the two, as upstream's lowest-price fleet launches.
//! let labels = launched.metadata.labels.unwrap_or_default();
//! assert_eq!(labels["node.kubernetes.io/instance-type"], "c5.large");
//! assert_eq!(ec2.instances().len(), 1);
//! # Ok(())
//! # }
//! ```
//!
//! The parts, from the ground up:
//! - [`Catalog`]: offline, the 1,382 instance types of upstream's generated
//!   reference page with every `karpenter.k8s.aws/*` label, the VPC and ENI
//!   limits, the network bandwidth table and the static on-demand price
//!   tables (us-east-1, us-gov-east-1, us-gov-west-1, cn-north-1), made from
//!   public data (sources in `data/SOURCES.md`), parsed once; a broken data
//!   file is a [`CatalogError`] naming the file, line and column.
//! - [`EC2NodeClass`] (`karpenter.k8s.aws/v1`): every field of upstream's CRD
//!   read and written back without loss; [`EC2NodeClass::validate`] applies
//!   the CRD's rules, naming the field of each problem; the static drift hash
//!   ([`EC2NodeClass::static_hash`], a scheme of our own over upstream's
//!   hashed fields) and the drift decision ([`nodeclass::drift`]) follow
//!   upstream's fields, reasons and order. [`nodeclass::resolve`] writes its
//!   status from its selector terms over an [`ec2::Ec2Api`], as upstream's
//!   status controller does; [`nodeclass::reconcile`] adds the SSM reads,
//!   their cache and upstream's requeue periods.
//! - [`instance_types_for`]: each type's labels (`DoesNotExist` where a type
//!   has none), capacity and overhead by upstream's formulas for the class's
//!   AMI family, kubelet, block devices and network interfaces and the
//!   provider's options ([`InstanceTypeOptions`]: spot prices, reserved ENIs,
//!   VM memory overhead, the `ReservedCapacity` gate); offerings in the zones
//!   of its subnets priced from the static tables (us-east-1's for a region
//!   without one), reserved ones from its capacity reservations; a type the
//!   class cannot run keeps its offerings, all unavailable. At AL2023
//!   defaults ([`instance_types`]) the allocatable of all 1,382 types equals
//!   upstream's published figures.
//! - [`ec2`]: the AWS calls the provider makes, behind [`ec2::Ec2Api`] (EC2
//!   and the Pricing API) and [`ec2::QueueApi`] (the interruption queue),
//!   shaped after the AWS SDK for Rust, with [`ec2::InMemoryEc2`] and
//!   [`ec2::InMemoryQueue`].
//! - [`iam`]: the instance profiles a class's `role` gets, behind
//!   [`iam::IamApi`], with [`iam::InMemoryIam`] and upstream's provider
//!   ([`iam::InstanceProfiles`]).
//! - [`launch`]: the launch decisions as pure functions: the launch filters
//!   and the 60-type cut, the capacity type, the subnet per zone, the launch
//!   templates, the `CreateFleet` request and what EC2's errors mean.
//! - [`interruption`]: the interruption queue's EventBridge messages, what
//!   each does to the cluster's NodeClaims, one pass of the queue loop
//!   ([`interruption::poll_queue`]) and of the instance-status poll
//!   ([`interruption::poll_instance_status`]); [`repair_policies`] are
//!   upstream's node repair conditions.
//! - [`userdata`]: the user data a node boots with to join its EKS cluster,
//!   per AMI family as upstream writes it ([`user_data`],
//!   [`user_data_base64`]); AL2023, AL2 and Custom so far.
//! - [`AwsCloudProvider`]: the instance types of each applied class with
//!   EC2's recent refusals marked unavailable, launches glued from
//!   [`launch`]'s decisions into one `CreateFleet`, instances read back as
//!   claims, drift, price refreshes, adoption of running instances.
//! - [`AwsSettings`]: the controller's settings under upstream's names
//!   ([`settings::SETTINGS`]), every missing or malformed one listed at once
//!   ([`SettingsError`]); [`AwsSettings::instance_type_options`] feeds
//!   [`instance_types_for`].

mod catalog;
pub mod ec2;
pub mod iam;
mod instancetype;
pub mod interruption;
pub mod launch;
pub mod nodeclass;
mod provider;
mod rank;
mod repair;
#[cfg(feature = "sdk")]
pub mod sdk;
pub mod settings;
pub mod userdata;

pub use catalog::{Catalog, CatalogError, CatalogProblem};
pub use instancetype::labels::well_known_labels;
pub use instancetype::{
    DEFAULT_VM_MEMORY_OVERHEAD_PERCENT, FALLBACK_PRICE_REGION, InstanceTypeError,
    InstanceTypeOptions, Zone, check_region, instance_type, instance_types, instance_types_for,
    labels, on_demand_price, zones,
};
pub use nodeclass::{EC2NodeClass, EC2NodeClassSpec, EC2NodeClassStatus, InvalidNodeClass};
pub use provider::{
    AdoptError, AwsCloudProvider, AwsConfig, JoinConfig, LAUNCH_TEMPLATE_TTL, PriceRefresh,
    PriceRefreshError, TemplateCleanupError, create_fleet_input,
};
pub use rank::LAUNCH_RANK;
pub use repair::repair_policies;
pub use settings::{AwsSettings, SettingsError};
pub use userdata::{UserDataError, UserDataInput, user_data, user_data_base64};

//! The settings the AWS controller runs with, under upstream's names
//! (`pkg/operator/options/options.go`): the cluster (`CLUSTER_NAME`,
//! `CLUSTER_ENDPOINT`, `CLUSTER_CA_BUNDLE`), how instance types are sized
//! (`VM_MEMORY_OVERHEAD_PERCENT`, `RESERVED_ENIS`), the interruption queue,
//! the refresh intervals, the AWS feature gates and the region.
//!
//! [`AwsSettings::from_lookup`] reads them by name from anything (the
//! controller's flags and environment, a JSON object) and validates them
//! all at once: [`SettingsError`] lists every missing or malformed one, so
//! nothing half-starts. Upstream stops at its first problem and silently
//! takes the default for a malformed number or duration in the environment;
//! listing every problem, malformed values included, is a deliberate
//! departure. No value is ever repeated in an error: each problem names its
//! variable and flag and says what is wrong.

mod parse;
#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use crate::instancetype::{DEFAULT_VM_MEMORY_OVERHEAD_PERCENT, InstanceTypeOptions};

/// One setting: its environment name (upstream's), its flag, the other
/// names read when it is unset, and what it is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The environment variable, as upstream names it (`CLUSTER_NAME`).
    pub variable: &'static str,
    /// The flag, as upstream names it, without dashes (`cluster-name`).
    pub flag: &'static str,
    /// Other variables read, in order, when the first is unset.
    pub aliases: &'static [&'static str],
    /// Whether the controller refuses to start without it.
    pub required: bool,
    /// What it holds, after upstream's flag help.
    pub help: &'static str,
}

macro_rules! setting {
    ($variable:literal, $flag:literal, [$($alias:literal),*], $required:literal, $help:literal) => {
        Setting {
            variable: $variable,
            flag: $flag,
            aliases: &[$($alias),*],
            required: $required,
            help: $help,
        }
    };
}

/// Every setting [`AwsSettings::from_lookup`] reads, in the order a
/// problem list names them: one flag per entry for a command line.
pub const SETTINGS: &[Setting] = &[
    setting!(
        "CLUSTER_NAME",
        "cluster-name",
        [],
        true,
        "The EKS cluster's name, for resource discovery and tags."
    ),
    setting!(
        "CLUSTER_ENDPOINT",
        "cluster-endpoint",
        [],
        false,
        "The API server URL nodes join (https); from DescribeCluster when unset."
    ),
    setting!(
        "CLUSTER_CA_BUNDLE",
        "cluster-ca-bundle",
        [],
        false,
        "The cluster CA nodes trust (base64 PEM); the controller's own when unset."
    ),
    setting!(
        "ISOLATED_VPC",
        "isolated-vpc",
        [],
        false,
        "Assume no AWS endpoint without a VPC endpoint is reachable (no pricing API)."
    ),
    setting!(
        "EKS_CONTROL_PLANE",
        "eks-control-plane",
        [],
        false,
        "The control plane is EKS's: discover cluster details with DescribeCluster."
    ),
    setting!(
        "VM_MEMORY_OVERHEAD_PERCENT",
        "vm-memory-overhead-percent",
        [],
        false,
        "The share of a type's memory the hypervisor keeps (0.075)."
    ),
    setting!(
        "INTERRUPTION_QUEUE",
        "interruption-queue",
        [],
        false,
        "The SQS queue of EC2 interruption events; no interruption handling when unset."
    ),
    setting!(
        "RESERVED_ENIS",
        "reserved-enis",
        [],
        false,
        "ENIs kept back from pods on every node (VPC CNI custom networking) (0)."
    ),
    setting!(
        "DISABLE_DRY_RUN",
        "disable-dry-run",
        [],
        false,
        "Skip the dry-run validation of EC2NodeClasses."
    ),
    setting!(
        "ENABLE_ZONAL_SHIFT",
        "enable-zonal-shift",
        [],
        false,
        "Avoid zones under an ARC zonal shift."
    ),
    setting!(
        "AMI_REFRESH_INTERVAL",
        "ami-refresh-interval",
        [],
        false,
        "How often AMIs are read from EC2, a Go duration of at least 1m (1m)."
    ),
    setting!(
        "SUBNET_REFRESH_INTERVAL",
        "subnet-refresh-interval",
        [],
        false,
        "How often subnets are read from EC2, a Go duration of at least 1m (1m)."
    ),
    setting!(
        "AWS_FEATURE_GATES",
        "aws-feature-gates",
        [],
        false,
        "AWS feature gates, `Name=bool,...`; known: NodeClassCEL (false)."
    ),
    setting!(
        "AWS_REGION",
        "aws-region",
        ["AWS_DEFAULT_REGION"],
        false,
        "The region; the SDK finds it (IMDS) when unset."
    ),
];

/// The shortest refresh interval upstream allows.
pub const MIN_REFRESH_INTERVAL: Duration = Duration::from_secs(60);

/// The AWS feature gates (`AWS_FEATURE_GATES`); unknown names are ignored,
/// as upstream ignores them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AwsFeatureGates {
    /// `NodeClassCEL`: kubelet fields written as expressions (off by
    /// default).
    pub node_class_cel: bool,
}

/// The settings, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct AwsSettings {
    /// `CLUSTER_NAME`.
    pub cluster_name: String,
    /// `CLUSTER_ENDPOINT`, an absolute https URL, when given.
    pub cluster_endpoint: Option<String>,
    /// `CLUSTER_CA_BUNDLE`, base64 as given, when given.
    pub cluster_ca_bundle: Option<String>,
    /// `ISOLATED_VPC` (false).
    pub isolated_vpc: bool,
    /// `EKS_CONTROL_PLANE` (false).
    pub eks_control_plane: bool,
    /// `VM_MEMORY_OVERHEAD_PERCENT` (0.075), finite and 0 or more.
    pub vm_memory_overhead_percent: f64,
    /// `INTERRUPTION_QUEUE`, when given.
    pub interruption_queue: Option<String>,
    /// `RESERVED_ENIS` (0).
    pub reserved_enis: u32,
    /// `DISABLE_DRY_RUN` (false).
    pub disable_dry_run: bool,
    /// `ENABLE_ZONAL_SHIFT` (false).
    pub enable_zonal_shift: bool,
    /// `AMI_REFRESH_INTERVAL` (1m), at least [`MIN_REFRESH_INTERVAL`].
    pub ami_refresh_interval: Duration,
    /// `SUBNET_REFRESH_INTERVAL` (1m), at least [`MIN_REFRESH_INTERVAL`].
    pub subnet_refresh_interval: Duration,
    /// `AWS_FEATURE_GATES`.
    pub feature_gates: AwsFeatureGates,
    /// `AWS_REGION`, else `AWS_DEFAULT_REGION`; `None` leaves it to the SDK.
    pub region: Option<String>,
}

impl Default for AwsSettings {
    /// Upstream's defaults, with no cluster name (which
    /// [`AwsSettings::from_lookup`] requires).
    fn default() -> Self {
        AwsSettings {
            cluster_name: String::new(),
            cluster_endpoint: None,
            cluster_ca_bundle: None,
            isolated_vpc: false,
            eks_control_plane: false,
            vm_memory_overhead_percent: DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
            interruption_queue: None,
            reserved_enis: 0,
            disable_dry_run: false,
            enable_zonal_shift: false,
            ami_refresh_interval: MIN_REFRESH_INTERVAL,
            subnet_refresh_interval: MIN_REFRESH_INTERVAL,
            feature_gates: AwsFeatureGates::default(),
            region: None,
        }
    }
}

/// One setting that is missing or malformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingProblem {
    /// The setting's environment name.
    pub variable: &'static str,
    /// Its flag, without dashes.
    pub flag: &'static str,
    /// What is wrong (never the value).
    pub message: String,
}

impl fmt::Display for SettingProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (--{}) {}", self.variable, self.flag, self.message)
    }
}

/// Every problem [`AwsSettings::from_lookup`] found, in [`SETTINGS`] order.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} AWS setting(s) missing or malformed: {}", problems.len(), list(problems))]
pub struct SettingsError {
    /// The problems, at least one.
    pub problems: Vec<SettingProblem>,
}

fn list(problems: &[SettingProblem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl AwsSettings {
    /// Reads and validates every setting of [`SETTINGS`] through `lookup`
    /// (by environment name; an empty value counts as unset), reporting
    /// every problem at once.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, SettingsError> {
        parse::read(&lookup)
    }

    /// The [`InstanceTypeOptions`] these settings decide (the VM memory
    /// overhead and the reserved ENIs), every other field at its default:
    /// the caller adds spot prices and reservations with `..` as it learns
    /// them.
    pub fn instance_type_options(&self) -> InstanceTypeOptions {
        InstanceTypeOptions {
            vm_memory_overhead_percent: self.vm_memory_overhead_percent,
            reserved_enis: self.reserved_enis,
            ..InstanceTypeOptions::default()
        }
    }
}

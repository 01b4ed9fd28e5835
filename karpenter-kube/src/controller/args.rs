//! The flags of `karpenter-controller`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use karpenter_core::planning::PlanningArgs;

use super::aws_args::AwsArgs;
use super::azure_args::AzureArgs;
use super::logging::LogFormat;

/// Runs Karpenter's provisioning and disruption against a Kubernetes
/// cluster: NodeClaims for pending pods, consolidation, drift, expiry.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "karpenter-controller",
    version,
    after_help = "Environment: KUBECONFIG (without --kubeconfig), POD_NAMESPACE (the Lease's \
                  namespace), POD_NAME (this replica's name in the Lease and its events), \
                  RUST_LOG (the log filter), FEATURE_GATES (without --feature-gates), MIN_VALUES_POLICY \
                  (without --min-values-policy), AZURE_ACCESS_TOKEN (with --provider azure: a \
                  static ARM bearer token, never logged; without it, AZURE_FEDERATED_TOKEN_FILE, \
                  AZURE_CLIENT_ID and AZURE_TENANT_ID (workload identity) or else the managed \
                  identity), ARM_ENDPOINT (without --arm-endpoint). With \
                  --provider azure, every Azure setting below is also read from the variable \
                  its help names (CLUSTER_NAME, CLUSTER_ENDPOINT, KUBELET_BOOTSTRAP_TOKEN, \
                  SSH_PUBLIC_KEY, VNET_SUBNET_ID, AZURE_NODE_RESOURCE_GROUP, LOCATION, ...); a \
                  flag wins over its variable, and the bootstrap token is never logged. With \
                  --provider aws, every AWS setting is read the same way (CLUSTER_NAME, \
                  INTERRUPTION_QUEUE, ISOLATED_VPC, AWS_REGION, ...), and credentials come \
                  from the AWS credential chain (AWS_ROLE_ARN with \
                  AWS_WEB_IDENTITY_TOKEN_FILE for IRSA, EKS Pod Identity, the instance's \
                  metadata); AWS_ENDPOINT_URL points every AWS call elsewhere.",
    mut_arg("feature_gates", |arg| arg.env("FEATURE_GATES")),
    mut_arg("min_values_policy", |arg| arg.env("MIN_VALUES_POLICY"))
)]
pub struct Args {
    /// The kubeconfig to use; without it, the file `KUBECONFIG` names, else
    /// the in-cluster service account.
    #[arg(long, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// The cloud: `fake` launches Node objects itself (as upstream's kwok
    /// provider), from `--instance-types`; `azure` launches AKS VMs through
    /// ARM; `aws` launches EC2 instances that join EKS.
    #[arg(long, value_enum, default_value_t = ProviderKind::Fake)]
    pub provider: ProviderKind,

    /// With `--provider fake`: the InstanceType documents
    /// (`karpenter.fake/v1alpha1`, as karpenter-sim reads them) the fake
    /// cloud offers.
    #[arg(long, value_name = "FILE", required_if_eq("provider", "fake"))]
    pub instance_types: Option<PathBuf>,

    /// Elect a leader through a `coordination.k8s.io/v1` Lease, so that two
    /// replicas never act at once.
    #[arg(long)]
    pub leader_elect: bool,

    /// The Lease's namespace.
    #[arg(long, env = "POD_NAMESPACE", value_name = "NAMESPACE")]
    pub lease_namespace: Option<String>,

    /// The Lease's name.
    #[arg(long, default_value = super::leader::DEFAULT_LEASE_NAME, value_name = "NAME")]
    pub lease_name: String,

    /// How long a Lease holds after its last renewal.
    #[arg(long, default_value = "15s", value_parser = parse_duration, value_name = "DURATION")]
    pub lease_duration: Duration,

    /// How long the leader acts without a successful renewal before it
    /// stops (shorter than the lease duration).
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    pub renew_deadline: Duration,

    /// The pause between attempts to take or renew the Lease.
    #[arg(long, default_value = "2s", value_parser = parse_duration, value_name = "DURATION")]
    pub retry_period: Duration,

    /// Where to serve Prometheus metrics (`/metrics`); `off` serves none.
    #[arg(long, default_value = "0.0.0.0:8080", value_name = "ADDR")]
    pub metrics_addr: Listen,

    /// Where to serve `/healthz` and `/readyz` (ready once the watches have
    /// synced); `off` serves none.
    #[arg(long, default_value = "0.0.0.0:8081", value_name = "ADDR")]
    pub health_addr: Listen,

    /// How logs are written (filtered as `RUST_LOG` says; `info` without
    /// it).
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Read, plan and log every decision; write nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// One reconcile round after the initial sync, then exit.
    #[arg(long)]
    pub once: bool,

    /// Time between reconcile rounds.
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    pub interval: Duration,

    /// How long to wait for the watches' first lists before giving up.
    #[arg(long, default_value = "5m", value_parser = parse_duration, value_name = "DURATION")]
    pub sync_timeout: Duration,

    /// The field manager every write names.
    #[arg(long, default_value = crate::FIELD_MANAGER, value_name = "NAME")]
    pub field_manager: String,

    /// Disrupt nodes (consolidation, drift, expiry, emptiness); without
    /// it only provisioning runs.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub disruption: bool,

    /// How new claims are chosen (`--packing`), upstream's feature gates
    /// (`--feature-gates`; NodeOverlay=true watches NodeOverlays,
    /// CapacityBuffer=true watches CapacityBuffers, PodTemplates,
    /// Deployments, StatefulSets and ReplicaSets) and the `minValues` policy
    /// (`--min-values-policy`): the flags karpenter-sim takes.
    #[command(flatten)]
    pub planning: PlanningArgs,

    /// The Azure settings, for `--provider azure`.
    #[command(flatten, next_help_heading = "Azure (--provider azure)")]
    pub azure: AzureArgs,

    /// The AWS settings, for `--provider aws` (those Azure shares, such as
    /// `--cluster-name`, are listed with Azure's).
    #[command(flatten, next_help_heading = "AWS (--provider aws)")]
    pub aws: AwsArgs,
}

/// The cloud the controller launches in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProviderKind {
    /// Node objects, launched by the controller itself.
    Fake,
    /// AKS VMs through Azure Resource Manager.
    Azure,
    /// EC2 instances joining EKS, through the AWS SDK.
    Aws,
}

impl ProviderKind {
    /// How `--provider` names it.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Fake => "fake",
            ProviderKind::Azure => "azure",
            ProviderKind::Aws => "aws",
        }
    }

    /// The karpenter-kube feature that compiles it into the binary (a
    /// controller built for one cloud links no other).
    pub fn feature(self) -> &'static str {
        match self {
            ProviderKind::Fake => "kwok",
            ProviderKind::Azure => "azure",
            ProviderKind::Aws => "aws",
        }
    }
}

/// An address to serve on, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listen {
    /// Serve on this address.
    On(SocketAddr),
    /// Serve nothing.
    Off,
}

impl std::str::FromStr for Listen {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "off" {
            return Ok(Listen::Off);
        }
        text.parse()
            .map(Listen::On)
            .map_err(|e| format!("`{text}` is not an address like 0.0.0.0:8080 (or `off`): {e}"))
    }
}

/// A duration written as a number and a unit (`500ms`, `10s`, `5m`, `1h`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("`{text}` has no unit (ms, s, m, h)"))?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` does not start with a whole number"))?;
    let seconds = match unit {
        "ms" => return Ok(Duration::from_millis(number)),
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(format!("`{text}`: the unit must be ms, s, m or h")),
    };
    number
        .checked_mul(seconds)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("`{text}` is too long"))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use karpenter_core::planning::MinValuesPolicy;

    use super::*;

    #[test]
    fn the_flags_are_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn durations_read_as_written() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert!(parse_duration("5").is_err());
        assert!(parse_duration("s").is_err());
        assert!(parse_duration("99999999999999999999h").is_err());
    }

    #[test]
    fn each_provider_is_named_as_the_flag_names_it() {
        for kind in ProviderKind::value_variants() {
            let value = kind.to_possible_value().expect("every provider is a value");
            assert_eq!(kind.name(), value.get_name());
        }
    }

    #[test]
    fn fake_needs_its_instance_types() {
        let parsed = Args::try_parse_from(["karpenter-controller", "--provider", "fake"]);
        assert!(parsed.is_err());
        let parsed =
            Args::try_parse_from(["karpenter-controller", "--instance-types", "types.yaml"])
                .expect("parses");
        assert_eq!(parsed.provider, ProviderKind::Fake);
        assert_eq!(
            parsed.metrics_addr,
            Listen::On("0.0.0.0:8080".parse().expect("addr"))
        );
        let off = Args::try_parse_from([
            "karpenter-controller",
            "--instance-types",
            "t.yaml",
            "--metrics-addr",
            "off",
        ])
        .expect("parses");
        assert_eq!(off.metrics_addr, Listen::Off);
    }

    #[test]
    fn feature_gates_default_to_upstreams() {
        let parsed = Args::try_parse_from(["karpenter-controller", "--instance-types", "t.yaml"])
            .expect("parses");
        assert_eq!(
            parsed.planning.feature_gates(),
            karpenter_core::features::FeatureGates::UPSTREAM
        );
        let parsed = Args::try_parse_from([
            "karpenter-controller",
            "--instance-types",
            "t.yaml",
            "--feature-gates",
            "NodeRepair=true",
        ])
        .expect("parses");
        assert!(
            parsed
                .planning
                .feature_gates()
                .is_on(karpenter_core::features::FeatureGate::NodeRepair)
        );
        let bad = Args::try_parse_from([
            "karpenter-controller",
            "--instance-types",
            "t.yaml",
            "--feature-gates",
            "NodeRepair=maybe",
        ]);
        assert!(bad.is_err());
    }

    #[test]
    fn the_min_values_policy_is_strict_unless_told() {
        let with = |extra: &[&str]| {
            let mut args = vec!["karpenter-controller", "--instance-types", "t.yaml"];
            args.extend_from_slice(extra);
            Args::try_parse_from(args)
        };
        let parsed = with(&[]).expect("parses");
        assert_eq!(parsed.planning.min_values_policy, MinValuesPolicy::Strict);
        let parsed = with(&["--min-values-policy", "BestEffort"]).expect("parses");
        assert_eq!(
            parsed.planning.min_values_policy,
            MinValuesPolicy::BestEffort
        );
        let bad = with(&["--min-values-policy", "bestEffort"]).expect_err("upstream's spelling");
        assert!(bad.to_string().contains("Strict or BestEffort"), "{bad}");
    }
}

//! Which cloud a run takes its instance types from (`--provider`, else the
//! input's documents decide), and the snapshot each gives.

use std::path::PathBuf;

use clap::Args;
use karpenter::core::Snapshot;
use karpenter::core::features::{FeatureGate, FeatureGates};
use karpenter::scenario::Scenario;
use karpenter::scenario::aws::{self, DEFAULT_VM_MEMORY_OVERHEAD_PERCENT, InstanceTypeOptions};

use super::{CommonArgs, Failure, Provider};

/// The AWS provider's options (with `--provider aws`), as upstream's of the
/// same names.
#[derive(Args)]
pub(crate) struct AwsArgs {
    /// Spot prices (aws): a CSV with the header `instanceType,zone,price`. A
    /// type and zone it does not list have no spot offering. Default: spot is
    /// priced as on-demand.
    #[arg(long = "spot-prices", value_name = "FILE")]
    spot_prices: Option<PathBuf>,
    /// The share of an instance's memory the hypervisor keeps (aws).
    #[arg(long = "vm-memory-overhead-percent", value_name = "FRACTION",
          default_value_t = DEFAULT_VM_MEMORY_OVERHEAD_PERCENT, value_parser = overhead)]
    vm_memory_overhead_percent: f64,
    /// Network interfaces kept back from pods on every node (aws).
    #[arg(long = "reserved-enis", value_name = "N", default_value_t = 0)]
    reserved_enis: u32,
}

impl AwsArgs {
    /// Whether any option differs from its default: they mean nothing to
    /// another provider, and a run that sets them should hear so.
    fn any_set(&self) -> bool {
        self.spot_prices.is_some()
            || self.reserved_enis != 0
            || self.vm_memory_overhead_percent != DEFAULT_VM_MEMORY_OVERHEAD_PERCENT
    }
}

/// A memory overhead is a fraction of the memory: from 0 up to (not
/// including) 1.
fn overhead(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|e| format!("not a number: {e}"))?;
    if (0.0..1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "{value} is not a fraction from 0 to below 1 (0.075 is 7.5 %)"
        ))
    }
}

/// The provider a run takes its instance types from.
pub(crate) enum Chosen {
    /// The input's InstanceType documents.
    Fake,
    /// The embedded Azure catalog in a region.
    Azure(String),
    /// The embedded EC2 catalog in a region, with the provider's options.
    Aws(String, Box<InstanceTypeOptions>),
}

impl Chosen {
    /// The scenario as the chosen provider offers it under `gates` (with its
    /// well-known labels, launch rank and drift verdicts); warnings go to
    /// standard error.
    pub(crate) fn snapshot(
        &self,
        scenario: Scenario,
        gates: FeatureGates,
    ) -> Result<Snapshot, Failure> {
        let mut snapshot = self.snapshot_ungated(scenario)?;
        // Upstream's providers list reserved offerings only with the gate on.
        if !gates.is_on(FeatureGate::ReservedCapacity) {
            let withheld = snapshot.withhold_reservations();
            if withheld > 0 {
                eprintln!(
                    "warning: {withheld} reserved offering(s) left out: the ReservedCapacity \
                     feature gate is off (--feature-gates ReservedCapacity=true)"
                );
            }
        }
        Ok(snapshot)
    }

    fn snapshot_ungated(&self, scenario: Scenario) -> Result<Snapshot, Failure> {
        let bad = |e: karpenter::scenario::LoadError| Failure::BadInput(e.to_string());
        let (snapshot, warnings) = match self {
            Chosen::Fake => {
                let types = scenario.fake_instance_types().map_err(bad)?;
                let (snapshot, warnings) = scenario.into_snapshot_and_warnings(types);
                (snapshot, warnings.iter().map(ToString::to_string).collect())
            }
            Chosen::Azure(region) => scenario.into_azure_snapshot(region).map_err(bad)?,
            Chosen::Aws(region, options) => {
                scenario.into_aws_snapshot(region, options).map_err(bad)?
            }
        };
        for warning in &warnings {
            eprintln!("warning: {warning}");
        }
        Ok(snapshot)
    }

    /// The provider's repair policies. AWS's are not modelled yet: none.
    pub(crate) fn repair_policies(&self) -> Vec<karpenter::core::cloudprovider::RepairPolicy> {
        match self {
            Chosen::Fake => karpenter::fake::repair_policies(),
            Chosen::Azure(_) => karpenter::azure::repair_policies(),
            Chosen::Aws(..) => karpenter::aws::repair_policies(),
        }
    }
}

/// The Azure region of a run that names none.
const DEFAULT_AZURE_REGION: &str = "eastus";
/// The AWS region of a run that names none.
const DEFAULT_AWS_REGION: &str = "us-east-1";

/// Which provider the run uses, as the format says: `--provider`, else fake
/// when the input has InstanceType documents, else AWS when it has
/// EC2NodeClass documents, else Azure; with a line describing it.
pub(crate) fn resolve_provider(
    common: &CommonArgs,
    scenario: &Scenario,
) -> Result<(Chosen, String), Failure> {
    let provider = common
        .provider
        .unwrap_or(if !scenario.instance_types.is_empty() {
            Provider::Fake
        } else if !scenario.ec2_node_classes.is_empty() {
            Provider::Aws
        } else {
            Provider::Azure
        });
    if provider != Provider::Aws && common.aws.any_set() {
        return Err(Failure::BadInput(
            "--spot-prices, --vm-memory-overhead-percent and --reserved-enis are options of \
             the AWS provider (--provider aws)"
                .to_owned(),
        ));
    }
    match provider {
        Provider::Fake => resolve_fake(common, scenario),
        Provider::Azure => resolve_azure(common),
        Provider::Aws => resolve_aws(common),
    }
}

fn resolve_fake(common: &CommonArgs, scenario: &Scenario) -> Result<(Chosen, String), Failure> {
    if scenario.instance_types.is_empty() {
        return Err(Failure::BadInput(
            "--provider fake takes its instance types from InstanceType documents \
             (karpenter.fake/v1alpha1), and the input has none"
                .to_string(),
        ));
    }
    if let Some(region) = &common.region {
        // Said, not refused: the run is still the one asked for, but a
        // reader expecting that region's prices must know it has none.
        eprintln!(
            "warning: --region {region} is for the cloud providers; this run uses the fake \
             provider and the prices of the input's InstanceType documents"
        );
    }
    let line = format!(
        "fake ({} instance types from the input)",
        scenario.instance_types.len()
    );
    Ok((Chosen::Fake, line))
}

fn resolve_azure(common: &CommonArgs) -> Result<(Chosen, String), Failure> {
    let wanted = common.region.as_deref().unwrap_or(DEFAULT_AZURE_REGION);
    let catalog = karpenter::azure::Catalog::embedded();
    let Some(region) = catalog.region(wanted) else {
        let priced: Vec<&str> = catalog
            .regions()
            .filter(|r| r.has_prices)
            .map(|r| r.name.as_str())
            .collect();
        return Err(Failure::BadInput(format!(
            "--region {}: not an Azure region the embedded catalog knows; regions with prices: {}",
            wanted,
            priced.join(", ")
        )));
    };
    let prices = if region.has_prices {
        "its own prices".to_owned()
    } else {
        format!(
            "{}'s prices (it has no price table)",
            karpenter::azure::instancetype::FALLBACK_PRICE_REGION
        )
    };
    let line = format!(
        "azure, region {} ({} zones, {prices})",
        region.name, region.zone_count
    );
    Ok((Chosen::Azure(region.name.clone()), line))
}

fn resolve_aws(common: &CommonArgs) -> Result<(Chosen, String), Failure> {
    let region = common.region.as_deref().unwrap_or(DEFAULT_AWS_REGION);
    karpenter::aws::check_region(region)
        .map_err(|e| Failure::BadInput(format!("--region {region}: {e}")))?;
    let own = aws::has_own_prices(region).map_err(|e| Failure::Internal(e.to_string()))?;
    let prices = if own {
        "its own on-demand prices".to_owned()
    } else {
        // Upstream prices such a region from us-east-1's table until it
        // reads the pricing API; a reader comparing with a bill must know.
        eprintln!(
            "warning: region {region} has no embedded price table: it is priced from {}'s",
            aws::FALLBACK_PRICE_REGION
        );
        format!(
            "{}'s on-demand prices (it has no price table)",
            aws::FALLBACK_PRICE_REGION
        )
    };
    let spot_prices = match &common.aws.spot_prices {
        Some(path) => {
            Some(aws::read_spot_prices(path).map_err(|e| Failure::BadInput(e.to_string()))?)
        }
        None => None,
    };
    let spot = match &spot_prices {
        Some(prices) => format!("{} spot prices from the file", prices.len()),
        None => "spot priced as on-demand".to_owned(),
    };
    let options = InstanceTypeOptions {
        spot_prices,
        reserved_capacity: common
            .planning
            .feature_gates()
            .is_on(FeatureGate::ReservedCapacity),
        reserved_enis: common.aws.reserved_enis,
        vm_memory_overhead_percent: common.aws.vm_memory_overhead_percent,
        ..InstanceTypeOptions::default()
    };
    let line = format!("aws, region {region} ({prices}, {spot})");
    Ok((Chosen::Aws(region.to_owned(), Box::new(options)), line))
}

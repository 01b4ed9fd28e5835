//! [`PlanningArgs`]: the planning options as command-line flags, one group
//! that `karpenter-sim`'s commands and `karpenter-controller` flatten, so a
//! flag means the same wherever it is given.

use clap::builder::PossibleValue;

use super::{MinValuesPolicy, Packing, PlanningOptions};
use crate::features::FeatureGates;

/// The flags behind [`PlanningOptions`]: `--packing`, `--feature-gates` and
/// `--min-values-policy`. Flatten it into a clap command
/// (`#[command(flatten)] planning: PlanningArgs`) and read
/// [`options`](Self::options).
///
/// ```
/// use clap::Parser;
/// use karpenter_core::features::FeatureGate;
/// use karpenter_core::planning::{MinValuesPolicy, PlanningArgs};
///
/// #[derive(Parser)]
/// struct Cli {
///     #[command(flatten)]
///     planning: PlanningArgs,
/// }
///
/// let cli = Cli::parse_from([
///     "cli",
///     "--feature-gates",
///     "NodeRepair=true",
///     "--feature-gates",
///     "NodeRepair=false,NodeOverlay=true",
///     "--min-values-policy",
///     "BestEffort",
/// ]);
/// let options = cli.planning.options();
/// assert!(!options.feature_gates.is_on(FeatureGate::NodeRepair));
/// assert!(options.feature_gates.is_on(FeatureGate::NodeOverlay));
/// assert_eq!(options.min_values_policy, MinValuesPolicy::BestEffort);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, clap::Args)]
#[non_exhaustive]
pub struct PlanningArgs {
    /// How new claims are chosen, provisioned or replacing disrupted nodes:
    /// as upstream Karpenter, or at the least total price.
    #[arg(long, value_enum, value_name = "PACKING", default_value_t = Packing::Upstream)]
    pub packing: Packing,
    /// Upstream's feature gates, as upstream writes them
    /// (`NodeOverlay=true,NodeRepair=true`), over upstream's defaults:
    /// NodeRepair=false, ReservedCapacity=true, SpotToSpotConsolidation=false,
    /// NodeOverlay=false, StaticCapacity=false, CapacityBuffer=false.
    /// Repeatable; later pairs win.
    #[arg(long = "feature-gates", value_name = "GATES", value_parser = checked_gates)]
    pub feature_gates: Vec<String>,
    /// What a claim does when its instance types cannot meet a requirement's
    /// minValues (upstream's option): Strict leaves the pod unschedulable,
    /// BestEffort lowers minValues to what the types meet.
    #[arg(
        long = "min-values-policy",
        value_name = "POLICY",
        default_value = "Strict",
        value_parser = min_values_policy
    )]
    pub min_values_policy: MinValuesPolicy,
}

impl PlanningArgs {
    /// Upstream's default gates with every `--feature-gates` value applied in
    /// order.
    pub fn feature_gates(&self) -> FeatureGates {
        self.feature_gates
            .iter()
            .fold(FeatureGates::UPSTREAM, |gates, text| {
                // Each value was checked when the flags were parsed.
                gates.apply(text).unwrap_or(gates)
            })
    }

    /// The options these flags say.
    pub fn options(&self) -> PlanningOptions {
        PlanningOptions::default()
            .with_packing(self.packing)
            .with_feature_gates(self.feature_gates())
            .with_min_values_policy(self.min_values_policy)
    }
}

/// Checks one `--feature-gates` value, kept as written:
/// [`PlanningArgs::feature_gates`] applies them in order, and a run's label
/// repeats them.
fn checked_gates(text: &str) -> Result<String, String> {
    text.parse::<FeatureGates>()
        .map(|_| text.to_owned())
        .map_err(|e| e.to_string())
}

/// `--min-values-policy`: `Strict` or `BestEffort`.
fn min_values_policy(text: &str) -> Result<MinValuesPolicy, String> {
    text.parse()
}

impl clap::ValueEnum for Packing {
    fn value_variants<'a>() -> &'a [Self] {
        Packing::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()))
    }
}

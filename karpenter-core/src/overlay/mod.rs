//! NodeOverlays (`karpenter.sh/v1alpha1`, upstream's `NodeOverlay` feature
//! gate): changes to the instance types' prices and capacity, made before
//! planning, as upstream's overlay store (`pkg/controllers/nodeoverlay`) and
//! its cloud-provider decorator (`pkg/cloudprovider/overlay`) make them.
//!
//! [`apply`] takes a snapshot and the overlays and changes each NodePool's
//! instance types in place; the planners then see only the result, so
//! overlaid prices decide launches, consolidation's savings and the lower
//! bound alike.
//!
//! - An overlay **selects** an instance type of a NodePool when the type's
//!   requirements, with `karpenter.sh/nodepool` and the pool's template
//!   labels, are compatible with the overlay's requirements (strictly: a key
//!   the overlay names must be defined there, unless it only excludes), and
//!   at least one of the type's offerings (available or not) meets them.
//! - `price` replaces, and `priceAdjustment` changes (`+0.5`, `-15%`; never
//!   below zero), the price of each selected offering; `capacity` adds
//!   extended resources to each selected type (a resource the type has
//!   already takes the overlay's quantity).
//! - Overlays are taken by **weight**, highest first (absent: 0), and on
//!   equal weights by name, last in the alphabet first. The first to set an
//!   offering's price wins; capacity merges, the first to name a resource
//!   winning it. Two overlays of the same weight that would both set one
//!   offering's price, or one resource of one type, **conflict**: the later
//!   is not applied at all (anywhere), as upstream marks it
//!   `ValidationSucceeded=False` with reason `Conflict`.
//! - An overlay that breaks the CRD's rules or upstream's runtime
//!   validation is not applied, and its [`OverlayOutcome`] says why.
//!
//! ```
//! use karpenter_core::api::NodeOverlay;
//! use karpenter_core::overlay::{OverlayVerdict, apply};
//! use karpenter_core::scheduling::CapacityType;
//! use karpenter_core::snapshot::build::{InstanceTypeBuilder, NodePoolBuilder};
//! use karpenter_core::Snapshot;
//!
//! let mut snapshot = Snapshot {
//!     node_pools: vec![NodePoolBuilder::new("default").build()],
//!     ..Snapshot::default()
//! }
//! .with_instance_types(
//!     "default",
//!     vec![InstanceTypeBuilder::new("m-2").cpu("2").memory("8Gi")
//!         .offering("zone-a", CapacityType::OnDemand, 0.2).build()],
//! );
//! let discount: NodeOverlay = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "discount"},
//!     "spec": {"requirements": [], "priceAdjustment": "-25%"},
//! }))?;
//! let outcomes = apply(&mut snapshot, &[discount]);
//! assert!(matches!(outcomes[0].verdict, OverlayVerdict::Applied { instance_types: 1 }));
//! assert!((snapshot.instance_types["default"][0].offerings[0].price - 0.15).abs() < 1e-12);
//! # Ok::<(), serde_json::Error>(())
//! ```

mod price;
mod store;
mod validate;

use std::sync::Arc;

use crate::api::NodeOverlay;
use crate::snapshot::Snapshot;

pub use price::PriceChange;
pub use validate::OverlayError;

use store::Store;

/// What became of one NodeOverlay.
#[derive(Debug)]
pub struct OverlayOutcome {
    /// The overlay's name.
    pub name: String,
    /// Applied, or why not.
    pub verdict: OverlayVerdict,
}

/// Whether an overlay was applied.
#[derive(Debug)]
#[non_exhaustive]
pub enum OverlayVerdict {
    /// Applied, to this many instance types over every NodePool (0 when its
    /// requirements select none).
    Applied {
        /// How many (NodePool, instance type) pairs it changed or may change.
        instance_types: usize,
    },
    /// Not applied: it breaks these rules.
    Invalid(Vec<OverlayError>),
    /// Not applied: an overlay of the same weight taken before it already
    /// sets a price or a resource it would set.
    Conflict {
        /// That overlay's name.
        with: String,
    },
}

impl OverlayVerdict {
    /// Whether the overlay was applied.
    pub fn is_applied(&self) -> bool {
        matches!(self, OverlayVerdict::Applied { .. })
    }
}

impl std::fmt::Display for OverlayVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OverlayVerdict::Applied { instance_types } => {
                write!(f, "applied to {instance_types} instance type(s)")
            }
            OverlayVerdict::Invalid(errors) => {
                f.write_str("not applied: ")?;
                for (i, error) in errors.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{error}")?;
                }
                Ok(())
            }
            OverlayVerdict::Conflict { with } => {
                write!(
                    f,
                    "not applied: it conflicts with NodeOverlay {with:?} of the same weight"
                )
            }
        }
    }
}

/// Applies `overlays` to the instance types of every NodePool of
/// `snapshot`, as upstream does with its `NodeOverlay` gate on; returns
/// what became of each overlay, in the order given.
pub fn apply(snapshot: &mut Snapshot, overlays: &[NodeOverlay]) -> Vec<OverlayOutcome> {
    let mut outcomes: Vec<Option<OverlayVerdict>> = overlays.iter().map(|_| None).collect();
    let mut checked = Vec::new();
    for (at, overlay) in overlays.iter().enumerate() {
        match validate::check(overlay, &snapshot.well_known_labels) {
            Ok(fields) => checked.push((at, fields)),
            Err(errors) => outcomes[at] = Some(OverlayVerdict::Invalid(errors)),
        }
    }
    // Upstream's `OrderByWeight`: weight descending, then name descending.
    checked.sort_by(|(a, _), (b, _)| {
        let (a, b) = (&overlays[*a], &overlays[*b]);
        b.spec
            .effective_weight()
            .cmp(&a.spec.effective_weight())
            .then_with(|| b.metadata.name.cmp(&a.metadata.name))
    });
    // No valid overlay: nothing to match (a controller asks every round).
    if !checked.is_empty() {
        let mut store = Store::new(snapshot);
        for (at, fields) in &checked {
            let overlay = &overlays[*at];
            let verdict = store.add(name_of(overlay), overlay.spec.effective_weight(), fields);
            outcomes[*at] = Some(verdict);
        }
        for (pool, types) in store.into_changed_types() {
            snapshot.instance_types.insert(pool, Arc::from(types));
        }
    }
    overlays
        .iter()
        .zip(outcomes)
        .map(|(overlay, verdict)| OverlayOutcome {
            name: name_of(overlay).to_owned(),
            verdict: verdict.unwrap_or(OverlayVerdict::Applied { instance_types: 0 }),
        })
        .collect()
}

fn name_of(overlay: &NodeOverlay) -> &str {
    overlay.metadata.name.as_deref().unwrap_or_default()
}

#[cfg(test)]
mod tests;

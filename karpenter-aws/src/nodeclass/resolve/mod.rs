//! An `EC2NodeClass`'s status from its selector terms, as upstream's
//! status controller writes it: the subnets, security groups, images and
//! capacity reservations EC2 answers the terms with, the instance
//! profile's name, and the conditions (`SubnetsReady`, ..., `Ready`).
//!
//! [`resolve_status`] makes the describe calls over any [`Ec2Api`]. Image
//! aliases and `ssmParameter` terms read SSM parameters, which `Ec2Api`
//! does not: [`alias_parameters`] names an alias's parameters, and the
//! caller passes their values in [`ResolveContext::ssm_parameters`];
//! [`reconcile_status`](super::reconcile::reconcile_status) reads them
//! through SSM and caches them.

mod alias;
mod amis;
pub(crate) mod conditions;
mod filters;
mod placement;
mod resources;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use jiff::Timestamp;
use karpenter_core::api::ConditionStatus;

pub use alias::{AliasParameter, ImageVariant, UnsupportedAlias, alias_parameters};

use self::amis::{ImageQuery, resolve_amis};
use self::conditions::{Stamp, set, set_ready, set_true};
use self::filters::{available, image_inputs};
pub(crate) use self::placement::find_placement_group;
use self::placement::resolve_placement_group;
use crate::ec2::{DescribeImagesInput, Ec2Api, Ec2Error, Filter};
use crate::iam::instance_profile_name;
use crate::nodeclass::{EC2NodeClass, EC2NodeClassStatus, condition_types as types};

/// What the resolution needs besides the class and EC2.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolveContext {
    /// The cluster's name, which generated instance profile names start
    /// with.
    pub cluster_name: String,
    /// The region, e.g. `us-west-2`.
    pub region: String,
    /// The cluster's Kubernetes version, `major.minor` (`1.31`), which
    /// alias parameters name.
    pub kubernetes_version: String,
    /// Now: images deprecated by then count as deprecated, conditions that
    /// change are stamped with it, capacity blocks ending within 40 minutes
    /// of it are `expiring`.
    pub now: Timestamp,
    /// SSM parameter values by name: the image IDs of the alias's
    /// parameters and of `ssmParameter` terms. A parameter missing here is
    /// one SSM does not have.
    pub ssm_parameters: BTreeMap<String, String>,
    /// Karpenter's `ReservedCapacity` feature gate: capacity reservations
    /// are resolved, and `Ready` waits for them, only with it.
    pub reserved_capacity: bool,
}

/// Why a status could not be resolved; the status is then left as it was.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// `DescribeSubnets` failed.
    #[error("spec.subnetSelectorTerms: describing subnets")]
    Subnets(#[source] Ec2Error),
    /// `DescribeSecurityGroups` failed.
    #[error("spec.securityGroupSelectorTerms: describing security groups")]
    SecurityGroups(#[source] Ec2Error),
    /// `DescribeImages` failed.
    #[error("spec.amiSelectorTerms: describing images")]
    Images(#[source] Ec2Error),
    /// `DescribeCapacityReservations` failed.
    #[error("spec.capacityReservationSelectorTerms: describing capacity reservations")]
    CapacityReservations(#[source] Ec2Error),
    /// `DescribePlacementGroups` failed. `PlacementGroupReady` is then
    /// False (`PlacementGroupResolutionFailed`) in `status`, the rest
    /// resolved: upstream writes that status and then fails the
    /// reconcile for a retry, and a caller may do the same.
    #[error("spec.placementGroupSelector {selector:?}: resolving placement group")]
    PlacementGroup {
        /// The group's name, else its ID, as the selector gives it.
        selector: String,
        /// The status resolved, `PlacementGroupReady` False.
        status: Box<EC2NodeClassStatus>,
        /// EC2's failure.
        #[source]
        source: Ec2Error,
    },
    /// None of the alias's SSM parameters has a value.
    #[error(
        "spec.amiSelectorTerms[].alias {alias}: failed to discover any AMIs for alias (parameters {parameters:?})"
    )]
    AliasNotResolved {
        /// The alias.
        alias: String,
        /// The parameters read, none of which had a value.
        parameters: Vec<String>,
    },
}

impl ResolveError {
    /// The status to write despite the failure: only a failed placement
    /// group lookup leaves one (with `PlacementGroupReady` False), as
    /// upstream writes the status before returning its reconcilers'
    /// errors.
    pub fn status(&self) -> Option<&EC2NodeClassStatus> {
        match self {
            ResolveError::PlacementGroup { status, .. } => Some(status),
            _ => None,
        }
    }
}

/// The status of `class` resolved against `api`: its current status
/// (fields and conditions this does not set are kept) with `subnets`,
/// `securityGroups`, `amis`, `capacityReservations` (with the gate) and
/// `instanceProfile` replaced, their conditions set as upstream's
/// reconcilers set them, and `Ready` over all of `Ready`'s dependents.
///
/// `PlacementGroupReady` is set as upstream's placement group reconciler
/// sets it: True without `spec.placementGroupSelector` or with its group
/// found `available` (by ID, else by name), False `PlacementGroupNotFound`
/// otherwise; a failed `DescribePlacementGroups` sets it False
/// (`PlacementGroupResolutionFailed`) and fails the resolution with
/// [`ResolveError::PlacementGroup`], which carries that status.
///
/// `InstanceProfileReady` and `ValidationSucceeded` need IAM and launch
/// dry runs; they are kept as they are (Unknown when absent), so `Ready`
/// is not True here.
/// [`reconcile_status`](super::reconcile::reconcile_status) sets them
/// (the validation as upstream's: the kubelet configuration, the class's
/// tags, then a launch template made and `CreateFleet` and `RunInstances`
/// dry runs) before reckoning `Ready` again. An alias refused for the
/// Kubernetes version sets `AMIsReady` False (`UnsupportedAlias`) and
/// keeps the images. Deterministic: the same class, EC2 state and context
/// give the same status.
pub async fn resolve_status(
    api: &impl Ec2Api,
    class: &EC2NodeClass,
    context: &ResolveContext,
) -> Result<EC2NodeClassStatus, ResolveError> {
    resolve_with_profile(api, class, context, None).await
}

/// [`resolve_status`], with `profile` the instance profile the caller
/// made sure of (`Some(None)` for a class naming none): then it is the
/// status's, and `InstanceProfileReady` is True before `Ready` is
/// reckoned.
pub(crate) async fn resolve_with_profile(
    api: &impl Ec2Api,
    class: &EC2NodeClass,
    context: &ResolveContext,
    profile: Option<Option<String>>,
) -> Result<EC2NodeClassStatus, ResolveError> {
    let mut status = class.status.clone().unwrap_or_default();
    let mut conditions = status.conditions.take().unwrap_or_default();
    let stamp = Stamp::of(class, context.now);

    let found = resources::subnets(api, &class.spec.subnet_selector_terms)
        .await
        .map_err(ResolveError::Subnets)?;
    if found.is_empty() {
        let (reason, message) = (
            "SubnetsNotFound",
            "SubnetSelector did not match any Subnets",
        );
        set(
            &mut conditions,
            stamp,
            types::SUBNETS_READY,
            ConditionStatus::False,
            reason,
            message,
        );
        status.subnets = None;
    } else {
        set_true(&mut conditions, stamp, types::SUBNETS_READY);
        status.subnets = Some(found);
    }

    let terms = &class.spec.security_group_selector_terms;
    let groups = resources::security_groups(api, terms)
        .await
        .map_err(ResolveError::SecurityGroups)?;
    if groups.is_empty() && !terms.is_empty() {
        let (reason, message) = (
            "SecurityGroupsNotFound",
            "SecurityGroupSelector did not match any SecurityGroups",
        );
        let sg = types::SECURITY_GROUPS_READY;
        set(
            &mut conditions,
            stamp,
            sg,
            ConditionStatus::False,
            reason,
            message,
        );
        status.security_groups = None;
    } else {
        set_true(&mut conditions, stamp, types::SECURITY_GROUPS_READY);
        status.security_groups = Some(groups);
    }

    resolve_images(api, class, context, stamp, &mut status, &mut conditions).await?;

    if context.reserved_capacity {
        let terms = class
            .spec
            .capacity_reservation_selector_terms
            .as_deref()
            .unwrap_or_default();
        let reservations = resources::capacity_reservations(api, terms, context.now)
            .await
            .map_err(ResolveError::CapacityReservations)?;
        status.capacity_reservations = (!reservations.is_empty()).then_some(reservations);
        set_true(&mut conditions, stamp, types::CAPACITY_RESERVATIONS_READY);
    }

    match profile {
        Some(profile) => {
            status.instance_profile = profile;
            set_true(&mut conditions, stamp, types::INSTANCE_PROFILE_READY);
        }
        None => status.instance_profile = instance_profile(class, context),
    }
    // Last, so that a failure still leaves every other part resolved in
    // the status it carries.
    let selector = class.spec.placement_group_selector.as_ref();
    let placement = resolve_placement_group(api, selector, stamp, &mut conditions).await;
    set_ready(&mut conditions, stamp, context.reserved_capacity);
    status.conditions = Some(conditions);
    match placement {
        Ok(()) => Ok(status),
        Err(failure) => Err(ResolveError::PlacementGroup {
            selector: failure.selector,
            status: Box::new(status),
            source: failure.source,
        }),
    }
}

/// Resolves the images into `status` and sets `AMIsReady`.
async fn resolve_images(
    api: &impl Ec2Api,
    class: &EC2NodeClass,
    context: &ResolveContext,
    stamp: Stamp,
    status: &mut EC2NodeClassStatus,
    conditions: &mut Vec<karpenter_core::api::Condition>,
) -> Result<(), ResolveError> {
    let queries = match image_queries(class, context) {
        Ok(queries) => queries,
        Err(QueryError::Unsupported(refused)) => {
            let ami = types::AMIS_READY;
            let message = refused.message;
            set(
                conditions,
                stamp,
                ami,
                ConditionStatus::False,
                "UnsupportedAlias",
                &message,
            );
            return Ok(());
        }
        Err(QueryError::NotResolved(error)) => return Err(error),
    };
    let amis = resolve_amis(api, queries, context.now)
        .await
        .map_err(ResolveError::Images)?;
    if amis.is_empty() {
        let (reason, message) = ("AMINotFound", "AMISelector did not match any AMIs");
        set(
            conditions,
            stamp,
            types::AMIS_READY,
            ConditionStatus::False,
            reason,
            message,
        );
        status.amis = None;
    } else {
        set_true(conditions, stamp, types::AMIS_READY);
        status.amis = Some(amis);
    }
    Ok(())
}

/// Why the image queries could not be made.
enum QueryError {
    Unsupported(UnsupportedAlias),
    NotResolved(ResolveError),
}

/// The image queries of `class`: its alias's images by the parameter
/// values given, or one query per kind of term.
fn image_queries(
    class: &EC2NodeClass,
    context: &ResolveContext,
) -> Result<Vec<ImageQuery>, QueryError> {
    let ssm = |name: &str| context.ssm_parameters.get(name).cloned();
    let Some(alias) = class.alias() else {
        let inputs = image_inputs(&class.spec.ami_selector_terms, ssm);
        return Ok(inputs
            .into_iter()
            .map(|input| ImageQuery {
                input,
                variants: BTreeMap::new(),
            })
            .collect());
    };
    let parameters =
        alias_parameters(&alias, &context.kubernetes_version).map_err(QueryError::Unsupported)?;
    let mut variants: BTreeMap<String, Vec<ImageVariant>> = BTreeMap::new();
    for parameter in &parameters {
        if let Some(id) = ssm(&parameter.name) {
            // Two parameters naming one image: it serves both's nodes.
            let served = variants.entry(id).or_default();
            served.extend(parameter.variants.iter().copied());
            served.sort();
            served.dedup();
        }
    }
    if variants.is_empty() {
        return Err(QueryError::NotResolved(ResolveError::AliasNotResolved {
            alias: alias.to_string(),
            parameters: parameters.into_iter().map(|p| p.name).collect(),
        }));
    }
    let input = available(DescribeImagesInput {
        filters: vec![Filter::new("image-id", variants.keys().cloned())],
        ..DescribeImagesInput::default()
    });
    Ok(vec![ImageQuery { input, variants }])
}

/// The instance profile nodes get: `spec.instanceProfile` when given;
/// with a `role`, the profile already in the status, or the name
/// Karpenter gives the class's profile ([`instance_profile_name`]). No
/// IAM call is made here: [`reconcile_status`](super::reconcile::reconcile_status)
/// makes the profile.
fn instance_profile(class: &EC2NodeClass, context: &ResolveContext) -> Option<String> {
    if let Some(profile) = class
        .spec
        .instance_profile
        .clone()
        .filter(|p| !p.is_empty())
    {
        return Some(profile);
    }
    class.spec.role.as_ref().filter(|role| !role.is_empty())?;
    let current = class
        .status
        .as_ref()
        .and_then(|s| s.instance_profile.clone());
    if let Some(current) = current.filter(|name| !name.is_empty()) {
        return Some(current);
    }
    Some(instance_profile_name(
        &context.cluster_name,
        &context.region,
        class.name().unwrap_or_default(),
        class.metadata.uid.as_deref().unwrap_or_default(),
    ))
}

//! An `EC2NodeClass`'s status kept as upstream's status controller keeps
//! it: the SSM parameters its images are named by read (and cached), the
//! status resolved ([`resolve_status`](crate::nodeclass::resolve::resolve_status)), whether it changed, and when to
//! do it all again on upstream's periods.
//!
//! Writing the status through the API server, and running this when the
//! requeue comes due, are the controller's: [`reconcile_status`] is one
//! pass, with the time passed in.

mod cache;
mod dry_runs;
mod invalidate;
mod profile;
mod requeue;
mod validation;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use jiff::SignedDuration;

pub use cache::{ALIAS_PARAMETER_TTL, CUSTOM_PARAMETER_TTL, SsmCache};
pub use dry_runs::ValidationError;
pub use invalidate::{INVALIDATION_PERIOD, invalidate_deprecated_images};
pub use profile::delete_instance_profiles;
pub use requeue::{
    CAPACITY_RESERVATION_PERIOD, FOUND_PERIOD, NOT_FOUND_PERIOD, Requeue, SUBNET_PERIOD,
};
pub use validation::{VALIDATION_TTL, Validation};

use crate::ec2::{Ec2Api, Ec2Error, PARAMETER_NOT_FOUND, ParameterApi};
use crate::iam::{IamApi, InstanceProfileError, InstanceProfiles};
use crate::nodeclass::resolve::conditions::{Stamp, set_ready};
use crate::nodeclass::resolve::{
    ResolveContext, ResolveError, alias_parameters, resolve_with_profile,
};
use crate::nodeclass::{EC2NodeClass, EC2NodeClassStatus};

/// The field an alias's parameters come from, for errors.
const ALIAS_FIELD: &str = "spec.amiSelectorTerms[].alias";
/// The field an `ssmParameter` term's parameter comes from, for errors.
const SSM_PARAMETER_FIELD: &str = "spec.amiSelectorTerms[].ssmParameter";

/// One reconcile's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct Reconciled {
    /// The class's new status.
    pub status: EC2NodeClassStatus,
    /// Whether it differs from the class's current one: only then does
    /// the caller write it, as upstream patches only a changed object.
    pub changed: bool,
    /// When to reconcile again.
    pub requeue: Requeue,
}

/// Why a reconcile failed; the class's status is then left as it was.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// SSM failed to answer for a parameter for another reason than not
    /// having it.
    #[error("{field} reads SSM parameter {name}")]
    Parameter {
        /// The class's field naming the parameter.
        field: &'static str,
        /// The parameter.
        name: String,
        /// SSM's failure.
        #[source]
        source: Ec2Error,
    },
    /// Resolving the status from EC2 failed.
    #[error("resolving the status")]
    Resolve(#[source] ResolveError),
    /// Making the instance profile of `spec.role` failed.
    #[error("spec.role: ensuring the instance profile")]
    InstanceProfile(#[source] InstanceProfileError),
    /// A validation dry run failed for another reason than authorization.
    #[error("validating the class")]
    Validation(#[source] ValidationError),
}

impl ReconcileError {
    /// Whether reconciling again later may succeed: an AWS failure that
    /// says so, or an alias none of whose parameters SSM has yet (upstream
    /// retries it with backoff).
    pub fn is_retryable(&self) -> bool {
        match self {
            ReconcileError::Parameter { source, .. } => source.is_retryable(),
            ReconcileError::Resolve(error) => match error {
                ResolveError::Subnets(source)
                | ResolveError::SecurityGroups(source)
                | ResolveError::Images(source)
                | ResolveError::CapacityReservations(source)
                | ResolveError::PlacementGroup { source, .. } => source.is_retryable(),
                ResolveError::AliasNotResolved { .. } => true,
            },
            ReconcileError::InstanceProfile(error) => error.is_retryable(),
            // As upstream, an unexpected dry-run answer is retried.
            ReconcileError::Validation(_) => true,
        }
    }

    /// The status to write despite the failure, as upstream writes the
    /// status before returning its reconcilers' errors: only a failed
    /// placement group lookup leaves one ([`ResolveError::status`]).
    pub fn status(&self) -> Option<&EC2NodeClassStatus> {
        match self {
            ReconcileError::Resolve(error) => error.status(),
            ReconcileError::Parameter { .. }
            | ReconcileError::InstanceProfile(_)
            | ReconcileError::Validation(_) => None,
        }
    }
}

/// Reconciles the status of `class`: reads the SSM parameters its alias
/// names ([`alias_parameters`]) and its `ssmParameter` terms name through
/// `ssm`, from `cache` while their values are fresh (24 hours for an
/// alias's, 5 minutes for a term's, as upstream), then resolves the status
/// over `ec2` ([`resolve_status`](crate::nodeclass::resolve::resolve_status)) at `context.now`.
///
/// `context.ssm_parameters` is ignored: the values are SSM's. A parameter
/// SSM does not have (`ParameterNotFound`) names no image, as upstream
/// reads it: an `ssmParameter` term then finds nothing (`AMIsReady`
/// False), an alias without any of its parameters fails
/// ([`ResolveError::AliasNotResolved`]). Any other SSM failure fails the
/// reconcile rather than dropping that image from the status; upstream
/// skips an alias parameter whatever its error.
///
/// First, a class with a `role` gets its instance profile through `iam`
/// (read through `profiles`, cached 15 minutes): made, tagged and given
/// the role when the status's profile does not hold it, as upstream's
/// instance-profile reconciler; a class with `spec.instanceProfile` names
/// it. Then `InstanceProfileReady` is True; an IAM failure fails the
/// reconcile ([`ReconcileError::InstanceProfile`]), the condition left
/// as it was, as upstream leaves it.
///
/// Last, `ValidationSucceeded` is set as upstream's validation sets it
/// ([`Validation`]: its settings and the dry runs' outcomes, kept 30
/// minutes per class and configuration), and `Ready` reckoned over it. A
/// dry run answered neither "allowed" nor "not authorized" (throttling
/// among them) fails the reconcile ([`ReconcileError::Validation`]), the
/// condition left as it was.
#[allow(clippy::too_many_arguments)]
pub async fn reconcile_status(
    ec2: &impl Ec2Api,
    ssm: &impl ParameterApi,
    iam: &dyn IamApi,
    cache: &mut SsmCache,
    profiles: &mut InstanceProfiles,
    validation: &mut Validation,
    class: &EC2NodeClass,
    context: &ResolveContext,
) -> Result<Reconciled, ReconcileError> {
    cache.prune(context.now);
    let profile = profile::ensure(iam, profiles, class, context)
        .await
        .map_err(ReconcileError::InstanceProfile)?;
    let mut resolve_context = context.clone();
    resolve_context.ssm_parameters = read_parameters(ssm, cache, class, context).await?;
    let mut status = resolve_with_profile(ec2, class, &resolve_context, Some(profile))
        .await
        .map_err(ReconcileError::Resolve)?;
    let stamp = Stamp::of(class, context.now);
    let mut conditions = status.conditions.take().unwrap_or_default();
    let cluster = &context.cluster_name;
    validation::validate(
        ec2,
        validation,
        class,
        &status,
        &mut conditions,
        stamp,
        cluster,
    )
    .await
    .map_err(ReconcileError::Validation)?;
    set_ready(&mut conditions, stamp, context.reserved_capacity);
    status.conditions = Some(conditions);
    let changed = class.status.as_ref() != Some(&status);
    let requeue = requeue::requeue(class, &status, context.now, context.reserved_capacity);
    Ok(Reconciled {
        status,
        changed,
        requeue,
    })
}

/// A parameter to read: its name, the field naming it, how long its value
/// is kept.
struct Wanted {
    name: String,
    field: &'static str,
    ttl: SignedDuration,
    /// Whether its value moves to newer images (upstream's `IsMutable`).
    mutable: bool,
}

/// The parameters `class` names: its alias's (none when the alias is
/// refused: the resolution says why), else its `ssmParameter` terms'
/// (those without an `id`, which wins, as in the resolution).
fn wanted(class: &EC2NodeClass, kubernetes_version: &str) -> Vec<Wanted> {
    if let Some(alias) = class.alias() {
        let parameters = alias_parameters(&alias, kubernetes_version).unwrap_or_default();
        // As upstream: an alias at `latest` follows EKS's newest images,
        // and a Windows alias has no version at all.
        let mutable = alias.version == "latest" || alias.family.is_windows();
        return parameters
            .into_iter()
            .map(|parameter| Wanted {
                name: parameter.name,
                field: ALIAS_FIELD,
                ttl: ALIAS_PARAMETER_TTL,
                mutable,
            })
            .collect();
    }
    let non_empty = |field: &Option<String>| field.clone().filter(|value| !value.is_empty());
    class
        .spec
        .ami_selector_terms
        .iter()
        .filter(|term| non_empty(&term.id).is_none())
        .filter_map(|term| non_empty(&term.ssm_parameter))
        .map(|name| Wanted {
            name,
            field: SSM_PARAMETER_FIELD,
            ttl: CUSTOM_PARAMETER_TTL,
            mutable: false,
        })
        .collect()
}

/// The values of the parameters `class` names that SSM has, from `cache`
/// or else from `ssm` (and then kept in `cache`).
async fn read_parameters(
    ssm: &impl ParameterApi,
    cache: &mut SsmCache,
    class: &EC2NodeClass,
    context: &ResolveContext,
) -> Result<BTreeMap<String, String>, ReconcileError> {
    let mut values = BTreeMap::new();
    for wanted in wanted(class, &context.kubernetes_version) {
        if values.contains_key(&wanted.name) {
            continue;
        }
        if let Some(value) = cache.get(&wanted.name, context.now) {
            values.insert(wanted.name, value.to_owned());
            continue;
        }
        match ssm.get_parameter(&wanted.name).await {
            Ok(value) => {
                if wanted.mutable {
                    cache.insert_mutable(&wanted.name, value.clone(), context.now, wanted.ttl);
                } else {
                    cache.insert(&wanted.name, value.clone(), context.now, wanted.ttl);
                }
                values.insert(wanted.name, value);
            }
            Err(error) if is_not_found(&error) => {}
            Err(source) => {
                return Err(ReconcileError::Parameter {
                    field: wanted.field,
                    name: wanted.name,
                    source,
                });
            }
        }
    }
    Ok(values)
}

/// Whether SSM answered that it does not have the parameter.
fn is_not_found(error: &Ec2Error) -> bool {
    matches!(error, Ec2Error::Service { code, .. } if code == PARAMETER_NOT_FOUND)
}

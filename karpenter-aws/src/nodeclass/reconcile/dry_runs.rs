//! The launch calls the validation asks EC2 about, in upstream's order:
//! `CreateLaunchTemplate`, then `CreateFleet` and `RunInstances` with
//! `DryRun=true`; their inputs built as a launch builds them, and the
//! refusal each is read as.
//!
//! As upstream's validation does today, the template is made for real:
//! EC2 checks a dry run's parameters as well as its authorization, so a
//! fleet naming a template that does not exist could be refused for that
//! and never say whether the controller may launch. The template is
//! deleted once the dry runs have answered (a class's deletion finds it by
//! its tags otherwise). `RunInstances` carries the launch data itself, as
//! upstream's does.

use std::collections::BTreeMap;

use karpenter_core::api::fnv1a64;

use crate::ec2::{
    CreateFleetInput, CreateLaunchTemplateInput, DryRunCall, Ec2Api, Ec2Error,
    FleetLaunchTemplateConfig, FleetLaunchTemplateOverrides, LaunchTemplateData, Operation,
    RunInstancesInput, Tag, TagSpecification, TargetCapacityType,
};
use crate::launch::reason_message;
use crate::nodeclass::{AmiFamily, EC2NodeClass, EC2NodeClassStatus};
use crate::provider::template_data::block_device_mappings;

/// `CreateLaunchTemplate` refused.
pub(crate) const CREATE_LAUNCH_TEMPLATE_FAILED: &str = "CreateLaunchTemplateAuthCheckFailed";
/// `CreateFleet` refused.
pub(crate) const CREATE_FLEET_FAILED: &str = "CreateFleetAuthCheckFailed";
/// `RunInstances` refused in every subnet.
pub(crate) const RUN_INSTANCES_FAILED: &str = "RunInstancesAuthCheckFailed";
/// `CreateLaunchTemplate` refused the user data as too large.
pub(crate) const USER_DATA_TOO_LARGE: &str = "UserDataSizeLimitExceeded";

/// `spec.instanceProfile` does not exist.
pub(crate) const INSTANCE_PROFILE_NOT_FOUND: &str = "InstanceProfileNotFound";
/// The code of `RunInstances`' refusal of an unknown instance profile.
const INVALID_PARAMETER_VALUE: &str = "InvalidParameterValue";
/// What its message says then.
const PROFILE_NOT_FOUND: &str = "Invalid IAM Instance Profile name";
/// The code EC2 refuses oversized (or malformed) user data with.
const USER_DATA_MALFORMED: &str = "InvalidUserData.Malformed";
/// What EC2's message says when the user data is too large.
const USER_DATA_LIMIT: &str = "User data is limited to";
/// The code `CreateLaunchTemplate` answers when the name is taken.
const TEMPLATE_EXISTS: &str = "InvalidLaunchTemplateName.AlreadyExistsException";
/// The launch template version launches name.
const LATEST: &str = "$Latest";
/// The instance type asked about for an x86-64 image (upstream's
/// fallback when no NodePool narrows the choice).
const AMD64_TYPE: &str = "m5.large";
/// The instance type asked about for an arm64 image.
const ARM64_TYPE: &str = "m6g.large";
/// Labels whose presence makes an image an accelerated variant.
const ACCELERATOR_LABELS: [&str; 2] = [
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-accelerator-count",
];

/// Why the validation could not finish: an answer to a dry run that was
/// neither "allowed" nor "not authorized". Reconciling again may succeed.
#[derive(Debug, thiserror::Error)]
pub enum ValidationError {
    /// The dry run of `operation` failed.
    #[error("validating ec2:{operation} authorization")]
    DryRun {
        /// The call asked about.
        operation: Operation,
        /// EC2's answer.
        #[source]
        source: Ec2Error,
    },
}

/// A dry run EC2 refused as not authorized: the condition's reason and
/// message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) reason: &'static str,
    pub(crate) message: String,
    /// Whether the refusal is kept for the validation's TTL: not for a
    /// profile that may yet appear.
    pub(crate) kept: bool,
}

/// The three dry runs for `class` with its resolved `status` and launch
/// `tags`: `None` when all are allowed, the first refusal otherwise; an
/// answer that is neither is an error, the condition left to the caller.
pub(crate) async fn dry_runs(
    ec2: &impl Ec2Api,
    class: &EC2NodeClass,
    status: &EC2NodeClassStatus,
    tags: &BTreeMap<String, String>,
) -> Result<Option<Refusal>, ValidationError> {
    let tags: Vec<Tag> = tags.iter().map(|(k, v)| Tag::new(k, v)).collect();
    let template = template_input(class, status, &tags);
    let name = template.launch_template_name.clone();
    let data = template.launch_template_data.clone();
    let instance_type = instance_type(status);
    let subnets: Vec<String> = status
        .subnets
        .as_deref()
        .unwrap_or_default()
        .iter()
        .map(|s| s.id.clone())
        .collect();

    match ec2.create_launch_template(template).await {
        Ok(_) => {}
        // Left by a validation whose clean-up failed: as good as made.
        Err(error) if error.code() == Some(TEMPLATE_EXISTS) => {}
        Err(error) if is_user_data_too_large(&error) => {
            return Ok(Some(refusal(USER_DATA_TOO_LARGE, &error)));
        }
        Err(error) => return refused(CREATE_LAUNCH_TEMPLATE_FAILED, error).map(Some),
    }
    let outcome = launch_dry_runs(ec2, class, &name, &data, instance_type, &subnets, &tags).await;
    if let Err(error) = ec2.delete_launch_template(&name).await
        && !error.is_not_found()
    {
        tracing::debug!(template = name, %error, "deleting the validation's launch template failed");
    }
    outcome
}

/// The `CreateFleet` and `RunInstances` dry runs against template `name`
/// holding `data`.
async fn launch_dry_runs(
    ec2: &impl Ec2Api,
    class: &EC2NodeClass,
    name: &str,
    data: &LaunchTemplateData,
    instance_type: &str,
    subnets: &[String],
    tags: &[Tag],
) -> Result<Option<Refusal>, ValidationError> {
    let fleet = fleet_input(name, instance_type, subnets, tags);
    if let Err(error) = ec2.dry_run(DryRunCall::CreateFleet(Box::new(fleet))).await {
        return refused(CREATE_FLEET_FAILED, error).map(Some);
    }
    // Authorization is not per subnet: one subnet allowed is enough, and
    // the first subnet's answer speaks for all when none is.
    let mut first = None;
    for subnet in subnets {
        let run = RunInstancesInput {
            image_id: data.image_id.clone(),
            instance_type: instance_type.to_owned(),
            iam_instance_profile: data.iam_instance_profile.clone(),
            subnet_id: subnet.clone(),
            security_group_ids: data.security_group_ids.clone(),
            tag_specifications: tagged(&["instance", "volume", "network-interface"], tags),
        };
        match ec2.dry_run(DryRunCall::RunInstances(run)).await {
            Ok(()) => return Ok(None),
            Err(error) => {
                first.get_or_insert(error);
            }
        }
    }
    match first {
        Some(error) if is_profile_not_found(&error) => profile_not_found(class, error),
        Some(error) => refused(RUN_INSTANCES_FAILED, error).map(Some),
        None => Ok(None),
    }
}

/// `error` as the refusal `reason` when EC2 said "not authorized", else
/// the error the validation fails with.
fn refused(reason: &'static str, error: Ec2Error) -> Result<Refusal, ValidationError> {
    if error.is_unauthorized() {
        Ok(refusal(reason, &error))
    } else {
        Err(ValidationError::DryRun {
            operation: error.operation(),
            source: error,
        })
    }
}

/// The refusal `reason` for `error`: upstream's message for the reason,
/// then its reading of EC2's answer.
fn refusal(reason: &'static str, error: &Ec2Error) -> Refusal {
    let (_, detail) = reason_message(&error.to_string());
    Refusal {
        reason,
        message: format!("{}: {detail}", message_of(reason)),
        kept: true,
    }
}

/// Upstream's message for each dry-run reason.
pub(crate) fn message_of(reason: &str) -> &'static str {
    match reason {
        CREATE_FLEET_FAILED => "Controller isn't authorized to call ec2:CreateFleet",
        CREATE_LAUNCH_TEMPLATE_FAILED => {
            "Controller isn't authorized to call ec2:CreateLaunchTemplate"
        }
        RUN_INSTANCES_FAILED => "Controller isn't authorized to call ec2:RunInstances",
        USER_DATA_TOO_LARGE => {
            "ec2:CreateLaunchTemplate rejected the rendered user data as too large"
        }
        _ => "",
    }
}

/// Whether EC2 answered that the instance profile does not exist.
fn is_profile_not_found(error: &Ec2Error) -> bool {
    matches!(error, Ec2Error::Service { code, message, .. }
        if code == INVALID_PARAMETER_VALUE && message.contains(PROFILE_NOT_FOUND))
}

/// An instance profile EC2 does not know: the class's own
/// `spec.instanceProfile` is refused as not found, not kept, since it may
/// be made meanwhile; the profile made from `role` is newly made and not
/// yet seen by EC2, so the validation is retried.
fn profile_not_found(
    class: &EC2NodeClass,
    error: Ec2Error,
) -> Result<Option<Refusal>, ValidationError> {
    match class.spec.instance_profile.as_deref() {
        Some(profile) => Ok(Some(Refusal {
            reason: INSTANCE_PROFILE_NOT_FOUND,
            message: format!("Instance profile {profile:?} not found"),
            kept: false,
        })),
        None => Err(ValidationError::DryRun {
            operation: error.operation(),
            source: error,
        }),
    }
}

/// Whether EC2 refused the template's user data for its size.
fn is_user_data_too_large(error: &Ec2Error) -> bool {
    matches!(error, Ec2Error::Service { code, message, .. }
        if code == USER_DATA_MALFORMED && message.contains(USER_DATA_LIMIT))
}

/// The launch template a launch of `class` asks for, as the provider
/// builds it without a join config: the first standard image, the
/// security groups, the instance profile, the class's volumes, and the
/// launch's tags on the template. Named by a hash over what it carries,
/// as the provider names its templates.
fn template_input(
    class: &EC2NodeClass,
    status: &EC2NodeClassStatus,
    tags: &[Tag],
) -> CreateLaunchTemplateInput {
    let family = class.ami_family().unwrap_or(AmiFamily::Custom);
    let mut input = CreateLaunchTemplateInput {
        launch_template_name: String::new(),
        launch_template_data: LaunchTemplateData {
            image_id: standard_image(status).map(|ami| ami.id.clone()),
            iam_instance_profile: status.instance_profile.clone(),
            security_group_ids: status
                .security_groups
                .as_deref()
                .unwrap_or_default()
                .iter()
                .map(|g| g.id.clone())
                .collect(),
            // A volume the launch cannot render fails the launch itself,
            // which says so; the dry run asks about the rest.
            block_device_mappings: block_device_mappings(class, family).unwrap_or_default(),
            ..LaunchTemplateData::default()
        },
        tag_specifications: tagged(&["launch-template"], tags),
    };
    let hash = fnv1a64(format!("{input:?}").as_bytes());
    input.launch_template_name = format!("karpenter.k8s.aws/{hash:016x}");
    input
}

/// The image a launch of a standard (not accelerated) instance type would
/// use: the first in the status without accelerator requirements, else
/// the first.
fn standard_image(status: &EC2NodeClassStatus) -> Option<&crate::nodeclass::Ami> {
    let amis = status.amis.as_deref().unwrap_or_default();
    let accelerated = |ami: &&crate::nodeclass::Ami| {
        ami.requirements
            .iter()
            .any(|r| ACCELERATOR_LABELS.contains(&r.key.as_str()) && r.operator != "DoesNotExist")
    };
    amis.iter()
        .find(|ami| !accelerated(ami))
        .or_else(|| amis.first())
}

/// The instance type asked about: upstream's fallback of the standard
/// image's architecture.
fn instance_type(status: &EC2NodeClassStatus) -> &'static str {
    let arm = standard_image(status).is_some_and(|ami| {
        ami.requirements.iter().any(|r| {
            r.key == "kubernetes.io/arch"
                && r.operator == "In"
                && r.values.as_deref().unwrap_or_default() == ["arm64"]
        })
    });
    if arm { ARM64_TYPE } else { AMD64_TYPE }
}

/// An on-demand fleet of one instance from template `name`, one override
/// per subnet, tagged as a launch is.
fn fleet_input(
    name: &str,
    instance_type: &str,
    subnets: &[String],
    tags: &[Tag],
) -> CreateFleetInput {
    CreateFleetInput {
        launch_template_configs: vec![FleetLaunchTemplateConfig {
            launch_template_name: name.to_owned(),
            version: LATEST.to_owned(),
            overrides: subnets
                .iter()
                .map(|subnet| FleetLaunchTemplateOverrides {
                    instance_type: instance_type.to_owned(),
                    subnet_id: subnet.clone(),
                    ..FleetLaunchTemplateOverrides::default()
                })
                .collect(),
        }],
        total_target_capacity: 1,
        default_target_capacity_type: TargetCapacityType::OnDemand,
        tag_specifications: tagged(&["instance", "volume", "fleet"], tags),
        ..CreateFleetInput::default()
    }
}

/// `tags` on each of `resources`.
fn tagged(resources: &[&str], tags: &[Tag]) -> Vec<TagSpecification> {
    resources
        .iter()
        .map(|resource| TagSpecification {
            resource_type: (*resource).to_owned(),
            tags: tags.to_vec(),
        })
        .collect()
}

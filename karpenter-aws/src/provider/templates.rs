//! The launch templates a launch names, made in EC2 when it lacks them.

use karpenter_core::api::{NodeClaim, fnv1a64};
use karpenter_core::cloudprovider::CloudProviderError;
use serde::Serialize;

use super::join::{JoinConfig, template_user_data};
use super::template_data::{block_device_mappings, metadata_options, network_interfaces};
use super::{AwsCloudProvider, api_error, lock, node_pool_of};
use crate::ec2::{
    CapacityReservationPreference, CreateLaunchTemplateInput, DescribeLaunchTemplatesInput, Ec2Api,
    LaunchTemplateData, LaunchTemplatePlacement, MarketType, Tag, TagSpecification,
};
use crate::launch::{LaunchTemplate, TemplateReservation, launch_tags};
use crate::nodeclass::{AmiFamily, EC2NodeClass};

/// The code `CreateLaunchTemplate` answers when the name is taken.
const TEMPLATE_EXISTS: &str = "InvalidLaunchTemplateName.AlreadyExistsException";
/// The prefix of every launch template name Karpenter owns.
const TEMPLATE_NAME_PREFIX: &str = "karpenter.k8s.aws";
/// The tag naming the cluster a launch template belongs to.
const TEMPLATE_CLUSTER_TAG: &str = "karpenter.k8s.aws/cluster";

impl<E: Ec2Api> AwsCloudProvider<E> {
    /// What EC2 is asked to make for each of `templates` launching
    /// `claim`, tagged as the launch is, placed by `placement` (the
    /// class's placement group). With a join config each carries
    /// its user data, volumes, metadata options, monitoring and
    /// interfaces. Each is renamed by a hash over all it carries and its
    /// tags, so different contents never share a name and, as upstream's,
    /// a template is one class's and one NodePool's; all are rendered
    /// before any is made.
    ///
    /// # Errors
    ///
    /// A non-retryable [`CloudProviderError::Create`] naming the class
    /// field whose value cannot be rendered.
    pub(super) fn template_inputs(
        &self,
        class: &EC2NodeClass,
        claim: &NodeClaim,
        templates: &mut [LaunchTemplate],
        placement: Option<LaunchTemplatePlacement>,
    ) -> Result<Vec<CreateLaunchTemplateInput>, CloudProviderError> {
        let tags = self.template_tags(class, claim);
        let mut inputs = Vec::with_capacity(templates.len());
        for template in templates.iter_mut() {
            let mut input = self.template_input(template, &tags, class);
            input.launch_template_data.placement.clone_from(&placement);
            if let Some(join) = &self.config.join {
                self.join_parts(
                    join,
                    class,
                    claim,
                    template,
                    &mut input.launch_template_data,
                )?;
            }
            template.name = full_name(&template.name, &input);
            input.launch_template_name.clone_from(&template.name);
            inputs.push(input);
        }
        templates.sort_by(|a, b| a.name.cmp(&b.name));
        inputs.sort_by(|a, b| a.launch_template_name.cmp(&b.launch_template_name));
        Ok(inputs)
    }

    /// Fills what a node joining the cluster needs into `data`.
    fn join_parts(
        &self,
        join: &JoinConfig,
        class: &EC2NodeClass,
        claim: &NodeClaim,
        template: &LaunchTemplate,
        data: &mut LaunchTemplateData,
    ) -> Result<(), CloudProviderError> {
        let family = class.ami_family().unwrap_or(AmiFamily::Custom);
        let cluster = &self.config.cluster_name;
        data.user_data = Some(template_user_data(join, cluster, class, claim, template)?);
        data.block_device_mappings = block_device_mappings(class, family)?;
        data.metadata_options = Some(metadata_options(class, join, &self.config.region));
        data.monitoring_enabled = Some(class.spec.detailed_monitoring.unwrap_or(false));
        // The groups go on the interfaces: EC2 refuses both.
        let groups = std::mem::take(&mut data.security_group_ids);
        data.network_interfaces = network_interfaces(class, join, template, &groups);
        Ok(())
    }

    /// Makes the launch templates of `inputs` EC2 does not have (all of
    /// them when `recreate`); a name another launch took meanwhile is fine.
    pub(super) async fn ensure_templates(
        &self,
        inputs: &[CreateLaunchTemplateInput],
        recreate: bool,
    ) -> Result<(), CloudProviderError> {
        for input in inputs {
            let name = &input.launch_template_name;
            let now = (self.clock)();
            // Used within the TTL: upstream's cache hit, no call to EC2.
            if !recreate && lock(&self.template_uses).renew(name, now) {
                continue;
            }
            if !recreate && self.template_exists(name).await? {
                lock(&self.template_uses).touch(name, now);
                continue;
            }
            match self.api.create_launch_template(input.clone()).await {
                Ok(_) => lock(&self.template_uses).touch(name, now),
                Err(e) if e.code() == Some(TEMPLATE_EXISTS) => {
                    lock(&self.template_uses).touch(name, now);
                }
                Err(e) => {
                    return Err(CloudProviderError::Create {
                        reason: "LaunchTemplateCreationFailed".to_owned(),
                        message: format!("creating launch template {name}"),
                        source: Some(Box::new(e)),
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether EC2 has the launch template `name`.
    async fn template_exists(&self, name: &str) -> Result<bool, CloudProviderError> {
        let input = DescribeLaunchTemplatesInput {
            launch_template_names: vec![name.to_owned()],
            filters: Vec::new(),
        };
        match self.api.describe_launch_templates(input).await {
            Ok(found) => Ok(found
                .launch_templates
                .iter()
                .any(|t| t.launch_template_name == name)),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(api_error("describing launch templates", e)),
        }
    }

    /// What EC2 is asked to make for `template`, tagged `tags`.
    fn template_input(
        &self,
        template: &LaunchTemplate,
        tags: &[Tag],
        class: &EC2NodeClass,
    ) -> CreateLaunchTemplateInput {
        let status = class.status.as_ref();
        let security_group_ids = status
            .and_then(|s| s.security_groups.as_deref())
            .unwrap_or_default()
            .iter()
            .map(|g| g.id.clone())
            .collect();
        CreateLaunchTemplateInput {
            launch_template_name: template.name.clone(),
            launch_template_data: LaunchTemplateData {
                image_id: Some(template.image_id.clone()),
                iam_instance_profile: status.and_then(|s| s.instance_profile.clone()),
                security_group_ids,
                user_data: None,
                tag_specifications: Vec::new(),
                capacity_reservation_id: template.reservation.as_ref().map(|r| r.id.clone()),
                capacity_reservation_preference: Some(reservation_preference(template)),
                market_type: template.reservation.as_ref().and_then(market_type),
                ..LaunchTemplateData::default()
            },
            tag_specifications: vec![TagSpecification {
                resource_type: "launch-template".to_owned(),
                tags: tags.to_vec(),
            }],
        }
    }
}

impl<E> AwsCloudProvider<E> {
    /// A template's tags: the launch's ([`launch_tags`]: the cluster,
    /// class and NodePool tags upstream's IAM policy asks a template to be
    /// created with and launched from) and the cluster tag earlier
    /// templates carried.
    fn template_tags(&self, class: &EC2NodeClass, claim: &NodeClaim) -> Vec<Tag> {
        let cluster = &self.config.cluster_name;
        let mut tags = launch_tags(class, node_pool_of(claim), cluster);
        tags.insert(TEMPLATE_CLUSTER_TAG.to_owned(), cluster.clone());
        tags.iter()
            .map(|(key, value)| Tag::new(key, value))
            .collect()
    }
}

/// Which reservations a launch from `template` may use: only its own for a
/// reserved launch; none otherwise, so that on-demand and spot capacity is
/// never taken from a reservation the provider counts, as upstream's
/// templates say.
fn reservation_preference(template: &LaunchTemplate) -> CapacityReservationPreference {
    if template.reservation.is_some() {
        CapacityReservationPreference::CapacityReservationsOnly
    } else {
        CapacityReservationPreference::None
    }
}

/// The market a reserved launch runs in: a capacity block's or an
/// interruptible reservation's; a plain reservation is on-demand (none).
fn market_type(reservation: &TemplateReservation) -> Option<MarketType> {
    if reservation.reservation_type == "capacity-block" {
        Some(MarketType::CapacityBlock)
    } else if reservation.interruptible {
        Some(MarketType::InterruptibleCapacityReservation)
    } else {
        None
    }
}

/// A template's name: a hash over the name the launch decisions gave it
/// (image, types, reservation, class spec, groups), what joining added and
/// its tags, so that a change of cluster, claim labels or user data makes
/// a new template rather than reusing one that boots the old, and each
/// class and NodePool has its own, as upstream hashes its tags in.
fn full_name(base: &str, input: &CreateLaunchTemplateInput) -> String {
    #[derive(Serialize)]
    struct Hashed<'a> {
        base: &'a str,
        data: &'a LaunchTemplateData,
        tags: &'a [TagSpecification],
    }
    let hashed = Hashed {
        base,
        data: &input.launch_template_data,
        tags: &input.tag_specifications,
    };
    let text = serde_json::to_string(&hashed).unwrap_or_default();
    format!("{TEMPLATE_NAME_PREFIX}/{}", fnv1a64(text.as_bytes()))
}

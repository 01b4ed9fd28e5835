//! The launch templates a launch names, made in EC2 when it lacks them.

use karpenter_core::cloudprovider::CloudProviderError;

use super::{AwsCloudProvider, api_error};
use crate::ec2::{
    CapacityReservationPreference, CreateLaunchTemplateInput, DescribeLaunchTemplatesInput, Ec2Api,
    LaunchTemplateData, MarketType, Tag, TagSpecification,
};
use crate::launch::{LaunchTemplate, TemplateReservation};
use crate::nodeclass::EC2NodeClass;

/// The code `CreateLaunchTemplate` answers when the name is taken.
const TEMPLATE_EXISTS: &str = "InvalidLaunchTemplateName.AlreadyExistsException";
/// The tag naming the cluster a launch template belongs to.
const TEMPLATE_CLUSTER_TAG: &str = "karpenter.k8s.aws/cluster";

impl<E: Ec2Api> AwsCloudProvider<E> {
    /// Makes the launch templates EC2 does not have (all of them when
    /// `recreate`); a name another launch took meanwhile is fine.
    pub(super) async fn ensure_templates(
        &self,
        class: &EC2NodeClass,
        templates: &[LaunchTemplate],
        recreate: bool,
    ) -> Result<(), CloudProviderError> {
        for template in templates {
            if !recreate && self.template_exists(&template.name).await? {
                continue;
            }
            let input = self.template_input(class, template);
            match self.api.create_launch_template(input).await {
                Ok(_) => {}
                Err(e) if e.code() == Some(TEMPLATE_EXISTS) => {}
                Err(e) => {
                    return Err(CloudProviderError::Create {
                        reason: "LaunchTemplateCreationFailed".to_owned(),
                        message: format!("creating launch template {}", template.name),
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

    /// What EC2 is asked to make for `template`.
    fn template_input(
        &self,
        class: &EC2NodeClass,
        template: &LaunchTemplate,
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
            },
            tag_specifications: vec![TagSpecification {
                resource_type: "launch-template".to_owned(),
                tags: vec![Tag::new(TEMPLATE_CLUSTER_TAG, &self.config.cluster_name)],
            }],
        }
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

//! [`SdkIam`]: the instance-profile calls ([`IamApi`]) over `aws-sdk-iam`.
//!
//! IAM is global: the SDK resolves its endpoint from the partition of the
//! clients' region (`iam.amazonaws.com`, signed for `us-east-1`, for the
//! commercial regions; China's and GovCloud's their own), and upstream
//! configures nothing more, so neither does this.

use async_trait::async_trait;
use aws_sdk_iam::types;

use super::error::sdk_error;
use super::pages::every_page;
use crate::ec2::{Ec2Error, Operation, Tag};
use crate::iam::{CreateInstanceProfileInput, IamApi, InstanceProfile, Role};

/// IAM: what [`AwsClients::iam`](super::AwsClients::iam) gives.
#[derive(Clone, Debug)]
pub struct SdkIam {
    pub(super) client: aws_sdk_iam::Client,
    pub(super) max_pages: usize,
}

/// An SDK profile as [`InstanceProfile`].
fn profile(from: &types::InstanceProfile) -> InstanceProfile {
    InstanceProfile {
        instance_profile_name: from.instance_profile_name().to_owned(),
        path: from.path().to_owned(),
        roles: from
            .roles()
            .iter()
            .map(|role| Role {
                role_name: role.role_name().to_owned(),
                path: role.path().to_owned(),
            })
            .collect(),
        tags: from
            .tags()
            .iter()
            .map(|tag| Tag::new(tag.key(), tag.value()))
            .collect(),
    }
}

/// The answer lacked its instance profile: unreadable, so a transport
/// failure as any other unreadable answer.
fn no_profile(operation: Operation) -> Ec2Error {
    Ec2Error::Transport {
        operation,
        source: "the answer has no InstanceProfile".into(),
    }
}

#[async_trait]
impl IamApi for SdkIam {
    async fn get_instance_profile(&self, name: &str) -> Result<InstanceProfile, Ec2Error> {
        let op = Operation::GetInstanceProfile;
        let answer = self
            .client
            .get_instance_profile()
            .instance_profile_name(name)
            .send()
            .await
            .map_err(|e| sdk_error(op, e))?;
        answer
            .instance_profile()
            .map(profile)
            .ok_or_else(|| no_profile(op))
    }

    async fn create_instance_profile(
        &self,
        input: CreateInstanceProfileInput,
    ) -> Result<InstanceProfile, Ec2Error> {
        let op = Operation::CreateInstanceProfile;
        let mut tags = Vec::with_capacity(input.tags.len());
        for tag in &input.tags {
            let built = types::Tag::builder()
                .key(&tag.key)
                .value(&tag.value)
                .build();
            tags.push(built.map_err(|e| Ec2Error::Client {
                operation: op,
                source: Box::new(e),
            })?);
        }
        let answer = self
            .client
            .create_instance_profile()
            .instance_profile_name(input.instance_profile_name)
            .set_path(input.path)
            .set_tags((!tags.is_empty()).then_some(tags))
            .send()
            .await
            .map_err(|e| sdk_error(op, e))?;
        answer
            .instance_profile()
            .map(profile)
            .ok_or_else(|| no_profile(op))
    }

    async fn add_role_to_instance_profile(
        &self,
        profile: &str,
        role: &str,
    ) -> Result<(), Ec2Error> {
        let op = Operation::AddRoleToInstanceProfile;
        self.client
            .add_role_to_instance_profile()
            .instance_profile_name(profile)
            .role_name(role)
            .send()
            .await
            .map(drop)
            .map_err(|e| sdk_error(op, e))
    }

    async fn remove_role_from_instance_profile(
        &self,
        profile: &str,
        role: &str,
    ) -> Result<(), Ec2Error> {
        let op = Operation::RemoveRoleFromInstanceProfile;
        self.client
            .remove_role_from_instance_profile()
            .instance_profile_name(profile)
            .role_name(role)
            .send()
            .await
            .map(drop)
            .map_err(|e| sdk_error(op, e))
    }

    async fn delete_instance_profile(&self, name: &str) -> Result<(), Ec2Error> {
        let op = Operation::DeleteInstanceProfile;
        self.client
            .delete_instance_profile()
            .instance_profile_name(name)
            .send()
            .await
            .map(drop)
            .map_err(|e| sdk_error(op, e))
    }

    async fn list_instance_profiles(
        &self,
        path_prefix: &str,
    ) -> Result<Vec<InstanceProfile>, Ec2Error> {
        let op = Operation::ListInstanceProfiles;
        every_page(op, self.max_pages, |marker| async move {
            let answer = self
                .client
                .list_instance_profiles()
                .path_prefix(path_prefix)
                .set_marker(marker)
                .send()
                .await
                .map_err(|e| sdk_error(op, e))?;
            let next = answer
                .is_truncated()
                .then(|| answer.marker().map(str::to_owned))
                .flatten();
            let page = answer.instance_profiles().iter().map(profile).collect();
            Ok((page, next))
        })
        .await
    }
}

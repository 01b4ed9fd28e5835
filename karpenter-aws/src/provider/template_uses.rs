//! How long the launch templates Karpenter makes are kept, as upstream
//! keeps them: a template lives while launches use it. Each use (a launch
//! naming it, or finding it at start) keeps it for
//! [`LAUNCH_TEMPLATE_TTL`] more; a sweep each minute deletes the ones past
//! that; deleting an `EC2NodeClass` deletes all of its templates.
//!
//! Instances do not need their template once launched, so a template
//! deleted between bursts of launches is only made again by the next one.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

use super::{AwsCloudProvider, lock};
use crate::ec2::{DescribeLaunchTemplatesInput, Ec2Api, Ec2Error, Filter};
use crate::launch::{EKS_CLUSTER_NAME_TAG, NODE_CLASS_TAG};

/// How long a launch template stays after its last use: upstream's cache
/// TTL for launch templates (`DefaultTTL`, one minute), whose eviction
/// deletes the template.
pub const LAUNCH_TEMPLATE_TTL: SignedDuration = SignedDuration::from_secs(60);

/// When each template Karpenter knows of was last used.
#[derive(Debug, Default)]
pub(super) struct TemplateUses {
    last_used: BTreeMap<String, Timestamp>,
}

impl TemplateUses {
    /// Records a use of `name` at `now` if it was used within the TTL,
    /// and says whether it was: a launch then names it without asking EC2
    /// whether it exists, as upstream's cache hit.
    pub(super) fn renew(&mut self, name: &str, now: Timestamp) -> bool {
        let fresh = self
            .last_used
            .get(name)
            .is_some_and(|used| now < expiry(*used));
        if fresh {
            self.touch(name, now);
        }
        fresh
    }

    /// Records a use of `name` at `now`.
    pub(super) fn touch(&mut self, name: &str, now: Timestamp) {
        self.last_used.insert(name.to_owned(), now);
    }

    /// Takes out the templates unused for the TTL, in name order.
    fn take_expired(&mut self, now: Timestamp) -> Vec<String> {
        let expired: Vec<String> = self
            .last_used
            .iter()
            .filter(|(_, used)| now >= expiry(**used))
            .map(|(name, _)| name.clone())
            .collect();
        for name in &expired {
            self.last_used.remove(name);
        }
        expired
    }
}

/// When a template used at `used` expires.
fn expiry(used: Timestamp) -> Timestamp {
    used.saturating_add(LAUNCH_TEMPLATE_TTL)
        .unwrap_or(Timestamp::MAX)
}

/// Why cleaning launch templates up failed. What could be deleted was.
#[derive(Debug, thiserror::Error)]
pub enum TemplateCleanupError {
    /// Listing the templates to delete failed.
    #[error("listing launch templates")]
    List(#[source] Ec2Error),
    /// Deleting some templates failed: the first failure, and how many
    /// others failed too.
    #[error("deleting launch template {name} failed (and {others} more)")]
    Delete {
        /// The first template that could not be deleted.
        name: String,
        /// How many others could not be deleted.
        others: usize,
        /// EC2's failure for `name`.
        #[source]
        source: Ec2Error,
    },
}

impl TemplateCleanupError {
    /// Whether trying again later may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            TemplateCleanupError::List(source) | TemplateCleanupError::Delete { source, .. } => {
                source.is_retryable()
            }
        }
    }
}

impl<E: Ec2Api> AwsCloudProvider<E> {
    /// Adopts the launch templates EC2 has for this cluster (tagged
    /// `eks:eks-cluster-name`), as upstream does when it starts leading:
    /// each is kept for [`LAUNCH_TEMPLATE_TTL`] from now, so those no
    /// launch uses are deleted by the sweeps that follow. Returns how many
    /// were found.
    ///
    /// # Errors
    ///
    /// EC2's failure to list them; nothing is adopted then.
    pub async fn adopt_launch_templates(&self) -> Result<usize, Ec2Error> {
        let found = self
            .api
            .describe_launch_templates(self.cluster_templates(Vec::new()))
            .await?;
        let now = (self.clock)();
        let mut uses = lock(&self.template_uses);
        for template in &found.launch_templates {
            uses.touch(&template.launch_template_name, now);
        }
        Ok(found.launch_templates.len())
    }

    /// Deletes the launch templates no launch used for
    /// [`LAUNCH_TEMPLATE_TTL`] (upstream sweeps each minute). One already
    /// gone counts as deleted; one that failed for a reason that may pass
    /// is kept for the next sweep. Returns the names deleted.
    ///
    /// # Errors
    ///
    /// [`TemplateCleanupError::Delete`] when some could not be deleted;
    /// the others were.
    pub async fn sweep_launch_templates(&self) -> Result<Vec<String>, TemplateCleanupError> {
        let now = (self.clock)();
        let expired = lock(&self.template_uses).take_expired(now);
        let (deleted, failed) = self.delete_templates(expired).await;
        let mut uses = lock(&self.template_uses);
        for (name, error) in &failed {
            if error.is_retryable() {
                // Kept as last used at its expiry, so the next sweep
                // tries again unless a launch uses it meanwhile.
                uses.last_used
                    .entry(name.clone())
                    .or_insert(now.saturating_sub(LAUNCH_TEMPLATE_TTL).unwrap_or(now));
            }
        }
        drop(uses);
        first_failure(failed).map_or(Ok(deleted), Err)
    }

    /// Deletes every launch template of the `EC2NodeClass` named
    /// `class_name` in this cluster (tagged with both), as upstream does
    /// before letting a deleted class go. Returns the names deleted.
    ///
    /// # Errors
    ///
    /// [`TemplateCleanupError::List`] when they cannot be listed;
    /// [`TemplateCleanupError::Delete`] when some could not be deleted.
    pub async fn delete_class_launch_templates(
        &self,
        class_name: &str,
    ) -> Result<Vec<String>, TemplateCleanupError> {
        let by_class = Filter::new(&format!("tag:{NODE_CLASS_TAG}"), [class_name]);
        let found = self
            .api
            .describe_launch_templates(self.cluster_templates(vec![by_class]))
            .await
            .map_err(TemplateCleanupError::List)?;
        let names: Vec<String> = found
            .launch_templates
            .into_iter()
            .map(|t| t.launch_template_name)
            .collect();
        {
            let mut uses = lock(&self.template_uses);
            for name in &names {
                uses.last_used.remove(name);
            }
        }
        let (deleted, failed) = self.delete_templates(names).await;
        first_failure(failed).map_or(Ok(deleted), Err)
    }

    /// The query for this cluster's templates, narrowed by `filters`.
    fn cluster_templates(&self, mut filters: Vec<Filter>) -> DescribeLaunchTemplatesInput {
        let cluster = self.config.cluster_name.as_str();
        filters.insert(
            0,
            Filter::new(&format!("tag:{EKS_CLUSTER_NAME_TAG}"), [cluster]),
        );
        DescribeLaunchTemplatesInput {
            launch_template_names: Vec::new(),
            filters,
        }
    }

    /// Deletes `names` one by one; not found counts as deleted.
    async fn delete_templates(&self, names: Vec<String>) -> (Vec<String>, Vec<(String, Ec2Error)>) {
        let mut deleted = Vec::new();
        let mut failed = Vec::new();
        for name in names {
            match self.api.delete_launch_template(&name).await {
                Ok(_) => deleted.push(name),
                Err(error) if error.is_not_found() => deleted.push(name),
                Err(error) => failed.push((name, error)),
            }
        }
        if !deleted.is_empty() {
            tracing::debug!(count = deleted.len(), "deleted launch templates");
        }
        (deleted, failed)
    }
}

/// The first of `failed` as the error, counting the rest.
fn first_failure(failed: Vec<(String, Ec2Error)>) -> Option<TemplateCleanupError> {
    let others = failed.len().saturating_sub(1);
    let (name, source) = failed.into_iter().next()?;
    Some(TemplateCleanupError::Delete {
        name,
        others,
        source,
    })
}

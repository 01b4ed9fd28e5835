//! The EC2NodeClass controller's periodic passes, each on upstream's
//! 30-minute period: SSM values naming deprecated images dropped, unused
//! instance profiles collected.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use karpenter_aws::EC2NodeClass;
use karpenter_aws::ec2::{Ec2Api, ParameterApi};
use karpenter_aws::iam::{INSTANCE_PROFILE_ANNOTATION, collect_instance_profiles};
use karpenter_aws::nodeclass::reconcile::invalidate_deprecated_images;
use karpenter_core::cluster::Cluster;

use super::{BoxError, ClassController};

impl<E: Ec2Api + 'static, P: ParameterApi + 'static> ClassController<E, P> {
    /// Drops the SSM values of `latest` aliases whose image is now
    /// deprecated, so the next reconcile reads their parameters again
    /// (upstream's SSM invalidation, every 30 minutes).
    pub(super) async fn invalidate_images(&mut self) {
        let ec2 = self.provider.api();
        match invalidate_deprecated_images(ec2, &mut self.cache, Timestamp::now()).await {
            Ok(dropped) if !dropped.is_empty() => {
                tracing::info!(parameters = ?dropped, "dropped SSM values naming deprecated images");
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "checking cached images for deprecation failed"),
        }
    }

    /// One pass of upstream's instance-profile collector: the profiles
    /// Karpenter made for this cluster that no class's status and no
    /// NodeClaim's annotation names, and that were not just made, are
    /// deleted.
    pub(super) async fn collect_profiles(
        &mut self,
        classes: &[Arc<EC2NodeClass>],
    ) -> Result<(), BoxError> {
        let mut in_use: BTreeSet<String> = classes
            .iter()
            .filter_map(|c| c.status.as_ref()?.instance_profile.clone())
            .collect();
        for claim in self.cluster.node_claims().await? {
            let annotations = claim.metadata.annotations.unwrap_or_default();
            if let Some(profile) = annotations.get(INSTANCE_PROFILE_ANNOTATION) {
                in_use.insert(profile.clone());
            }
        }
        let deleted = collect_instance_profiles(
            self.iam.as_ref(),
            &mut self.profiles,
            &self.context.cluster_name,
            &self.context.region,
            &in_use,
            Timestamp::now(),
        )
        .await?;
        if !deleted.is_empty() {
            tracing::info!(profiles = ?deleted, "deleted unused instance profiles");
        }
        Ok(())
    }
}

/// A ticker every `period`, its first tick one period from now.
pub(super) fn every(period: jiff::SignedDuration) -> tokio::time::Interval {
    let period = Duration::from_secs(period.as_secs().unsigned_abs());
    tokio::time::interval_at(tokio::time::Instant::now() + period, period)
}

//! [`invalidate_deprecated_images`]: upstream's SSM invalidation
//! controller, one pass. An alias at `latest` names EKS's newest image
//! through SSM, whose value is kept for 24 hours; when the image kept is
//! deprecated meanwhile, the value is dropped so the next reconcile reads
//! the parameter again and finds the image that replaced it, rather than
//! launching a deprecated one for up to a day.

use jiff::{SignedDuration, Timestamp};

use super::SsmCache;
use crate::ec2::{DescribeImagesInput, Ec2Api, Ec2Error, Filter};

/// How often upstream's invalidation controller runs.
pub const INVALIDATION_PERIOD: SignedDuration = SignedDuration::from_mins(30);

/// Drops from `cache` every value of a moving parameter (kept with
/// [`SsmCache::insert_mutable`]) whose image EC2 says is deprecated at
/// `now`, and answers the parameters dropped, sorted. Values of pinned
/// aliases and of `ssmParameter` terms stay, as upstream keeps them.
///
/// The images are looked up by an `image-id` filter, as upstream's image
/// provider does, so that an image since deleted is simply not found
/// rather than failing the call.
///
/// # Errors
///
/// `DescribeImages`' failure; `cache` is then left as it was.
pub async fn invalidate_deprecated_images(
    ec2: &impl Ec2Api,
    cache: &mut SsmCache,
    now: Timestamp,
) -> Result<Vec<String>, Ec2Error> {
    let by_image = cache.mutable_values(now);
    if by_image.is_empty() {
        return Ok(Vec::new());
    }
    let input = DescribeImagesInput {
        filters: vec![Filter::new("image-id", by_image.keys().cloned())],
        ..DescribeImagesInput::default()
    };
    let found = ec2.describe_images(input).await?;
    let mut dropped: Vec<String> = found
        .images
        .iter()
        .filter(|image| image.deprecation_time.is_some_and(|at| at <= now))
        .filter_map(|image| by_image.get(&image.image_id))
        .flatten()
        .cloned()
        .collect();
    dropped.sort();
    dropped.dedup();
    for name in &dropped {
        cache.remove(name);
    }
    Ok(dropped)
}

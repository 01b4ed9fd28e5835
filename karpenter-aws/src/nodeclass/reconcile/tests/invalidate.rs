//! Upstream's SSM invalidation: a moving alias's value dropped once its
//! image is deprecated, pinned ones and live images kept.

use super::*;
use crate::ec2::{DescribeImagesInput, Ec2Api};
use crate::nodeclass::reconcile::invalidate_deprecated_images;
use crate::nodeclass::resolve::alias_parameters;

/// An EC2 holding `ami-std`, deprecated at `deprecated` if given.
fn images(deprecated: Option<Timestamp>) -> InMemoryEc2 {
    let ec2 = InMemoryEc2::new("us-west-2");
    ec2.add_image(Image {
        image_id: "ami-std".into(),
        name: "al2023-standard".into(),
        architecture: "x86_64".into(),
        state: "available".into(),
        deprecation_time: deprecated,
        ..Image::default()
    });
    ec2
}

#[tokio::test]
async fn a_latest_alias_naming_a_deprecated_image_is_read_again() {
    let counting = Counting::default();
    counting.inner.set(AL2023_X86, "ami-std");
    let mut cache = SsmCache::new();
    let latest = class(json!({}));
    reconcile(&counting, &mut cache, &latest, now())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(counting.calls(AL2023_X86), 1);

    let later = now() + SignedDuration::from_mins(30);
    let live = images(Some(later + SignedDuration::from_hours(1)));
    let dropped = invalidate_deprecated_images(&live, &mut cache, later)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(dropped.is_empty(), "not deprecated yet: {dropped:?}");

    let deprecated = images(Some(later));
    let dropped = invalidate_deprecated_images(&deprecated, &mut cache, later)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dropped, [AL2023_X86]);
    reconcile(&counting, &mut cache, &latest, later)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(counting.calls(AL2023_X86), 2, "read again, not in 24 hours");
}

#[tokio::test]
async fn a_pinned_alias_keeps_its_image_deprecated_or_not() {
    let pinned = class(json!({"amiSelectorTerms": [{"alias": "al2023@v20240625"}]}));
    let alias = pinned.alias().unwrap_or_else(|| panic!("an alias"));
    let parameters = alias_parameters(&alias, "1.31").unwrap_or_else(|e| panic!("{e:?}"));
    let ssm = InMemoryParameters::new();
    for parameter in &parameters {
        ssm.set(&parameter.name, "ami-std");
    }
    let mut cache = SsmCache::new();
    reconcile(&ssm, &mut cache, &pinned, now())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!cache.is_empty());
    let dropped = invalidate_deprecated_images(&images(Some(now())), &mut cache, now())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(dropped.is_empty(), "{dropped:?}");
    assert_eq!(
        cache.get(&parameters[0].name, now()),
        Some("ami-std"),
        "still served"
    );
}

#[tokio::test]
async fn a_failed_lookup_leaves_the_cache_as_it_was() {
    let mut cache = SsmCache::new();
    reconcile(&ssm(), &mut cache, &class(json!({})), now())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let before = cache.clone();
    let ec2 = images(Some(now()));
    ec2.fail_next(
        Operation::DescribeImages,
        Ec2Error::service(Operation::DescribeImages, "UnauthorizedOperation", "no"),
    );
    assert!(
        invalidate_deprecated_images(&ec2, &mut cache, now())
            .await
            .is_err()
    );
    assert_eq!(cache, before);
    // With nothing moving kept, EC2 is not asked at all.
    let mut empty = SsmCache::new();
    ec2.fail_next(
        Operation::DescribeImages,
        Ec2Error::service(Operation::DescribeImages, "UnauthorizedOperation", "no"),
    );
    let dropped = invalidate_deprecated_images(&ec2, &mut empty, now()).await;
    assert_eq!(
        dropped.unwrap_or_else(|e| panic!("{e}")),
        Vec::<String>::new()
    );
    assert!(
        ec2.describe_images(DescribeImagesInput::default())
            .await
            .is_err(),
        "the fault is still pending"
    );
}

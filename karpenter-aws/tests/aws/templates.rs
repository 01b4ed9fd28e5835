//! The launch templates' life: tagged for their cluster, class and pool, reused
//! without asking EC2 while in use, deleted a minute after their last use,
//! adopted at start, and deleted with their class.

use std::collections::BTreeMap;

use jiff::SignedDuration;
use karpenter_aws::ec2::{
    DescribeLaunchTemplatesInput, Ec2Api, Ec2Error, Filter, InMemoryEc2, LaunchTemplate, Operation,
};
use karpenter_aws::{AwsCloudProvider, AwsConfig, InstanceTypeOptions, TemplateCleanupError};
use karpenter_core::cloudprovider::CloudProvider;
use serde_json::json;

use crate::common::{REGION, claim, class, ec2, is_in, provider, ready_status};

/// The launch templates EC2 has.
async fn templates(ec2: &InMemoryEc2) -> Vec<LaunchTemplate> {
    ec2.describe_launch_templates(DescribeLaunchTemplatesInput::default())
        .await
        .expect("templates")
        .launch_templates
}

/// Launches one m5.large claim named `name` of class `class_name`.
async fn launch(provider: &AwsCloudProvider<InMemoryEc2>, name: &str, class_name: &str) {
    let mut wanted = claim(
        name,
        json!([is_in("node.kubernetes.io/instance-type", &["m5.large"])]),
    );
    if let Some(reference) = wanted.spec.node_class_ref.as_mut() {
        class_name.clone_into(&mut reference.name);
    }
    provider.create(&wanted).await.expect("a launch");
}

fn throttled(operation: Operation) -> Ec2Error {
    Ec2Error::Throttling {
        operation,
        code: "RequestLimitExceeded".into(),
        message: "Request limit exceeded.".into(),
    }
}

fn seconds(n: i64) -> SignedDuration {
    SignedDuration::from_secs(n)
}

#[tokio::test]
async fn a_template_is_tagged_with_its_cluster_class_and_pool() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    launch(&provider, "web-1", "default").await;
    let made = templates(&ec2).await;
    assert_eq!(made.len(), 1, "{made:#?}");
    let tags: BTreeMap<&str, &str> = made[0]
        .tags
        .iter()
        .map(|t| (t.key.as_str(), t.value.as_str()))
        .collect();
    assert_eq!(tags.get("eks:eks-cluster-name"), Some(&"demo"));
    assert_eq!(tags.get("karpenter.k8s.aws/ec2nodeclass"), Some(&"default"));
    assert_eq!(tags.get("kubernetes.io/cluster/demo"), Some(&"owned"));
    assert_eq!(tags.get("karpenter.k8s.aws/cluster"), Some(&"demo"));
    // What upstream's IAM policy requires of a template it lets a fleet
    // launch from.
    assert_eq!(tags.get("karpenter.sh/nodepool"), Some(&"default"));
}

#[tokio::test]
async fn each_pool_of_a_class_has_its_own_templates() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    launch(&provider, "web-1", "default").await;
    let mut other_pool = claim(
        "batch-1",
        json!([is_in("node.kubernetes.io/instance-type", &["m5.large"])]),
    );
    other_pool
        .metadata
        .labels
        .get_or_insert_default()
        .insert("karpenter.sh/nodepool".into(), "batch".into());
    provider.create(&other_pool).await.expect("a launch");
    let made = templates(&ec2).await;
    let pools: Vec<&str> = made
        .iter()
        .flat_map(|t| &t.tags)
        .filter(|t| t.key == "karpenter.sh/nodepool")
        .map(|t| t.value.as_str())
        .collect();
    assert_eq!(made.len(), 2, "{made:#?}");
    assert!(
        pools.contains(&"default") && pools.contains(&"batch"),
        "{pools:?}"
    );
}

#[tokio::test]
async fn a_template_used_within_the_minute_is_not_looked_up_again() {
    let ec2 = ec2();
    let (provider, clock) = provider(&ec2);
    launch(&provider, "web-1", "default").await;
    clock.advance(seconds(59));
    // Were the template looked up, this would fail the launch.
    ec2.fail_next(
        Operation::DescribeLaunchTemplates,
        throttled(Operation::DescribeLaunchTemplates),
    );
    launch(&provider, "web-2", "default").await;
    assert_eq!(ec2.instances().len(), 2);
    // The fault is still pending: consumed by the next look-up.
    assert!(
        ec2.describe_launch_templates(DescribeLaunchTemplatesInput::default())
            .await
            .is_err()
    );
}

#[tokio::test]
async fn the_sweep_deletes_templates_a_minute_after_their_last_use() {
    let ec2 = ec2();
    let (provider, clock) = provider(&ec2);
    launch(&provider, "web-1", "default").await;
    clock.advance(seconds(50));
    launch(&provider, "web-2", "default").await;
    clock.advance(seconds(30));
    // 80 s after the first use, 30 s after the last: kept.
    assert_eq!(
        provider.sweep_launch_templates().await.expect("a sweep"),
        Vec::<String>::new()
    );
    assert_eq!(templates(&ec2).await.len(), 1);
    clock.advance(seconds(30));
    let deleted = provider.sweep_launch_templates().await.expect("a sweep");
    assert_eq!(deleted.len(), 1);
    assert!(templates(&ec2).await.is_empty());
    // The next launch makes it again, under the same name.
    launch(&provider, "web-3", "default").await;
    let again = templates(&ec2).await;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].launch_template_name, deleted[0]);
    assert_eq!(ec2.instances().len(), 3);
}

#[tokio::test]
async fn a_sweep_that_fails_tries_again_at_the_next() {
    let ec2 = ec2();
    let (provider, clock) = provider(&ec2);
    launch(&provider, "web-1", "default").await;
    clock.advance(seconds(61));
    ec2.fail_next(
        Operation::DeleteLaunchTemplate,
        throttled(Operation::DeleteLaunchTemplate),
    );
    match provider.sweep_launch_templates().await {
        Err(error @ TemplateCleanupError::Delete { others: 0, .. }) => {
            assert!(error.is_retryable());
        }
        other => panic!("a failed deletion, got {other:?}"),
    }
    assert_eq!(templates(&ec2).await.len(), 1);
    let deleted = provider.sweep_launch_templates().await.expect("a sweep");
    assert_eq!(deleted.len(), 1);
    assert!(templates(&ec2).await.is_empty());
}

#[tokio::test]
async fn templates_found_at_start_are_swept_unless_used() {
    let ec2 = ec2();
    let (first, _clock) = provider(&ec2);
    launch(&first, "web-1", "default").await;
    // Another cluster's provider leaves this cluster's templates alone.
    let config = AwsConfig {
        region: REGION.into(),
        cluster_name: "prod".into(),
        join: None,
    };
    let prod = AwsCloudProvider::new(ec2.clone(), config, InstanceTypeOptions::default())
        .expect("the embedded catalog");
    assert_eq!(prod.adopt_launch_templates().await.expect("adopted"), 0);
    let (restarted, clock) = provider(&ec2);
    assert_eq!(
        restarted.adopt_launch_templates().await.expect("adopted"),
        1
    );
    clock.advance(seconds(59));
    assert!(
        restarted
            .sweep_launch_templates()
            .await
            .expect("a sweep")
            .is_empty()
    );
    clock.advance(seconds(1));
    let deleted = restarted.sweep_launch_templates().await.expect("a sweep");
    assert_eq!(deleted.len(), 1);
    assert!(templates(&ec2).await.is_empty());
}

#[tokio::test]
async fn deleting_a_class_deletes_its_templates_only() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    let mut other = class(ready_status());
    other.metadata.name = Some("other".into());
    provider.apply_node_class(other);
    launch(&provider, "web-1", "default").await;
    launch(&provider, "web-2", "other").await;
    assert_eq!(templates(&ec2).await.len(), 2);
    let deleted = provider
        .delete_class_launch_templates("default")
        .await
        .expect("deleted");
    assert_eq!(deleted.len(), 1);
    let left = templates(&ec2).await;
    assert_eq!(left.len(), 1);
    let by_class = Filter::new("tag:karpenter.k8s.aws/ec2nodeclass", ["other"]);
    let other = ec2
        .describe_launch_templates(DescribeLaunchTemplatesInput {
            launch_template_names: Vec::new(),
            filters: vec![by_class],
        })
        .await
        .expect("the other class's");
    assert_eq!(other.launch_templates, left);
    // Again: nothing left to delete is not a failure.
    let again = provider.delete_class_launch_templates("default").await;
    assert_eq!(again.expect("nothing to delete"), Vec::<String>::new());
}

#[tokio::test]
async fn a_class_whose_templates_cannot_be_listed_says_so() {
    let ec2 = ec2();
    let (provider, _clock) = provider(&ec2);
    ec2.fail_next(
        Operation::DescribeLaunchTemplates,
        throttled(Operation::DescribeLaunchTemplates),
    );
    let error = provider
        .delete_class_launch_templates("default")
        .await
        .expect_err("a listing failure");
    assert!(matches!(error, TemplateCleanupError::List(_)), "{error:?}");
    assert!(error.is_retryable());
}

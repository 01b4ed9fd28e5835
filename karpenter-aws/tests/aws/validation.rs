//! `ValidationSucceeded` over the SDK-backed client and the loopback
//! server: the dry runs reach EC2 as EC2 reads them, allowed or refused.

use jiff::Timestamp;
use karpenter_aws::EC2NodeClass;
use karpenter_aws::ec2::{Ec2Error, InMemoryParameters, Operation, UNAUTHORIZED_OPERATION};
use karpenter_aws::iam::{InMemoryIam, InstanceProfiles};
use karpenter_aws::nodeclass::condition_types as types;
use karpenter_aws::nodeclass::reconcile::{SsmCache, Validation, reconcile_status};
use karpenter_aws::nodeclass::resolve::ResolveContext;
use karpenter_core::api::{ConditionStatus, Conditions};
use serde_json::json;

use crate::common::ec2;
use crate::sdk_conformance::sdk_over;

/// A class naming `ec2`'s subnet, group and x86-64 image by ID.
fn by_ids() -> EC2NodeClass {
    serde_json::from_value(json!({
        "metadata": {"name": "default", "uid": "uid-1", "generation": 1},
        "spec": {
            "amiFamily": "AL2023",
            "amiSelectorTerms": [{"id": "ami-amd64"}],
            "instanceProfile": "KarpenterNodeProfile",
            "subnetSelectorTerms": [{"id": "subnet-a1"}],
            "securityGroupSelectorTerms": [{"id": "sg-1"}],
        },
    }))
    .expect("an EC2NodeClass")
}

/// `ValidationSucceeded`'s status and reason after one reconcile of
/// [`by_ids`] through the SDK, `refused` refused first.
async fn validated(refused: Option<Operation>) -> (ConditionStatus, String) {
    let ec2 = ec2();
    if let Some(operation) = refused {
        let error = Ec2Error::service(operation, UNAUTHORIZED_OPERATION, "not authorized");
        ec2.fail_next(operation, error);
    }
    let (_server, sdk) = sdk_over(&ec2).await;
    let context = ResolveContext {
        cluster_name: "demo".into(),
        region: "us-east-1".into(),
        kubernetes_version: "1.34".into(),
        now: Timestamp::UNIX_EPOCH,
        ..ResolveContext::default()
    };
    let done = reconcile_status(
        &sdk,
        &InMemoryParameters::new(),
        &InMemoryIam::new(),
        &mut SsmCache::new(),
        &mut InstanceProfiles::new(),
        &mut Validation::new(false, true),
        &by_ids(),
        &context,
    )
    .await
    .expect("reconciled");
    assert!(ec2.instances().is_empty(), "a dry run launched nothing");
    let condition = done.status.conditions.find(types::VALIDATION_SUCCEEDED);
    let condition = condition.expect("ValidationSucceeded is set");
    (
        condition.status,
        condition.reason.clone().unwrap_or_default(),
    )
}

#[tokio::test]
async fn a_class_is_valid_through_the_sdk() {
    let (status, _) = validated(None).await;
    assert_eq!(status, ConditionStatus::True);
}

#[tokio::test]
async fn each_refusal_through_the_sdk_names_its_call() {
    for (operation, reason) in [
        (
            Operation::CreateLaunchTemplate,
            "CreateLaunchTemplateAuthCheckFailed",
        ),
        (Operation::CreateFleet, "CreateFleetAuthCheckFailed"),
        (Operation::RunInstances, "RunInstancesAuthCheckFailed"),
    ] {
        let found = validated(Some(operation)).await;
        assert_eq!(found, (ConditionStatus::False, reason.to_owned()));
    }
}

//! The instance profile of a class's `role` over `InMemoryIam`: made with
//! upstream's tags and the role, the role swapped, served from the cache,
//! deleted with the class, IAM's failures classified.

use jiff::SignedDuration;
use karpenter_core::api::ConditionStatus;
use serde_json::json;

use super::{class, condition, context, ec2, iam, now, ssm};
use crate::ec2::{Ec2Error, Operation};
use crate::iam::{
    InMemoryIam, InstanceProfileError, InstanceProfiles, instance_profile_name, is_role_not_found,
};
use crate::nodeclass::EC2NodeClass;
use crate::nodeclass::condition_types as types;
use crate::nodeclass::reconcile::{
    ReconcileError, Reconciled, SsmCache, Validation, delete_instance_profiles, reconcile_status,
};

async fn run(
    iam: &InMemoryIam,
    profiles: &mut InstanceProfiles,
    class: &EC2NodeClass,
    minutes: i64,
) -> Result<Reconciled, ReconcileError> {
    let at = now() + SignedDuration::from_mins(minutes);
    let mut cache = SsmCache::new();
    reconcile_status(
        &ec2(),
        &ssm(),
        iam,
        &mut cache,
        profiles,
        &mut Validation::new(false, true),
        class,
        &context(at),
    )
    .await
}

fn expected_name() -> String {
    instance_profile_name("test-cluster", "us-west-2", "default", "uid-1")
}

#[tokio::test]
async fn a_role_gets_a_profile_with_upstreams_tags_and_the_role() {
    let iam = iam();
    let class = class(json!({"tags": {"team": "a", "eks:eks-cluster-name": "spoofed"}}));
    let mut profiles = InstanceProfiles::new();
    let done = run(&iam, &mut profiles, &class, 0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let name = expected_name();
    assert!(
        profiles.is_protected(&name, now()),
        "kept from the collector"
    );
    assert!(name.starts_with("test-cluster_"), "{name}");
    assert_eq!(done.status.instance_profile.as_deref(), Some(name.as_str()));
    let ready = condition(&done, types::INSTANCE_PROFILE_READY).map(|c| c.0);
    assert_eq!(ready, Some(ConditionStatus::True));
    let profile = iam.profile(&name).unwrap_or_else(|| panic!("no profile"));
    assert_eq!(profile.path, "/karpenter/us-west-2/test-cluster/uid-1/");
    let roles: Vec<&str> = profile.roles.iter().map(|r| r.role_name.as_str()).collect();
    assert_eq!(roles, ["KarpenterNodeRole-test"]);
    let tags: Vec<(&str, &str)> = profile
        .tags
        .iter()
        .map(|t| (t.key.as_str(), t.value.as_str()))
        .collect();
    assert_eq!(
        tags,
        [
            ("eks:eks-cluster-name", "test-cluster"),
            ("karpenter.k8s.aws/ec2nodeclass", "default"),
            ("kubernetes.io/cluster/test-cluster", "owned"),
            ("team", "a"),
            ("topology.kubernetes.io/region", "us-west-2"),
        ]
    );
}

#[tokio::test]
async fn a_changed_role_is_swapped_in_the_same_profile() {
    let iam = iam();
    iam.add_role("NewRole");
    let mut profiles = InstanceProfiles::new();
    let mut class = class(json!({}));
    let done = run(&iam, &mut profiles, &class, 0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    class.status = Some(done.status);
    class.spec.role = Some("/team/NewRole".into());
    let done = run(&iam, &mut profiles, &class, 1)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(done.status.instance_profile, Some(expected_name()));
    let profile = iam
        .profile(&expected_name())
        .unwrap_or_else(|| panic!("gone"));
    let roles: Vec<&str> = profile.roles.iter().map(|r| r.role_name.as_str()).collect();
    assert_eq!(roles, ["NewRole"], "added by name, the old one removed");
    assert_eq!(iam.calls(Operation::RemoveRoleFromInstanceProfile), 1);
    assert_eq!(iam.profiles().len(), 1);
}

#[tokio::test]
async fn the_profile_is_served_from_the_cache_for_15_minutes() {
    let iam = iam();
    let mut profiles = InstanceProfiles::new();
    let mut class = class(json!({}));
    let done = run(&iam, &mut profiles, &class, 0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    class.status = Some(done.status);
    let gets = iam.calls(Operation::GetInstanceProfile);
    run(&iam, &mut profiles, &class, 14)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(iam.calls(Operation::GetInstanceProfile), gets, "cached");
    run(&iam, &mut profiles, &class, 16)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        iam.calls(Operation::GetInstanceProfile),
        gets + 1,
        "expired"
    );
    assert_eq!(iam.calls(Operation::CreateInstanceProfile), 1);
    assert_eq!(iam.calls(Operation::AddRoleToInstanceProfile), 1);
}

#[tokio::test]
async fn a_named_instance_profile_is_taken_without_iam() {
    let iam = InMemoryIam::new();
    let class = class(json!({"role": null, "instanceProfile": "mine"}));
    let done = run(&iam, &mut InstanceProfiles::new(), &class, 0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(done.status.instance_profile.as_deref(), Some("mine"));
    let ready = condition(&done, types::INSTANCE_PROFILE_READY).map(|c| c.0);
    assert_eq!(ready, Some(ConditionStatus::True));
    assert_eq!(iam.calls(Operation::GetInstanceProfile), 0);
}

#[tokio::test]
async fn iam_failures_fail_the_reconcile_classified_by_their_source() {
    let iam = iam();
    let mut profiles = InstanceProfiles::new();
    let class = class(json!({}));
    let throttled = Ec2Error::Throttling {
        operation: Operation::CreateInstanceProfile,
        code: "Throttling".into(),
        message: "Rate exceeded".into(),
    };
    iam.fail_next(Operation::CreateInstanceProfile, throttled);
    let error = run(&iam, &mut profiles, &class, 0).await.err();
    assert!(matches!(
        error,
        Some(ReconcileError::InstanceProfile(
            InstanceProfileError::Create { .. }
        ))
    ));
    assert!(error.is_some_and(|e| e.is_retryable()));

    // A missing role: IAM is not asked again for a minute.
    let missing = super::class(json!({"role": "Missing"}));
    let error = run(&iam, &mut profiles, &missing, 0).await.err();
    let Some(ReconcileError::InstanceProfile(InstanceProfileError::AddRole { source, .. })) =
        &error
    else {
        panic!("{error:?}");
    };
    assert!(is_role_not_found(source));
    let adds = iam.calls(Operation::AddRoleToInstanceProfile);
    let error = run(&iam, &mut profiles, &missing, 0).await.err();
    assert!(matches!(
        error,
        Some(ReconcileError::InstanceProfile(
            InstanceProfileError::RoleNotFound { .. }
        ))
    ));
    assert_eq!(iam.calls(Operation::AddRoleToInstanceProfile), adds);
    run(&iam, &mut profiles, &missing, 2).await.err();
    assert_eq!(iam.calls(Operation::AddRoleToInstanceProfile), adds + 1);

    let denied = Ec2Error::service(Operation::GetInstanceProfile, "AccessDenied", "no");
    iam.fail_next(Operation::GetInstanceProfile, denied);
    let error = run(&iam, &mut InstanceProfiles::new(), &class, 0)
        .await
        .err();
    assert!(error.is_some_and(|e| !e.is_retryable()));
}

#[tokio::test]
async fn deleting_the_class_deletes_its_profiles_and_a_missing_one_is_done() {
    let iam = iam();
    let mut profiles = InstanceProfiles::new();
    let class = class(json!({}));
    run(&iam, &mut profiles, &class, 0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(iam.profiles().len(), 1);
    let delete = delete_instance_profiles(&iam, &mut profiles, &class, "test-cluster", "us-west-2");
    delete.await.unwrap_or_else(|e| panic!("{e}"));
    assert!(iam.profiles().is_empty());
    assert_eq!(iam.calls(Operation::RemoveRoleFromInstanceProfile), 1);
    // Nothing left: the profile and the legacy one are not found, done.
    let again = delete_instance_profiles(&iam, &mut profiles, &class, "test-cluster", "us-west-2");
    again.await.unwrap_or_else(|e| panic!("{e}"));
    let gone = profiles.delete(&iam, &expected_name()).await;
    assert!(gone.is_ok());
}

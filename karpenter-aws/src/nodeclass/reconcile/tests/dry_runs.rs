//! The dry runs' refusals and failures over `InMemoryEc2`: each call's
//! reason and message, the user data limit, an unknown instance profile,
//! throttling, and one subnet allowed out of several.

use serde_json::json;

use super::validation::{checking, condition_of, done, run, unauthorized, validated};
use super::{class, ec2};
use crate::ec2::{Ec2Error, Operation};
use crate::nodeclass::reconcile::ReconcileError;
use karpenter_core::api::ConditionStatus;

#[tokio::test]
async fn each_refused_dry_run_sets_its_reason() {
    let cases = [
        (
            Operation::CreateLaunchTemplate,
            "CreateLaunchTemplateAuthCheckFailed",
            "ec2:CreateLaunchTemplate",
        ),
        (
            Operation::CreateFleet,
            "CreateFleetAuthCheckFailed",
            "ec2:CreateFleet",
        ),
        (
            Operation::RunInstances,
            "RunInstancesAuthCheckFailed",
            "ec2:RunInstances",
        ),
    ];
    for (operation, expected, call) in cases {
        let ec2 = ec2();
        ec2.fail_next(operation, unauthorized(operation));
        let done = done(&ec2, &mut checking(), &class(json!({}))).await;
        let (status, reason, message) = validated(&done);
        assert_eq!(
            (status, reason.as_str()),
            (ConditionStatus::False, expected)
        );
        assert_eq!(
            message,
            format!(
                "Controller isn't authorized to call {call}: User is not authorized to perform this operation because no identity-based policy allows it"
            )
        );
        assert_eq!(condition_of(&done, "Ready").0, ConditionStatus::False);
    }
}

#[tokio::test]
async fn user_data_over_the_limit_is_its_own_reason() {
    let ec2 = ec2();
    let operation = Operation::CreateLaunchTemplate;
    let message = "User data is limited to 16384 bytes";
    ec2.fail_next(
        operation,
        Ec2Error::service(operation, "InvalidUserData.Malformed", message),
    );
    let done = done(&ec2, &mut checking(), &class(json!({}))).await;
    let (status, reason, message) = validated(&done);
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::False, "UserDataSizeLimitExceeded")
    );
    assert!(
        message
            .starts_with("ec2:CreateLaunchTemplate rejected the rendered user data as too large: ")
    );
}

#[tokio::test]
async fn throttling_fails_the_reconcile_and_is_not_kept() {
    let ec2 = ec2();
    let class = class(json!({}));
    let mut validation = checking();
    let op = Operation::CreateFleet;
    let throttled = Ec2Error::Throttling {
        operation: op,
        code: "RequestLimitExceeded".into(),
        message: "Request limit exceeded.".into(),
    };
    ec2.fail_next(op, throttled);
    let error = run(&ec2, &mut validation, &class, 0).await.err();
    let error = error.unwrap_or_else(|| panic!("throttled"));
    assert!(matches!(error, ReconcileError::Validation(_)), "{error}");
    assert!(error.is_retryable());
    assert!(validation.is_empty());
    let again = run(&ec2, &mut validation, &class, 1).await;
    assert_eq!(
        validated(&again.unwrap_or_else(|e| panic!("{e}"))).0,
        ConditionStatus::True
    );
}

#[tokio::test]
async fn an_unknown_instance_profile_of_the_spec_is_not_found_and_not_kept() {
    let ec2 = ec2();
    let class = class(json!({"role": null, "instanceProfile": "missing-profile"}));
    let op = Operation::RunInstances;
    let message = "Value (missing-profile) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name";
    ec2.fail_next(op, Ec2Error::service(op, "InvalidParameterValue", message));
    let mut validation = checking();
    let done = run(&ec2, &mut validation, &class, 0).await;
    let (status, reason, message) = validated(&done.unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(
        (status, reason.as_str()),
        (ConditionStatus::False, "InstanceProfileNotFound")
    );
    assert_eq!(message, "Instance profile \"missing-profile\" not found");
    assert!(validation.is_empty());
    // Once the profile exists, the next reconcile finds the class valid.
    let again = run(&ec2, &mut validation, &class, 1).await;
    assert_eq!(
        validated(&again.unwrap_or_else(|e| panic!("{e}"))).0,
        ConditionStatus::True
    );
}

#[tokio::test]
async fn a_new_role_profile_not_yet_seen_is_retried() {
    let ec2 = ec2();
    let op = Operation::RunInstances;
    let message = "Invalid IAM Instance Profile name";
    ec2.fail_next(op, Ec2Error::service(op, "InvalidParameterValue", message));
    let error = run(&ec2, &mut checking(), &class(json!({})), 0).await.err();
    let error = error.unwrap_or_else(|| panic!("retried"));
    assert!(error.is_retryable(), "{error}");
}

#[tokio::test]
async fn one_subnet_allowed_is_enough_to_run_instances() {
    let ec2 = ec2();
    ec2.add_subnet(crate::ec2::Subnet {
        subnet_id: "subnet-2".into(),
        availability_zone: "us-west-2b".into(),
        available_ip_address_count: 100,
        tags: vec![crate::ec2::Tag::new("discovery", "test")],
        ..crate::ec2::Subnet::default()
    });
    let op = Operation::RunInstances;
    ec2.fail_next(op, unauthorized(op));
    let done = done(&ec2, &mut checking(), &class(json!({}))).await;
    assert_eq!(validated(&done).0, ConditionStatus::True);
}

#[tokio::test]
async fn the_template_asked_about_is_made_then_deleted() {
    use crate::ec2::{DescribeLaunchTemplatesInput, Ec2Api};
    let ec2 = ec2();
    let class = class(json!({}));
    let valid = done(&ec2, &mut checking(), &class).await;
    assert_eq!(validated(&valid).0, ConditionStatus::True);
    let left = ec2
        .describe_launch_templates(DescribeLaunchTemplatesInput::default())
        .await
        .map(|found| found.launch_templates)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(left.is_empty(), "{left:#?}");
    // Its deletion failing is no refusal: the next validation finds the
    // template there and goes on.
    let throttled = Ec2Error::Throttling {
        operation: Operation::DeleteLaunchTemplate,
        code: "RequestLimitExceeded".into(),
        message: "slow down".into(),
    };
    ec2.fail_next(Operation::DeleteLaunchTemplate, throttled);
    let first = done(&ec2, &mut checking(), &class).await;
    assert_eq!(validated(&first).0, ConditionStatus::True);
    let again = done(&ec2, &mut checking(), &class).await;
    assert_eq!(validated(&again).0, ConditionStatus::True);
    let left = ec2
        .describe_launch_templates(DescribeLaunchTemplatesInput::default())
        .await
        .map(|found| found.launch_templates)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(left.is_empty(), "the second one cleaned up: {left:#?}");
}

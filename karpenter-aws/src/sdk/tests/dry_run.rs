//! Dry runs: sent with `DryRun=true`, EC2's `DryRunOperation` read as
//! allowed, `UnauthorizedOperation` kept as the refusal it is.

use wiremock::MockServer;
use wiremock::matchers::body_string_contains;

use super::{clients, ec2_action, ec2_error, fast_limits, received};
use crate::ec2::{
    DRY_RUN_OPERATION, DryRunCall, Ec2Api, Operation, RunInstancesInput, UNAUTHORIZED_OPERATION,
};

/// One call of each kind.
fn calls() -> Vec<(&'static str, DryRunCall)> {
    vec![
        ("CreateFleet", DryRunCall::CreateFleet(Box::default())),
        (
            "RunInstances",
            DryRunCall::RunInstances(RunInstancesInput {
                image_id: Some("ami-1".into()),
                instance_type: "m5.large".into(),
                iam_instance_profile: Some("profile-1".into()),
                subnet_id: "subnet-a".into(),
                security_group_ids: vec!["sg-1".into()],
                tag_specifications: Vec::new(),
            }),
        ),
    ]
}

#[tokio::test]
async fn an_allowed_dry_run_is_ok_and_carries_the_flag() {
    for (action, call) in calls() {
        let server = MockServer::start().await;
        // Only a request with the flag is answered as a dry run.
        ec2_action(action)
            .and(body_string_contains("DryRun=true"))
            .respond_with(ec2_error(
                412,
                DRY_RUN_OPERATION,
                "Request would have succeeded, but DryRun flag is set.",
            ))
            .mount(&server)
            .await;
        let ec2 = clients(&server, fast_limits()).ec2();
        ec2.dry_run(call).await.expect("allowed");
        assert_eq!(received(&server, action).await, 1, "{action}");
    }
}

#[tokio::test]
async fn run_instances_carries_its_launch_data_inline() {
    let server = MockServer::start().await;
    let mut mock = ec2_action("RunInstances");
    for field in [
        "ImageId=ami-1",
        "IamInstanceProfile.Name=profile-1",
        "NetworkInterface.1.SubnetId=subnet-a",
        "NetworkInterface.1.SecurityGroupId.1=sg-1",
        "NetworkInterface.1.DeviceIndex=0",
        "MinCount=1",
        "MaxCount=1",
    ] {
        mock = mock.and(body_string_contains(field));
    }
    mock.respond_with(ec2_error(412, DRY_RUN_OPERATION, "would succeed"))
        .mount(&server)
        .await;
    let run = calls()
        .into_iter()
        .find(|(action, _)| *action == "RunInstances");
    let (_, call) = run.unwrap_or_else(|| panic!("a RunInstances call"));
    let ec2 = clients(&server, fast_limits()).ec2();
    ec2.dry_run(call).await.expect("every field sent");
}

#[tokio::test]
async fn an_unauthorized_dry_run_is_the_refusal_not_retried() {
    for (action, call) in calls() {
        let server = MockServer::start().await;
        ec2_action(action)
            .respond_with(ec2_error(
                403,
                UNAUTHORIZED_OPERATION,
                "You are not authorized to perform this operation.",
            ))
            .mount(&server)
            .await;
        let operation = call.operation();
        let ec2 = clients(&server, fast_limits()).ec2();
        let error = ec2.dry_run(call).await.expect_err("refused");
        assert!(error.is_unauthorized(), "{action}: {error}");
        assert!(!error.is_retryable(), "{action}");
        assert_eq!(error.operation(), operation);
        assert_eq!(received(&server, action).await, 1, "{action}");
    }
    assert_eq!(
        calls().last().map(|(_, c)| c.operation()),
        Some(Operation::RunInstances)
    );
}

//! Failures: throttling retried with backoff, refusals not retried,
//! deadlines, the page cap, and no credential in any error.

use std::error::Error as _;
use std::time::Duration;

use aws_config::{BehaviorVersion, Region, SdkConfig};
use wiremock::MockServer;

use super::{SECRET, clients, ec2_action, ec2_error, ec2_ok, fast_limits, received};
use crate::ec2::{DescribeInput, Ec2Api, Ec2Error, Operation};
use crate::sdk::{AwsClients, ClientLimits, SetupError};

/// Every message in `error`'s chain, and its `Debug` form.
fn all_text(error: &Ec2Error) -> String {
    let mut text = format!("{error:?}");
    let mut source: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = source {
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}

#[tokio::test]
async fn throttling_is_retried_until_an_answer() {
    let server = MockServer::start().await;
    ec2_action("DescribeSubnets")
        .respond_with(ec2_error(
            503,
            "RequestLimitExceeded",
            "Request limit exceeded.",
        ))
        .up_to_n_times(2)
        .with_priority(1)
        .mount(&server)
        .await;
    ec2_action("DescribeSubnets")
        .respond_with(ec2_ok("DescribeSubnets", "<subnetSet/>"))
        .with_priority(2)
        .mount(&server)
        .await;

    let ec2 = clients(&server, fast_limits()).ec2();
    let out = ec2.describe_subnets(DescribeInput::default()).await;
    assert!(out.expect("the third attempt answers").subnets.is_empty());
    assert_eq!(received(&server, "DescribeSubnets").await, 3);
}

#[tokio::test]
async fn throttling_past_the_attempts_is_a_retryable_throttling_error() {
    let server = MockServer::start().await;
    ec2_action("DescribeSubnets")
        .respond_with(ec2_error(
            503,
            "RequestLimitExceeded",
            "Request limit exceeded.",
        ))
        .mount(&server)
        .await;

    let limits = ClientLimits {
        max_attempts: 2,
        ..fast_limits()
    };
    let ec2 = clients(&server, limits).ec2();
    let error = ec2
        .describe_subnets(DescribeInput::default())
        .await
        .expect_err("always throttled");
    assert!(
        matches!(&error, Ec2Error::Throttling { code, .. } if code == "RequestLimitExceeded"),
        "{error:?}"
    );
    assert!(error.is_retryable());
    assert_eq!(error.operation(), Operation::DescribeSubnets);
    assert_eq!(received(&server, "DescribeSubnets").await, 2);
}

#[tokio::test]
async fn a_refusal_keeps_its_code_and_is_not_retried() {
    let server = MockServer::start().await;
    ec2_action("DescribeSubnets")
        .respond_with(ec2_error(
            400,
            "InvalidSubnetID.NotFound",
            "The subnet ID 'subnet-x' does not exist",
        ))
        .mount(&server)
        .await;

    let ec2 = clients(&server, fast_limits()).ec2();
    let input = DescribeInput {
        ids: vec!["subnet-x".into()],
        filters: Vec::new(),
    };
    let error = ec2
        .describe_subnets(input)
        .await
        .expect_err("no such subnet");
    assert_eq!(error.code(), Some("InvalidSubnetID.NotFound"));
    assert!(error.is_not_found());
    assert!(!error.is_retryable());
    assert!(error.to_string().contains("does not exist"), "{error}");
    assert_eq!(received(&server, "DescribeSubnets").await, 1);
}

#[tokio::test]
async fn an_answer_past_the_deadline_is_a_retryable_transport_error() {
    let server = MockServer::start().await;
    ec2_action("DescribeSubnets")
        .respond_with(ec2_ok("DescribeSubnets", "<subnetSet/>").set_delay(Duration::from_secs(30)))
        .mount(&server)
        .await;

    let limits = ClientLimits {
        attempt_timeout: Duration::from_millis(200),
        operation_timeout: Duration::from_millis(500),
        max_attempts: 1,
        ..fast_limits()
    };
    let ec2 = clients(&server, limits).ec2();
    let error = ec2
        .describe_subnets(DescribeInput::default())
        .await
        .expect_err("the server never answers in time");
    assert!(matches!(error, Ec2Error::Transport { .. }), "{error:?}");
    assert!(error.is_retryable());
    assert!(error.source().is_some(), "the SDK's timeout is kept");
}

#[tokio::test]
async fn a_list_longer_than_the_page_cap_fails_rather_than_answer_with_part() {
    let server = MockServer::start().await;
    ec2_action("DescribeSubnets")
        .respond_with(ec2_ok(
            "DescribeSubnets",
            "<subnetSet><item><subnetId>subnet-a</subnetId></item></subnetSet>\
             <nextToken>again</nextToken>",
        ))
        .mount(&server)
        .await;

    let limits = ClientLimits {
        max_pages: 3,
        ..fast_limits()
    };
    let ec2 = clients(&server, limits).ec2();
    let error = ec2
        .describe_subnets(DescribeInput::default())
        .await
        .expect_err("the pages never end");
    assert!(
        matches!(error, Ec2Error::PageLimit { pages: 3, .. }),
        "{error:?}"
    );
    assert!(!error.is_retryable());
    assert_eq!(received(&server, "DescribeSubnets").await, 3);
}

#[tokio::test]
async fn no_error_or_debug_output_shows_the_secret_key() {
    let server = MockServer::start().await;
    ec2_action("DescribeSubnets")
        .respond_with(ec2_error(
            401,
            "AuthFailure",
            "AWS was not able to validate the credentials.",
        ))
        .mount(&server)
        .await;

    let aws = clients(&server, fast_limits());
    let error = aws
        .ec2()
        .describe_subnets(DescribeInput::default())
        .await
        .expect_err("refused");
    assert_eq!(error.code(), Some("AuthFailure"));
    assert!(!all_text(&error).contains(SECRET));
    assert!(!format!("{aws:?}").contains(SECRET));
    assert!(!format!("{:?}", aws.ec2()).contains(SECRET));
    // Nor does the signed request carry it: only the signature does.
    let requests = server.received_requests().await.unwrap_or_default();
    assert!(requests.iter().all(|r| !format!("{r:?}").contains(SECRET)));
}

#[tokio::test]
async fn without_credentials_a_call_is_a_client_error_that_retrying_does_not_fix() {
    let server = MockServer::start().await;
    let config = SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-west-2"))
        .endpoint_url(server.uri())
        .build();
    let aws = AwsClients::from_sdk_config(config, fast_limits()).expect("a region");
    assert!(matches!(
        aws.check_credentials().await,
        Err(SetupError::Credentials { .. })
    ));
    let error = aws
        .ec2()
        .describe_subnets(DescribeInput::default())
        .await
        .expect_err("nothing to sign with");
    assert!(matches!(error, Ec2Error::Client { .. }), "{error:?}");
    assert!(!error.is_retryable());
    assert_eq!(received(&server, "DescribeSubnets").await, 0);
}

#[test]
fn a_configuration_without_a_region_is_refused() {
    let config = SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .build();
    assert!(matches!(
        AwsClients::from_sdk_config(config, ClientLimits::default()),
        Err(SetupError::NoRegion)
    ));
}

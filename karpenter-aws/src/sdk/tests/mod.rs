//! The SDK-backed clients against a loopback server playing AWS: each
//! call's request and answer, errors, throttling, pagination, deadlines.

mod calls;
mod dry_run;
mod errors;
mod iam;
mod resources;
mod services;

use std::time::Duration;

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_sdk_ec2::config::{Credentials, SharedCredentialsProvider};
use wiremock::matchers::{body_string_contains, header, method};
use wiremock::{Mock, MockBuilder, MockServer, ResponseTemplate};

use super::{AwsClients, ClientLimits};

/// The secret key the tests sign with: no error or log may show it.
const SECRET: &str = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY";

/// EC2's XML namespace, as its answers carry it.
const EC2_NS: &str = "http://ec2.amazonaws.com/doc/2016-11-15/";

/// Limits that keep the tests fast: short pauses and deadlines.
fn fast_limits() -> ClientLimits {
    ClientLimits {
        connect_timeout: Duration::from_secs(2),
        attempt_timeout: Duration::from_secs(5),
        operation_timeout: Duration::from_secs(10),
        max_attempts: 3,
        initial_backoff: Duration::from_millis(1),
        max_backoff: Duration::from_millis(5),
        max_pages: 100,
    }
}

/// Clients calling `server` in us-west-2 with static test credentials.
fn clients(server: &MockServer, limits: ClientLimits) -> AwsClients {
    let credentials = Credentials::new("AKIDEXAMPLE", SECRET, None, None, "tests");
    let config = SdkConfig::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-west-2"))
        .endpoint_url(server.uri())
        .credentials_provider(SharedCredentialsProvider::new(credentials))
        .build();
    AwsClients::from_sdk_config(config, limits).expect("the config has a region")
}

/// A mock of the EC2 Query action `action`.
fn ec2_action(action: &str) -> MockBuilder {
    Mock::given(method("POST")).and(body_string_contains(format!("Action={action}&")))
}

/// A mock of the JSON-protocol operation `target` (`AmazonSQS.ReceiveMessage`).
fn json_target(target: &str) -> MockBuilder {
    Mock::given(method("POST")).and(header("x-amz-target", target))
}

/// EC2's answer to `action` with `body` inside its response element.
fn ec2_ok(action: &str, body: &str) -> ResponseTemplate {
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<{action}Response xmlns=\"{EC2_NS}\">\
         <requestId>req-1</requestId>{body}</{action}Response>"
    );
    ResponseTemplate::new(200).set_body_raw(xml, "text/xml;charset=UTF-8")
}

/// EC2's error answer with `code`, at HTTP `status`.
fn ec2_error(status: u16, code: &str, message: &str) -> ResponseTemplate {
    let xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error>\
         <Code>{code}</Code><Message>{message}</Message></Error></Errors>\
         <RequestID>req-1</RequestID></Response>"
    );
    ResponseTemplate::new(status).set_body_raw(xml, "text/xml;charset=UTF-8")
}

/// A JSON-protocol answer.
fn json_ok(body: serde_json::Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.to_string(), "application/x-amz-json-1.1")
}

/// How many requests of EC2 `action` the server received.
async fn received(server: &MockServer, action: &str) -> usize {
    let needle = format!("Action={action}&");
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter(|r| String::from_utf8_lossy(&r.body).contains(&needle))
        .count()
}

//! What the ARM client tells an operator through `tracing`: each retry with
//! why and how long it waits, long-running operations' polls, list pages,
//! and the call that failed in the end; never the bearer token, even when
//! the server echoes it.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use karpenter_azure::arm::{ArmClient, ComputeApi, RetryPolicy, StaticCredential};
use serde_json::json;
use tracing_subscriber::fmt::MakeWriter;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const VM: &str = "/subscriptions/sub-1/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachines/aks-default-1";
const TOKEN: &str = "eyJ0.secret-token";

/// Everything the subscriber writes, kept for the test to read.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("the log").extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("the log")).into_owned()
    }
}

/// Everything logged at debug and above on this thread, until the guard
/// drops.
fn capture() -> (Captured, tracing::subscriber::DefaultGuard) {
    let log = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(log.clone())
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .finish();
    (log, tracing::subscriber::set_default(subscriber))
}

fn client(server: &MockServer) -> ArmClient {
    ArmClient::new(Arc::new(StaticCredential::new(TOKEN)), "sub-1", "mc_rg")
        .with_base_url(server.uri())
        .with_retry(RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(5),
            poll_interval: Duration::from_millis(1),
            max_polls: 3,
        })
}

#[tokio::test]
async fn retries_are_logged_with_their_reasons_and_never_the_token() {
    let (log, _guard) = capture();

    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(VM))
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "0"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    // A server that quotes the request's Authorization header back.
    Mock::given(method("GET"))
        .and(path(VM))
        .respond_with(ResponseTemplate::new(503).set_body_json(json!({
            "error": {"code": "ServiceUnavailable", "message": format!("busy; you sent Bearer {TOKEN}")}
        })))
        .with_priority(2)
        .mount(&server)
        .await;
    let error = client(&server)
        .get_vm("aks-default-1")
        .await
        .expect_err("retries run out");

    let text = log.text();
    assert!(!text.contains(TOKEN), "{text}");
    assert!(!format!("{error:?}").contains(TOKEN), "{error:?}");
    assert!(text.contains("ARM request failed; retrying"), "{text}");
    assert!(text.contains("throttled=true"), "{text}");
    assert!(text.contains("ServiceUnavailable"), "{text}");
    assert!(text.contains("Bearer ***"), "{text}");
    // The call itself, with the error it ended in.
    assert!(text.contains("arm.get"), "{text}");
    assert!(text.contains("gave up after 3 attempts"), "{text}");
}

#[tokio::test]
async fn long_running_operations_log_their_polls() {
    let (log, _guard) = capture();

    let server = MockServer::start().await;
    let status = format!("{}/operations/op-1", server.uri());
    Mock::given(method("DELETE"))
        .and(path(VM))
        .respond_with(
            ResponseTemplate::new(202).insert_header("Azure-AsyncOperation", status.as_str()),
        )
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/operations/op-1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"status": "InProgress"})))
        .mount(&server)
        .await;
    let error = client(&server)
        .delete_vm("aks-default-1")
        .await
        .expect_err("never finishes");
    assert!(
        error
            .to_string()
            .contains("still in progress after 3 polls"),
        "{error}"
    );
    let text = log.text();
    assert_eq!(
        text.matches("long-running operation polled").count(),
        3,
        "{text}"
    );
    assert!(text.contains("state=\"InProgress\""), "{text}");
}

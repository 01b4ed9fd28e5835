//! The ARM client against servers on 127.0.0.1 that misbehave: one that
//! never answers, one that never stops answering, links round in a circle or
//! to another origin, a `Retry-After` of days, an error that echoes the
//! token. Each call is run under a timeout of its own, so that a client that
//! would hang fails the test instead; the limits configured are short.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use karpenter_azure::arm::{
    ArmClient, ArmError, ClientLimits, ComputeApi, RetryPolicy, StaticCredential,
};
use karpenter_core::error::with_causes;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

const TOKEN: &str = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.test-token-body.signature";
const VM: &str = "/subscriptions/sub-1/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachines/aks-default-1";
const VMS: &str =
    "/subscriptions/sub-1/resourceGroups/mc_rg/providers/Microsoft.Compute/virtualMachines";

/// Limits short enough for a test, each test shortening the one it is about.
fn limits() -> ClientLimits {
    ClientLimits {
        connect_timeout: Duration::from_secs(2),
        request_timeout: Duration::from_secs(2),
        operation_deadline: Duration::from_secs(3),
        max_body_bytes: 256 * 1024,
        max_pages: 100,
    }
}

fn client(base: &str, limits: ClientLimits) -> ArmClient {
    ArmClient::new(Arc::new(StaticCredential::new(TOKEN)), "sub-1", "mc_rg")
        .with_base_url(base)
        .with_prices_url(format!("{base}/api/retail/prices"))
        .with_retry(RetryPolicy {
            max_retries: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(20),
            poll_interval: Duration::from_millis(1),
            max_polls: 10,
        })
        .with_limits(limits)
}

/// What `call` returns, failing the test when the client has not returned
/// by itself within 5 s (far past every limit the tests configure).
async fn returns<T>(call: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the client should have given up by itself, not hung")
}

/// A server that hands each connection to `serve`; the count of connections
/// accepted.
async fn raw_server<S, F>(serve: S) -> (String, Arc<AtomicUsize>)
where
    S: Fn(TcpStream) -> F + Send + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let address = listener.local_addr().expect("an address");
    let accepted = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&accepted);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(serve(stream));
        }
    });
    (format!("http://{address}"), accepted)
}

/// Accepts the connection, reads nothing, writes nothing, keeps it open.
async fn silent(stream: TcpStream) {
    let _kept = stream;
    std::future::pending::<()>().await;
}

/// Reads a request's head (a GET has no body); `false` if the client left.
async fn read_head(stream: &mut TcpStream) -> bool {
    let mut head = Vec::new();
    let mut buffer = [0; 1024];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => head.extend_from_slice(&buffer[..n]),
        }
    }
    true
}

#[tokio::test]
async fn a_request_that_gets_no_answer_times_out_and_is_retried() {
    let (base, accepted) = raw_server(silent).await;
    let limits = ClientLimits {
        request_timeout: Duration::from_millis(200),
        ..limits()
    };
    let error = returns(client(&base, limits).get_vm("aks-default-1"))
        .await
        .expect_err("no answer");
    match &error {
        ArmError::GaveUp { attempts: 2, last } => {
            // The timeout is the HTTP client's error, kept as the source.
            assert!(matches!(**last, ArmError::Transport { .. }), "{last:?}");
            let why = with_causes(last.as_ref());
            assert!(why.contains("timed out"), "{why}");
        }
        other => panic!("expected two timed-out attempts, got {other:?}"),
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 2, "one connection a try");
}

#[tokio::test]
async fn an_operation_ends_at_its_deadline_whatever_its_requests_may_take() {
    let (base, _) = raw_server(silent).await;
    let limits = ClientLimits {
        request_timeout: Duration::from_secs(60),
        operation_deadline: Duration::from_millis(300),
        ..limits()
    };
    let error = returns(client(&base, limits).list_vms())
        .await
        .expect_err("no answer");
    assert!(
        matches!(&error, ArmError::Deadline { deadline, .. } if *deadline == Duration::from_millis(300)),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_connection_never_accepted_times_out() {
    // A listener whose queue of connections is full and that never accepts:
    // the kernel drops further SYNs, so a connect hangs until it times out.
    let socket = TcpSocket::new_v4().expect("a socket");
    socket
        .bind("127.0.0.1:0".parse().expect("an address"))
        .expect("bound");
    let listener = socket.listen(0).expect("listening");
    let address = listener.local_addr().expect("an address");
    let mut queued = Vec::new();
    for _ in 0..16 {
        match tokio::time::timeout(Duration::from_millis(200), TcpStream::connect(address)).await {
            Ok(Ok(stream)) => queued.push(stream),
            Ok(Err(error)) => panic!("connect: {error}"),
            Err(_) => break,
        }
    }
    let limits = ClientLimits {
        connect_timeout: Duration::from_millis(200),
        request_timeout: Duration::from_secs(60),
        operation_deadline: Duration::from_secs(60),
        ..limits()
    };
    let error = returns(client(&format!("http://{address}"), limits).get_vm("aks-default-1"))
        .await
        .expect_err("never connected");
    // Not the request's timeout nor the deadline (a minute each): the connect's.
    match &error {
        ArmError::GaveUp { last, .. } => {
            let why = with_causes(last.as_ref());
            assert!(why.to_lowercase().contains("connect"), "{why}")
        }
        other => panic!("expected connects that timed out, got {other:?}"),
    }
    drop(listener);
}

#[tokio::test]
async fn an_endless_body_stops_at_the_size_limit_and_is_not_retried() {
    let (base, accepted) = raw_server(|mut stream: TcpStream| async move {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
        if !read_head(&mut stream).await || stream.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        // 16 KiB a millisecond, until the client hangs up: enough to pass
        // the test's limit at once, not enough to fill the memory of a
        // client that reads on until the test's timeout.
        let chunk = format!("4000\r\n{}\r\n", " ".repeat(0x4000));
        while stream.write_all(chunk.as_bytes()).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    let limits = ClientLimits {
        request_timeout: Duration::from_secs(60),
        operation_deadline: Duration::from_secs(60),
        ..limits()
    };
    let error = returns(client(&base, limits).get_vm("aks-default-1"))
        .await
        .expect_err("too large");
    assert!(
        matches!(&error, ArmError::TooLarge { limit, .. } if *limit == 256 * 1024),
        "{error:?}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "not retried");
}

#[tokio::test]
async fn a_body_announced_past_the_limit_fails_before_it_is_read() {
    // The headers promise a terabyte, and nothing follows.
    let (base, _) = raw_server(|mut stream: TcpStream| async move {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000000000\r\n\r\n";
        if read_head(&mut stream).await && stream.write_all(head.as_bytes()).await.is_ok() {
            silent(stream).await;
        }
    })
    .await;
    let limits = ClientLimits {
        request_timeout: Duration::from_secs(60),
        operation_deadline: Duration::from_secs(60),
        ..limits()
    };
    let error = returns(client(&base, limits).get_vm("aks-default-1"))
        .await
        .expect_err("too large");
    assert!(matches!(&error, ArmError::TooLarge { .. }), "{error:?}");
}

#[tokio::test]
async fn a_next_link_to_its_own_page_is_not_followed_round() {
    let server = MockServer::start().await;
    let same = format!("{}{VMS}?api-version=2024-07-01", server.uri());
    Mock::given(method("GET"))
        .and(path(VMS))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "value": [{"name": "vm-1"}],
            "nextLink": same,
        })))
        .mount(&server)
        .await;
    let error = returns(client(&server.uri(), limits()).list_vms())
        .await
        .expect_err("a cycle");
    assert!(
        matches!(&error, ArmError::Paging { detail, .. } if detail.contains("links back")),
        "{error:?}"
    );
    let requests = server.received_requests().await.expect("recorded");
    assert_eq!(requests.len(), 1);
}

/// Pages that each link to the next, without end, on the server at `.0`.
struct Endless(String);

impl Respond for Endless {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let page: u32 = request
            .url
            .query_pairs()
            .find(|(key, _)| key == "page")
            .and_then(|(_, value)| value.parse().ok())
            .unwrap_or(0);
        let next = format!("{}{VMS}?api-version=2024-07-01&page={}", self.0, page + 1);
        ResponseTemplate::new(200)
            .set_body_json(json!({"value": [{"name": format!("vm-{page}")}], "nextLink": next}))
    }
}

#[tokio::test]
async fn a_list_stops_at_its_page_limit() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(VMS))
        .respond_with(Endless(server.uri()))
        .mount(&server)
        .await;
    let limits = ClientLimits {
        max_pages: 5,
        ..limits()
    };
    let error = returns(client(&server.uri(), limits).list_vms())
        .await
        .expect_err("endless");
    assert!(
        matches!(&error, ArmError::Paging { detail, .. } if detail.contains("more than 5 pages")),
        "{error:?}"
    );
    let requests = server.received_requests().await.expect("recorded");
    assert_eq!(requests.len(), 5);
}

#[tokio::test]
async fn a_retry_after_past_the_deadline_is_not_slept() {
    let server = MockServer::start().await;
    let short = client(&server.uri(), limits());
    // The default policy cuts a wait to a minute (past the deadline too); the
    // test's to 20 ms, which would retry sooner than the server asked.
    for arm in [short.clone().with_retry(RetryPolicy::default()), short] {
        server.reset().await;
        Mock::given(method("GET"))
            .and(path(VM))
            .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "100000"))
            .mount(&server)
            .await;
        let error = returns(arm.get_vm("aks-default-1"))
            .await
            .expect_err("throttled");
        match &error {
            ArmError::Deadline { detail, .. } => assert!(detail.contains("100000s"), "{detail}"),
            other => panic!("expected the deadline, got {other:?}"),
        }
        let requests = server.received_requests().await.expect("recorded");
        assert_eq!(requests.len(), 1, "no retry before the wait asked for");
    }
}

#[tokio::test]
async fn a_poll_asked_for_past_the_deadline_is_not_waited_for() {
    let server = MockServer::start().await;
    let operation = format!("{}/operations/op-1", server.uri());
    Mock::given(method("PUT"))
        .and(path(VM))
        .respond_with(
            ResponseTemplate::new(201)
                .insert_header("Azure-AsyncOperation", operation.as_str())
                .insert_header("Retry-After", "100000"),
        )
        .mount(&server)
        .await;
    let arm = client(&server.uri(), limits()).with_retry(RetryPolicy::default());
    let error = returns(arm.create_vm("aks-default-1", &json!({})))
        .await
        .expect_err("too slow");
    assert!(matches!(&error, ArmError::Deadline { .. }), "{error:?}");
    let requests = server.received_requests().await.expect("recorded");
    assert_eq!(requests.len(), 1, "the operation was not polled");
}

/// A server on another port, which must see no request.
async fn elsewhere() -> MockServer {
    let other = MockServer::start().await;
    Mock::given(wiremock::matchers::any())
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"value": []})))
        .mount(&other)
        .await;
    other
}

async fn untouched(other: &MockServer) {
    let requests = other.received_requests().await.expect("recorded");
    assert!(requests.is_empty(), "{} requests elsewhere", requests.len());
}

#[tokio::test]
async fn a_next_link_to_another_origin_is_not_followed() {
    let server = MockServer::start().await;
    let other = elsewhere().await;
    let port = server.address().port();
    let arm = client(&server.uri(), limits());
    for link in [
        format!("{}{VMS}?page=2", other.uri()),
        // The same host and port, but https: not the same origin either.
        format!("https://127.0.0.1:{port}{VMS}?page=2"),
    ] {
        server.reset().await;
        Mock::given(method("GET"))
            .and(path(VMS))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "value": [{"name": "vm-1"}],
                "nextLink": link,
            })))
            .mount(&server)
            .await;
        let error = returns(arm.list_vms()).await.expect_err("refused");
        assert!(
            matches!(&error, ArmError::UntrustedUrl { url, trusted } if *url == link && *trusted == server.uri()),
            "{error:?}"
        );
        assert_eq!(server.received_requests().await.expect("recorded").len(), 1);
    }
    // Nor is a list that starts elsewhere.
    let error = returns(arm.list(&format!("{}{VMS}", other.uri())))
        .await
        .expect_err("refused");
    assert!(matches!(&error, ArmError::UntrustedUrl { .. }), "{error:?}");
    untouched(&other).await;
}

#[tokio::test]
async fn an_operation_on_another_origin_is_not_polled() {
    let server = MockServer::start().await;
    let other = elsewhere().await;
    let operation = format!("{}/operations/op-1", other.uri());
    Mock::given(method("PUT"))
        .and(path(VM))
        .respond_with(
            ResponseTemplate::new(201).insert_header("Azure-AsyncOperation", operation.as_str()),
        )
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(path(VM))
        .respond_with(ResponseTemplate::new(202).insert_header("Location", operation.as_str()))
        .mount(&server)
        .await;
    let arm = client(&server.uri(), limits());
    let error = returns(arm.create_vm("aks-default-1", &json!({})))
        .await
        .expect_err("refused");
    assert!(
        matches!(&error, ArmError::UntrustedUrl { url, .. } if *url == operation),
        "{error:?}"
    );
    let error = returns(arm.delete_vm("aks-default-1"))
        .await
        .expect_err("refused");
    assert!(
        matches!(&error, ArmError::UntrustedUrl { url, .. } if *url == operation),
        "{error:?}"
    );
    untouched(&other).await;
}

#[tokio::test]
async fn a_prices_page_link_stays_on_the_prices_host() {
    let server = MockServer::start().await;
    let other = elsewhere().await;
    Mock::given(method("GET"))
        .and(path("/api/retail/prices"))
        .and(query_param("api-version", "2023-01-01-preview"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "Items": [],
            "NextPageLink": format!("{}/api/retail/prices?page=2", other.uri()),
        })))
        .mount(&server)
        .await;
    let arm = client(&server.uri(), limits());
    let url = format!(
        "{}/api/retail/prices?api-version=2023-01-01-preview",
        server.uri()
    );
    let error = returns(arm.list(&url)).await.expect_err("refused");
    assert!(matches!(&error, ArmError::UntrustedUrl { .. }), "{error:?}");
    untouched(&other).await;
}

/// An error that quotes the request's `Authorization` header back.
struct Echo(u16);

impl Respond for Echo {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let header = request
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        ResponseTemplate::new(self.0).set_body_json(json!({"error": {
            "code": "InvalidAuthenticationToken",
            "message": format!("The access token is invalid: Authorization: {header}"),
        }}))
    }
}

#[tokio::test]
async fn an_error_that_echoes_the_token_does_not_show_it() {
    let server = MockServer::start().await;
    // Refused outright, and a server error retried until the client gives up.
    for status in [401, 503] {
        server.reset().await;
        Mock::given(method("GET"))
            .and(path(VM))
            .respond_with(Echo(status))
            .mount(&server)
            .await;
        let error = returns(client(&server.uri(), limits()).get_vm("aks-default-1"))
            .await
            .expect_err("refused");
        let shown = format!("{error} {error:?}");
        assert!(shown.contains("Authorization: Bearer ***"), "{shown}");
        assert!(!shown.contains("test-token-body"), "{shown}");
    }
}

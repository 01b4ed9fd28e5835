use std::io::{Read, Write};

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::*;

/// A server on a free loopback port, stopped by sending on the returned
/// channel.
async fn start(readiness: Readiness) -> (SocketAddr, oneshot::Sender<()>, JoinHandle<()>) {
    let metrics = Arc::new(Metrics::new());
    metrics.set_pending_pods(4);
    let addr = SocketAddr::from(([127, 0, 0, 1], 0));
    let server = Server::bind(addr, metrics, readiness).await.unwrap();
    let addr = server.local_addr();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(server.serve(async {
        let _ = stopped.await;
    }));
    (addr, stop, task)
}

/// One raw HTTP/1.1 exchange over a plain socket: the status code, the
/// headers (lowercased names) and the body.
async fn exchange(addr: SocketAddr, method: &str, path: &str) -> (u16, String, String) {
    let request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    let raw = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut raw = String::new();
        stream.read_to_string(&mut raw).unwrap();
        raw
    })
    .await
    .unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

#[tokio::test]
async fn healthz_answers_ok() {
    let (addr, _stop, _task) = start(Readiness::new()).await;
    let (status, _, body) = exchange(addr, "GET", "/healthz").await;
    assert_eq!((status, body.as_str()), (200, "ok\n"));
}

#[tokio::test]
async fn readyz_waits_for_the_flag() {
    let readiness = Readiness::new();
    let (addr, _stop, _task) = start(readiness.clone()).await;
    let (status, _, body) = exchange(addr, "GET", "/readyz").await;
    assert_eq!((status, body.as_str()), (503, "not ready\n"));
    readiness.set_ready();
    let (status, _, body) = exchange(addr, "GET", "/readyz").await;
    assert_eq!((status, body.as_str()), (200, "ok\n"));
}

#[tokio::test]
async fn metrics_are_served_in_the_text_format() {
    let (addr, _stop, _task) = start(Readiness::new()).await;
    let (status, head, body) = exchange(addr, "GET", "/metrics?x=1").await;
    assert_eq!(status, 200);
    assert!(
        head.contains("\r\ncontent-type: text/plain; version=0.0.4; charset=utf-8"),
        "{head}"
    );
    assert!(body.starts_with("# HELP karpenter_build_info "), "{body}");
    assert!(
        body.contains("\nkarpenter_scheduler_queue_depth{controller=\"provisioner\"} 4\n"),
        "{body}"
    );
}

#[tokio::test]
async fn head_has_no_body() {
    let (addr, _stop, _task) = start(Readiness::new()).await;
    let (status, _, body) = exchange(addr, "HEAD", "/healthz").await;
    assert_eq!((status, body.as_str()), (200, ""));
}

#[tokio::test]
async fn other_paths_and_methods_are_refused() {
    let (addr, _stop, _task) = start(Readiness::new()).await;
    let (status, _, _) = exchange(addr, "GET", "/").await;
    assert_eq!(status, 404);
    let (status, _, _) = exchange(addr, "GET", "/metrics/x").await;
    assert_eq!(status, 404);
    let (status, head, _) = exchange(addr, "POST", "/metrics").await;
    assert_eq!(status, 405);
    assert!(head.contains("\r\nallow: get, head"), "{head}");
}

#[tokio::test]
async fn shutdown_stops_the_server() {
    let (_addr, stop, task) = start(Readiness::new()).await;
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn shutdown_closes_idle_keep_alive_connections_at_once() {
    let (addr, stop, task) = start(Readiness::new()).await;
    // A connection that had one answer and stays open.
    let (mut idle, first) = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n");
        stream.write_all(request.as_bytes()).unwrap();
        let mut first = [0; 12];
        stream.read_exact(&mut first).unwrap();
        (stream, first)
    })
    .await
    .unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    stop.send(()).unwrap();
    // Well within the grace period: the idle connection did not hold it up.
    tokio::time::timeout(Duration::from_secs(3), task)
        .await
        .unwrap()
        .unwrap();
    let rest = tokio::task::spawn_blocking(move || {
        let mut rest = Vec::new();
        idle.read_to_end(&mut rest).map(|_| rest)
    })
    .await
    .unwrap()
    .unwrap();
    assert!(rest.ends_with(b"ok\n"), "{rest:?}");
}

#[tokio::test]
async fn a_taken_address_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let Err(error) = Server::bind(addr, Arc::new(Metrics::new()), Readiness::new()).await else {
        panic!("bound {addr} twice");
    };
    assert_eq!(
        error.to_string(),
        format!("cannot listen on {addr} for the metrics and health endpoints")
    );
    assert!(std::error::Error::source(&error).is_some());
}

//! Watches through a real `kube::Client`: kube-runtime's watcher and
//! reflector, resumption after a disconnect, relisting after 410 Expired,
//! bookmarks, selectors and timeouts.

use std::future::Future;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use karpenter_apiserver::{ApiServer, Verb};
use karpenter_core::api::NodeClaim;
use kube::Api;
use kube::api::{Patch, PatchParams, WatchEvent, WatchParams};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher;
use serde_json::json;

fn claim(name: &str) -> NodeClaim {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": { "name": name },
        "spec": {},
    }))
    .unwrap()
}

fn pod(name: &str, app: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": "default", "labels": { "app": app } },
    }))
    .unwrap()
}

/// Waits (up to 5 s) until `check` holds.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting until {what}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(5), future)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// A reflector over NodeClaims running in the background, and its store.
async fn reflect(server: &ApiServer, config: watcher::Config) -> reflector::Store<NodeClaim> {
    let api: Api<NodeClaim> = Api::all(server.client());
    let (reader, writer) = reflector::store();
    let stream = reflector::reflector(writer, watcher(api, config));
    tokio::spawn(stream.for_each(|_| async {}));
    within("the initial list", reader.wait_until_ready())
        .await
        .unwrap();
    reader
}

fn names(store: &reflector::Store<NodeClaim>) -> Vec<String> {
    let mut names: Vec<_> = store
        .state()
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    names
}

fn count(server: &ApiServer, verb: Verb) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.verb == Some(verb) && r.resource.as_deref() == Some("nodeclaims"))
        .count()
}

#[tokio::test]
async fn reflectors_see_adds_updates_and_deletes() {
    let server = ApiServer::start().await.unwrap();
    server.put(&claim("before")).unwrap();
    let store = reflect(&server, watcher::Config::default()).await;
    assert_eq!(names(&store), ["before"]);

    server.put(&claim("added")).unwrap();
    eventually("the add is seen", || names(&store) == ["added", "before"]).await;

    let api: Api<NodeClaim> = Api::all(server.client());
    let patch = json!({ "metadata": { "labels": { "seen": "yes" } } });
    api.patch("added", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let added = ObjectRef::new("added");
    eventually("the update is seen", || {
        store
            .get(&added)
            .is_some_and(|c| c.metadata.labels.is_some())
    })
    .await;

    api.delete("before", &Default::default()).await.unwrap();
    server.remove::<NodeClaim>(None, "added").unwrap();
    eventually("the deletes are seen", || names(&store).is_empty()).await;
}

#[tokio::test]
async fn streaming_lists_end_with_a_bookmark() {
    let server = ApiServer::start().await.unwrap();
    server.put(&claim("a")).unwrap();
    let store = reflect(&server, watcher::Config::default().streaming_lists()).await;
    assert_eq!(names(&store), ["a"]);
    assert_eq!(count(&server, Verb::List), 0);
    server.put(&claim("b")).unwrap();
    eventually("the add is seen", || names(&store) == ["a", "b"]).await;
}

#[tokio::test]
async fn watchers_resume_after_a_disconnect_without_relisting() {
    let server = ApiServer::start().await.unwrap();
    let store = reflect(&server, watcher::Config::default()).await;
    server.put(&claim("a")).unwrap();
    eventually("the first add is seen", || names(&store) == ["a"]).await;

    server.disconnect_watches();
    server.put(&claim("b")).unwrap();
    eventually("the add after the disconnect is seen", || {
        names(&store) == ["a", "b"]
    })
    .await;
    assert_eq!(
        count(&server, Verb::List),
        1,
        "resumed from its resourceVersion"
    );
    assert!(count(&server, Verb::Watch) >= 2);
}

#[tokio::test]
async fn watchers_relist_after_410_expired() {
    let server = ApiServer::start().await.unwrap();
    server.put(&claim("a")).unwrap();
    let store = reflect(&server, watcher::Config::default()).await;
    let stale = server.resource_version();

    server.compact();
    server.remove::<NodeClaim>(None, "a").unwrap();
    server.put(&claim("b")).unwrap();
    eventually("the relisted state is seen", || names(&store) == ["b"]).await;
    assert_eq!(count(&server, Verb::List), 2, "relisted once");
    let successful = server.requests().iter().filter(|r| r.status == 200).count();
    assert_eq!(successful, server.requests().len());

    // Resuming from before the compaction: an ERROR event with 410 Expired.
    let api: Api<NodeClaim> = Api::all(server.client());
    let mut events = api
        .watch(&WatchParams::default(), &stale.to_string())
        .await
        .unwrap()
        .boxed();
    match within("the error event", events.try_next()).await.unwrap() {
        Some(WatchEvent::Error(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
        }
        other => panic!("expected 410 Expired, got {other:?}"),
    }
    assert!(
        within("the end of the stream", events.try_next())
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn small_histories_expire_lagging_watches() {
    let server = ApiServer::builder().history_limit(2).start().await.unwrap();
    let api: Api<NodeClaim> = Api::all(server.client());
    let start = server.resource_version().to_string();
    for name in ["a", "b", "c"] {
        server.put(&claim(name)).unwrap();
    }
    let mut events = api
        .watch(&WatchParams::default(), &start)
        .await
        .unwrap()
        .boxed();
    let first = within("the error event", events.try_next()).await.unwrap();
    assert!(matches!(first, Some(WatchEvent::Error(status)) if status.code == 410));
}

#[tokio::test]
async fn bookmarks_and_timeouts() {
    let server = ApiServer::builder()
        .bookmark_interval(Duration::from_millis(20))
        .start()
        .await
        .unwrap();
    let api: Api<NodeClaim> = Api::all(server.client());
    server.put(&claim("a")).unwrap();
    let rv = server.resource_version().to_string();
    let params = WatchParams {
        bookmarks: true,
        ..WatchParams::default()
    }
    .timeout(1);
    let mut events = api.watch(&params, &rv).await.unwrap().boxed();
    server.put(&claim("b")).unwrap();
    match within("the add", events.try_next()).await.unwrap() {
        Some(WatchEvent::Added(claim)) => assert_eq!(claim.metadata.name.as_deref(), Some("b")),
        other => panic!("expected an ADDED event, got {other:?}"),
    }
    match within("a bookmark", events.try_next()).await.unwrap() {
        Some(WatchEvent::Bookmark(bookmark)) => {
            assert_eq!(
                bookmark.metadata.resource_version,
                server.resource_version().to_string()
            );
        }
        other => panic!("expected a bookmark, got {other:?}"),
    }
    // The stream ends once timeoutSeconds has passed.
    let rest: Vec<_> = within("the timeout", events.try_collect::<Vec<_>>())
        .await
        .unwrap();
    assert!(rest.iter().all(|e| matches!(e, WatchEvent::Bookmark(_))));
}

#[tokio::test]
async fn watches_follow_selectors_and_namespaces() {
    let server = ApiServer::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    server.put(&pod("web-1", "web")).unwrap();
    server.put(&pod("db-1", "db")).unwrap();
    let mut other = pod("web-2", "web");
    other.metadata.namespace = Some("other".into());
    server.put(&other).unwrap();

    // From "0": the current objects first, as ADDED events.
    let params = WatchParams::default().labels("app=web");
    let mut events = pods.watch(&params, "0").await.unwrap().boxed();
    let name = |event: Option<WatchEvent<Pod>>| match event {
        Some(WatchEvent::Added(p)) => format!("ADDED {}", p.metadata.name.unwrap()),
        Some(WatchEvent::Modified(p)) => format!("MODIFIED {}", p.metadata.name.unwrap()),
        Some(WatchEvent::Deleted(p)) => format!("DELETED {}", p.metadata.name.unwrap()),
        other => format!("{other:?}"),
    };
    assert_eq!(
        name(within("an event", events.try_next()).await.unwrap()),
        "ADDED web-1"
    );

    // Leaving the selection reads as DELETED, entering it as ADDED.
    let relabel = |app: &str| Patch::Merge(json!({ "metadata": { "labels": { "app": app } } }));
    pods.patch("web-1", &PatchParams::default(), &relabel("db"))
        .await
        .unwrap();
    pods.patch("db-1", &PatchParams::default(), &relabel("web"))
        .await
        .unwrap();
    pods.patch(
        "db-1",
        &PatchParams::default(),
        &Patch::Merge(json!({ "spec": { "nodeName": "n" } })),
    )
    .await
    .unwrap();
    for expected in ["DELETED web-1", "ADDED db-1", "MODIFIED db-1"] {
        assert_eq!(
            name(within("an event", events.try_next()).await.unwrap()),
            expected
        );
    }

    // The all-namespaces watch sees every namespace.
    let all: Api<Pod> = Api::all(server.client());
    let mut events = all
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(name(within("an event", events.try_next()).await.unwrap()));
    }
    assert_eq!(seen, ["ADDED db-1", "ADDED web-1", "ADDED web-2"]);
}

#[tokio::test]
async fn shutdown_ends_watches() {
    let server = ApiServer::start().await.unwrap();
    let api: Api<NodeClaim> = Api::all(server.client());
    let mut events = api
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    server.shutdown();
    let end = within("the end of the stream", events.try_next()).await;
    assert!(matches!(end, Ok(None) | Err(_)));
    assert!(api.list(&Default::default()).await.is_err());
}

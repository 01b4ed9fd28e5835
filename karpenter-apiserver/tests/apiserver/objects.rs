//! Reads and writes through a real `kube::Client`: create, get, list,
//! replace, patches, the status subresource, deletion with finalizers,
//! evictions, Leases, faults, the request log, and the kinds
//! CapacityBuffers refer to.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod, PodTemplate};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use karpenter_apiserver::{ApiServer, Fault, Verb};
use karpenter_core::api::{CapacityBuffer, NodeClaim};
use kube::api::{DeleteParams, EvictParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Error};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn node(name: &str) -> Node {
    serde_json::from_value(json!({ "metadata": { "name": name, "labels": { "pool": "a" } } }))
        .unwrap()
}

fn claim(name: &str) -> NodeClaim {
    serde_json::from_value(json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": { "name": name },
        "spec": { "nodeClassRef": { "group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default" } },
        "status": { "providerID": "azure:///x" },
    }))
    .unwrap()
}

fn pod(name: &str, app: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": { "name": name, "namespace": "default", "labels": { "app": app } },
        "spec": { "containers": [{ "name": "c", "image": "i" }], "nodeName": "node-a" },
        "status": { "phase": "Running", "conditions": [{ "type": "Ready", "status": "True" }] },
    }))
    .unwrap()
}

/// A client that sees 429 answers at once (kube retries them by default).
fn no_retry_client(server: &ApiServer) -> kube::Client {
    let mut config = server.config();
    config.default_retry = false;
    kube::Client::try_from(config).unwrap()
}

fn code(error: Error) -> (u16, String) {
    match error {
        Error::Api(status) => (status.code, status.reason),
        other => panic!("not an API error: {other:?}"),
    }
}

#[tokio::test]
async fn create_get_list_and_replace_with_conflicts() {
    let server = ApiServer::start().await.unwrap();
    let nodes: Api<Node> = Api::all(server.client());
    let pp = PostParams {
        field_manager: Some("tests".into()),
        ..PostParams::default()
    };
    let created = nodes.create(&pp, &node("node-a")).await.unwrap();
    let meta = &created.metadata;
    assert_eq!(meta.generation, Some(1));
    assert!(meta.uid.is_some() && meta.creation_timestamp.is_some());
    assert_eq!(
        code(nodes.create(&pp, &node("node-a")).await.unwrap_err()),
        (409, "AlreadyExists".into())
    );
    assert_eq!(
        code(nodes.get("nope").await.unwrap_err()),
        (404, "NotFound".into())
    );
    assert!(nodes.get_opt("nope").await.unwrap().is_none());

    nodes.create(&pp, &node("node-b")).await.unwrap();
    let mut other = node("node-c");
    other.metadata.labels = None;
    nodes.create(&pp, &other).await.unwrap();
    let list = nodes
        .list(&ListParams::default().labels("pool=a"))
        .await
        .unwrap();
    let names: Vec<_> = list
        .items
        .iter()
        .map(|n| n.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["node-a", "node-b"]);
    assert_eq!(
        list.metadata.resource_version,
        Some(server.resource_version().to_string())
    );
    let by_name = nodes
        .list(&ListParams::default().fields("metadata.name=node-c"))
        .await
        .unwrap();
    assert_eq!(by_name.items.len(), 1);

    // A replace with the current resourceVersion succeeds and bumps the
    // generation when the spec changes; the stale one conflicts.
    let mut changed = created.clone();
    changed.spec = Some(serde_json::from_value(json!({ "unschedulable": true })).unwrap());
    let replaced = nodes.replace("node-a", &pp, &changed).await.unwrap();
    assert_eq!(replaced.metadata.generation, Some(2));
    assert_ne!(
        replaced.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(
        code(nodes.replace("node-a", &pp, &changed).await.unwrap_err()),
        (409, "Conflict".into())
    );
    // A replace without a resourceVersion is unconditional; a no-op keeps it.
    let mut unconditional = replaced.clone();
    unconditional.metadata.resource_version = None;
    let same = nodes.replace("node-a", &pp, &unconditional).await.unwrap();
    assert_eq!(
        same.metadata.resource_version,
        replaced.metadata.resource_version
    );
    assert_eq!(
        code(
            nodes
                .replace("missing", &pp, &node("missing"))
                .await
                .unwrap_err()
        )
        .0,
        404
    );

    let typed: Node = server.get(None, "node-a").unwrap();
    assert_eq!(typed.metadata.generation, Some(2));
    assert_eq!(server.list::<Node>().len(), 3);
}

#[tokio::test]
async fn status_subresource_and_patches() {
    let server = ApiServer::start().await.unwrap();
    let claims: Api<NodeClaim> = Api::all(server.client());
    let created = status_is_written_apart(&claims).await;
    json_patches_test_before_they_change(&claims).await;
    stale_merge_patches_conflict(&claims, &created).await;
    server_side_apply_creates_then_merges(&claims).await;
    patches_are_logged_with_their_content_type(&server);
}

/// A create drops the status; the main resource and `/status` each change
/// only their own part. Returns the claim as created.
async fn status_is_written_apart(claims: &Api<NodeClaim>) -> NodeClaim {
    let pp = PostParams::default();
    // A create drops the status of a kind with a status subresource.
    let created = claims.create(&pp, &claim("c1")).await.unwrap();
    assert!(created.status.is_none());

    // The main resource ignores .status, /status ignores everything else.
    let patch = json!({ "metadata": { "labels": { "x": "1" } }, "status": { "providerID": "p1" } });
    let patched = claims
        .patch("c1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(patched.metadata.labels.unwrap()["x"], "1");
    assert!(patched.status.is_none());
    assert_eq!(patched.metadata.generation, Some(1));
    let patched = claims
        .patch_status("c1", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    assert_eq!(
        patched.status.as_ref().unwrap().provider_id.as_deref(),
        Some("p1")
    );

    let mut replaced = patched.clone();
    replaced.status.as_mut().unwrap().provider_id = Some("p2".into());
    replaced.metadata.labels = None;
    let replaced = claims.replace_status("c1", &pp, &replaced).await.unwrap();
    assert_eq!(
        replaced.status.as_ref().unwrap().provider_id.as_deref(),
        Some("p2")
    );
    assert!(
        replaced.metadata.labels.is_some(),
        "/status keeps the metadata"
    );
    created
}

/// A JSON patch applies when its test holds, and is refused when it fails.
async fn json_patches_test_before_they_change(claims: &Api<NodeClaim>) {
    // JSON patch with a test, on the main resource and on status.
    let json_patch: json_patch::Patch = serde_json::from_value(json!([
        { "op": "test", "path": "/metadata/labels/x", "value": "1" },
        { "op": "add", "path": "/metadata/finalizers", "value": ["karpenter.sh/termination"] },
    ]))
    .unwrap();
    let patched = claims
        .patch(
            "c1",
            &PatchParams::default(),
            &Patch::<()>::Json(json_patch),
        )
        .await
        .unwrap();
    assert_eq!(
        patched.metadata.finalizers.as_deref(),
        Some(&["karpenter.sh/termination".to_owned()][..])
    );
    let failing: json_patch::Patch = serde_json::from_value(json!([
        { "op": "test", "path": "/metadata/labels/x", "value": "2" },
    ]))
    .unwrap();
    let error = claims
        .patch("c1", &PatchParams::default(), &Patch::<()>::Json(failing))
        .await
        .unwrap_err();
    assert_eq!(code(error), (422, "Invalid".into()));
}

/// A merge patch carrying a stale resourceVersion is refused.
async fn stale_merge_patches_conflict(claims: &Api<NodeClaim>, created: &NodeClaim) {
    let stale = json!({ "metadata": { "resourceVersion": created.metadata.resource_version } });
    let error = claims
        .patch("c1", &PatchParams::default(), &Patch::Merge(&stale))
        .await
        .unwrap_err();
    assert_eq!(code(error), (409, "Conflict".into()));
}

/// Server-side apply creates, then merges; it needs a field manager.
async fn server_side_apply_creates_then_merges(claims: &Api<NodeClaim>) {
    let apply = PatchParams::apply("karpenter").force();
    let body = json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "metadata": { "name": "c2", "labels": { "a": "b" } }, "spec": {},
    });
    let applied = claims
        .patch("c2", &apply, &Patch::Apply(&body))
        .await
        .unwrap();
    assert_eq!(applied.metadata.labels.unwrap()["a"], "b");
    let status = json!({
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
        "status": { "nodeName": "node-x" },
    });
    let applied = claims
        .patch_status("c2", &apply, &Patch::Apply(&status))
        .await
        .unwrap();
    assert_eq!(applied.status.unwrap().node_name.as_deref(), Some("node-x"));
    let error = claims
        .patch("c2", &PatchParams::default(), &Patch::Apply(&body))
        .await
        .unwrap_err();
    assert_eq!(code(error).0, 400);
}

/// The request log records each patch's content type and field manager.
fn patches_are_logged_with_their_content_type(server: &ApiServer) {
    let patches: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH" && r.status == 200)
        .map(|r| (r.content_type.unwrap(), r.field_manager))
        .collect();
    assert!(patches.contains(&(
        "application/apply-patch+yaml".into(),
        Some("karpenter".into())
    )));
    assert!(
        patches
            .iter()
            .any(|(ct, _)| ct == "application/json-patch+json")
    );
}

#[tokio::test]
async fn deletion_waits_for_finalizers() {
    let server = ApiServer::start().await.unwrap();
    let claims: Api<NodeClaim> = Api::all(server.client());
    let mut held = claim("held");
    held.metadata.finalizers = Some(vec!["karpenter.sh/termination".into()]);
    let created = claims.create(&PostParams::default(), &held).await.unwrap();

    let wrong_uid = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: Some("other".into()),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    assert_eq!(
        code(claims.delete("held", &wrong_uid).await.unwrap_err()).0,
        409
    );

    let deleted = claims
        .delete("held", &DeleteParams::default())
        .await
        .unwrap();
    let marked = deleted
        .left()
        .expect("an object held by finalizers comes back");
    assert!(marked.metadata.deletion_timestamp.is_some());
    // Adding a finalizer to an object being deleted is refused.
    let add = json!({ "metadata": { "finalizers": ["karpenter.sh/termination", "other"] } });
    let error = claims
        .patch("held", &PatchParams::default(), &Patch::Merge(&add))
        .await
        .unwrap_err();
    assert_eq!(code(error).0, 422);
    // Removing the last finalizer removes the object.
    let remove = json!({ "metadata": { "finalizers": null } });
    claims
        .patch("held", &PatchParams::default(), &Patch::Merge(&remove))
        .await
        .unwrap();
    assert!(claims.get_opt("held").await.unwrap().is_none());
    assert!(server.get::<NodeClaim>(None, "held").is_none());

    let free = claims
        .create(&PostParams::default(), &claim("free"))
        .await
        .unwrap();
    let status = claims
        .delete("free", &DeleteParams::default())
        .await
        .unwrap()
        .right()
        .unwrap();
    assert!(status.is_success());
    assert_eq!(status.details.unwrap().uid, free.metadata.uid.unwrap());
    assert_eq!(
        code(
            claims
                .delete("free", &DeleteParams::default())
                .await
                .unwrap_err()
        )
        .0,
        404
    );
    assert_ne!(created.metadata.uid, None);
}

#[tokio::test]
async fn evictions_respect_disruption_budgets() {
    let server = ApiServer::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(no_retry_client(&server), "default");
    for (name, app) in [("web-1", "web"), ("web-2", "web"), ("db-1", "db")] {
        server.put(&pod(name, app)).unwrap();
    }
    let budget = |name: &str, app: &str, allowed: i32| -> PodDisruptionBudget {
        serde_json::from_value(json!({
            "metadata": { "name": name, "namespace": "default" },
            "spec": { "selector": { "matchLabels": { "app": app } }, "maxUnavailable": 1 },
            "status": { "disruptionsAllowed": allowed, "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2 },
        }))
        .unwrap()
    };
    server.put(&budget("web", "web", 1)).unwrap();
    server.put(&budget("db", "db", 0)).unwrap();

    let status = pods.evict("web-1", &EvictParams::default()).await.unwrap();
    assert!(status.is_success());
    assert!(server.get::<Pod>(Some("default"), "web-1").is_none());
    let web: PodDisruptionBudget = server.get(Some("default"), "web").unwrap();
    assert_eq!(web.status.unwrap().disruptions_allowed, Some(0));

    // The budget is used up now: the second web pod stays, as does the db pod.
    for name in ["web-2", "db-1"] {
        match pods.evict(name, &EvictParams::default()).await.unwrap_err() {
            Error::Api(status) => {
                assert_eq!(
                    (status.code, status.reason.as_str()),
                    (429, "TooManyRequests")
                );
                assert_eq!(status.details.unwrap().causes[0].reason, "DisruptionBudget");
            }
            other => panic!("{other:?}"),
        }
        assert!(server.get::<Pod>(Some("default"), name).is_some());
    }
    assert_eq!(
        code(
            pods.evict("gone", &EvictParams::default())
                .await
                .unwrap_err()
        )
        .0,
        404
    );
    assert!(
        server
            .verbs_used()
            .contains(&("".into(), "pods/eviction".into(), "create".into()))
    );
}

#[tokio::test]
async fn leases_conflict_on_stale_replace() {
    let server = ApiServer::start().await.unwrap();
    let leases: Api<Lease> = Api::namespaced(server.client(), "kube-system");
    let lease: Lease = serde_json::from_value(json!({
        "metadata": { "name": "karpenter-leader-election" },
        "spec": { "holderIdentity": "a", "leaseDurationSeconds": 15 },
    }))
    .unwrap();
    let created = leases.create(&PostParams::default(), &lease).await.unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some("kube-system"));
    let mut mine = created.clone();
    mine.spec.as_mut().unwrap().holder_identity = Some("b".into());
    leases
        .replace("karpenter-leader-election", &PostParams::default(), &mine)
        .await
        .unwrap();
    let mut theirs = created;
    theirs.spec.as_mut().unwrap().holder_identity = Some("c".into());
    let error = leases
        .replace("karpenter-leader-election", &PostParams::default(), &theirs)
        .await
        .unwrap_err();
    assert_eq!(code(error), (409, "Conflict".into()));
    let held = leases.get("karpenter-leader-election").await.unwrap();
    assert_eq!(held.spec.unwrap().holder_identity.as_deref(), Some("b"));
}

#[tokio::test]
async fn faults_and_the_request_log() {
    let server = ApiServer::start().await.unwrap();
    let nodes: Api<Node> = Api::all(server.client());
    server.put(&node("node-a")).unwrap();
    server.inject(
        Fault::new(500, "InternalError")
            .path_contains("/nodes")
            .verb(Verb::List)
            .times(2),
    );
    server.inject(
        Fault::new(429, "TooManyRequests")
            .method("PATCH")
            .path("/api/v1/nodes/node-a"),
    );
    for _ in 0..2 {
        assert_eq!(
            code(nodes.list(&ListParams::default()).await.unwrap_err()).0,
            500
        );
    }
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        1
    );
    assert_eq!(
        nodes.get("node-a").await.unwrap().metadata.name.as_deref(),
        Some("node-a")
    );
    let patch = Patch::Merge(json!({ "metadata": { "labels": { "x": "y" } } }));
    let pp = PatchParams {
        field_manager: Some("me".into()),
        ..PatchParams::default()
    };
    // kube's default client retries a 429 by itself; one without retries sees it.
    nodes.patch("node-a", &pp, &patch).await.unwrap();
    server.inject(
        Fault::new(429, "TooManyRequests")
            .method("PATCH")
            .path("/api/v1/nodes/node-a"),
    );
    let plain: Api<Node> = Api::all(no_retry_client(&server));
    assert_eq!(
        code(plain.patch("node-a", &pp, &patch).await.unwrap_err()).0,
        429
    );
    let pods: Api<Pod> = Api::all(server.client());
    pods.list(&ListParams::default()).await.unwrap();

    let log = server.requests();
    let statuses: Vec<_> = log.iter().map(|r| (r.method.as_str(), r.status)).collect();
    assert_eq!(
        statuses,
        [
            ("GET", 500),
            ("GET", 500),
            ("GET", 200),
            ("GET", 200),
            ("PATCH", 429),
            ("PATCH", 200),
            ("PATCH", 429),
            ("GET", 200),
        ]
    );
    assert_eq!(log[5].field_manager.as_deref(), Some("me"));
    assert_eq!(log[7].path, "/api/v1/pods");
    let verbs: Vec<_> = server
        .verbs_used()
        .into_iter()
        .map(|(group, resource, verb)| format!("{group}/{resource}:{verb}"))
        .collect();
    assert_eq!(
        verbs,
        ["/nodes:get", "/nodes:list", "/nodes:patch", "/pods:list"]
    );

    server.clear_requests();
    assert!(server.requests().is_empty());
}

/// Sends raw HTTP/1.1 and answers the status code and body.
async fn raw(server: &ApiServer, request: &str, body: &[u8]) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    let head = format!(
        "{request} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response).await;
    let response = String::from_utf8_lossy(&response).into_owned();
    let code = response[9..12].parse().unwrap();
    (code, response)
}

#[tokio::test]
async fn malformed_requests_get_status_errors() {
    let server = ApiServer::builder()
        .max_body_bytes(1024)
        .start()
        .await
        .unwrap();
    let (code, body) = raw(&server, "POST /api/v1/nodes", b"{not json").await;
    assert_eq!(code, 400);
    assert!(body.contains("\"kind\":\"Status\""));
    assert_eq!(raw(&server, "POST /api/v1/nodes", b"[1]").await.0, 400);
    assert_eq!(
        raw(&server, "POST /api/v1/nodes", &[b' '; 2048]).await.0,
        413
    );
    assert_eq!(raw(&server, "GET /api/v1/widgets", b"").await.0, 404);
    assert_eq!(
        raw(&server, "GET /apis/karpenter.sh/v2/nodeclaims", b"")
            .await
            .0,
        404
    );
    assert_eq!(
        raw(&server, "GET /api/v1/namespaces/x/nodes/a", b"")
            .await
            .0,
        404
    );
    assert_eq!(
        raw(&server, "GET /api/v1/pods?labelSelector=a%20b", b"")
            .await
            .0,
        400
    );
    assert_eq!(raw(&server, "PATCH /api/v1/nodes/a", b"{}").await.0, 415);
    assert_eq!(raw(&server, "GET /version", b"").await.0, 200);
    let (code, body) = raw(
        &server,
        "POST /api/v1/namespaces/ns/pods",
        br#"{"metadata":{"generateName":"p-"}}"#,
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert!(body.contains("\"phase\":\"Pending\""));
}

#[tokio::test]
async fn kubeconfig_points_at_the_server() {
    let server = ApiServer::start().await.unwrap();
    server.put(&node("node-a")).unwrap();
    let path = std::env::temp_dir().join(format!(
        "karpenter-apiserver-{}.kubeconfig",
        std::process::id()
    ));
    server.write_kubeconfig(&path).unwrap();
    let kubeconfig = kube::config::Kubeconfig::read_from(&path).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    let nodes: Api<Node> = Api::all(kube::Client::try_from(config).unwrap());
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        1
    );
}

#[tokio::test]
async fn lists_come_in_pages_when_asked() {
    let server = ApiServer::start().await.expect("starts");
    for name in ["a", "b", "c", "d", "e"] {
        server.put(&node(name)).expect("put");
    }
    let nodes: Api<Node> = Api::all(server.client());
    let mut names = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut params = ListParams::default().limit(2);
        if let Some(token) = &token {
            params = params.continue_token(token);
        }
        let page = nodes.list(&params).await.expect("a page");
        pages += 1;
        assert!(page.items.len() <= 2);
        names.extend(page.items.into_iter().filter_map(|n| n.metadata.name));
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
    }
    assert_eq!(names, ["a", "b", "c", "d", "e"]);
    assert_eq!(pages, 3);
    // No limit: one page.
    let all = nodes.list(&ListParams::default()).await.expect("a list");
    assert_eq!(all.items.len(), 5);
    assert!(all.metadata.continue_.is_none());
}

#[tokio::test]
async fn capacity_buffers_and_what_they_refer_to_are_served() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client();
    let pp = PostParams::default();
    let buffers: Api<CapacityBuffer> = Api::namespaced(client.clone(), "shop");
    let buffer: CapacityBuffer = serde_json::from_value(json!({
        "apiVersion": "autoscaling.x-k8s.io/v1beta1",
        "kind": "CapacityBuffer",
        "metadata": { "name": "headroom", "namespace": "shop" },
        "spec": { "podTemplateRef": { "name": "chunk" }, "replicas": 2 },
        "status": { "replicas": 2 },
    }))
    .unwrap();
    let created = buffers.create(&pp, &buffer).await.unwrap();
    assert_eq!(created.spec.replicas, Some(2));
    assert!(created.status.is_none(), "the status is the subresource's");
    let listed = Api::<CapacityBuffer>::all(client.clone())
        .list(&ListParams::default())
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 1);
    assert_eq!(listed.items[0].metadata.namespace.as_deref(), Some("shop"));

    let template = json!({
        "metadata": { "labels": { "app": "web" } },
        "spec": { "containers": [{ "name": "c", "image": "i" }] },
    });
    let templates: Api<PodTemplate> = Api::namespaced(client.clone(), "shop");
    let pod_template: PodTemplate = serde_json::from_value(json!({
        "metadata": { "name": "chunk", "namespace": "shop" },
        "template": template,
    }))
    .unwrap();
    templates.create(&pp, &pod_template).await.unwrap();
    let workload = |name: &str| {
        json!({
            "metadata": { "name": name, "namespace": "shop" },
            "spec": {
                "replicas": 3,
                "selector": { "matchLabels": { "app": "web" } },
                "template": template,
            },
        })
    };
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "shop");
    let deployment: Deployment = serde_json::from_value(workload("web")).unwrap();
    deployments.create(&pp, &deployment).await.unwrap();
    let sets: Api<StatefulSet> = Api::namespaced(client.clone(), "shop");
    let set: StatefulSet = serde_json::from_value(workload("db")).unwrap();
    sets.create(&pp, &set).await.unwrap();
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), "shop");
    let replica_set: ReplicaSet = serde_json::from_value(workload("web-1")).unwrap();
    replica_sets.create(&pp, &replica_set).await.unwrap();

    let all = ListParams::default();
    let names =
        |items: Vec<Option<String>>| -> Vec<String> { items.into_iter().flatten().collect() };
    let listed = Api::<PodTemplate>::all(client.clone())
        .list(&all)
        .await
        .unwrap();
    assert_eq!(
        names(listed.items.into_iter().map(|t| t.metadata.name).collect()),
        ["chunk"]
    );
    let listed = Api::<Deployment>::all(client.clone())
        .list(&all)
        .await
        .unwrap();
    assert_eq!(listed.items[0].spec.replicas, Some(3));
    let listed = Api::<StatefulSet>::all(client.clone())
        .list(&all)
        .await
        .unwrap();
    assert_eq!(
        names(listed.items.into_iter().map(|s| s.metadata.name).collect()),
        ["db"]
    );
    let listed = Api::<ReplicaSet>::all(client).list(&all).await.unwrap();
    assert_eq!(
        names(listed.items.into_iter().map(|r| r.metadata.name).collect()),
        ["web-1"]
    );
    let used = server.verbs_used();
    for (group, resource) in [
        ("autoscaling.x-k8s.io", "capacitybuffers"),
        ("", "podtemplates"),
        ("apps", "deployments"),
        ("apps", "statefulsets"),
        ("apps", "replicasets"),
    ] {
        assert!(
            used.contains(&(group.into(), resource.into(), "list".into())),
            "{resource}"
        );
    }
}

//! Every kind of bad input gets its own clear error: the right `LoadError` variant,
//! and a message naming the file, the document and the field. Odd but valid input
//! (kind last, lists, JSON, a BOM, unknown kinds) reads as the format says, and no
//! input makes the loader panic, hang or overflow its stack.

use std::path::PathBuf;

use karpenter_core::features::{FeatureGate, FeatureGates};
use karpenter_scenario::{LoadError, LoadOptions, Scenario};
use proptest::prelude::*;

// ---------------------------------------------------------------------------
// Helpers

fn load(name: &str, text: &str) -> Result<Scenario, LoadError> {
    Scenario::from_str(name, text, &LoadOptions::default())
}

/// The error `text` must give.
#[track_caller]
fn error(name: &str, text: &str) -> LoadError {
    match load(name, text) {
        Ok(scenario) => panic!(
            "{name}: expected an error, got {} objects and warnings {:?}",
            scenario.object_count(),
            scenario.warnings
        ),
        Err(e) => e,
    }
}

/// The scenario `text` must give.
#[track_caller]
fn loaded(name: &str, text: &str) -> Scenario {
    match load(name, text) {
        Ok(scenario) => scenario,
        Err(e) => panic!("{name}: expected to load, got: {e}"),
    }
}

/// Asserts that the error's message contains every part.
#[track_caller]
fn assert_says(error: &LoadError, parts: &[&str]) {
    let text = error.to_string();
    for part in parts {
        assert!(
            text.contains(part),
            "the message {text:?} should contain {part:?} ({error:?})"
        );
    }
}

/// Asserts a `LoadError::Invalid` for `object` at `field`, and that its message says
/// the file, the document, the object, the field and every part of `says`.
#[track_caller]
fn assert_invalid(
    error: &LoadError,
    file: &str,
    document: usize,
    object: &str,
    field: &str,
    says: &[&str],
) {
    assert!(
        matches!(error, LoadError::Invalid { origin, object: o, field: f, .. }
            if &*origin.file == file && origin.document == document && o == object && f == field),
        "expected Invalid for {object} at {file} document {document}, field {field}; got {error:?}"
    );
    let document = format!("document {document}");
    let field = format!("field {field}");
    assert_says(error, &[file, &document, object, &field]);
    assert_says(error, says);
}

/// Asserts a `LoadError::Parse` in `file`, document `document`, at `field`, with a line.
#[track_caller]
fn assert_parse(error: &LoadError, file: &str, document: usize, field: &str) {
    assert!(
        matches!(error, LoadError::Parse { file: f, document: Some(d), field: Some(p), .. }
            if f == file && *d == document && p == field),
        "expected Parse in {file} document {document}, field {field}; got {error:?}"
    );
    let document = format!("document {document}");
    let field = format!("field {field}");
    assert_says(error, &[file, &document, &field]);
}

/// Runs `f` on a thread with a 2 MiB stack: the size of `std::thread::spawn`'s
/// threads, of cargo's test threads and of tokio's workers, where an embedding
/// controller would call the loader.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the loader panicked")
}

/// A file in the temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(tag: &str, bytes: &[u8]) -> TempFile {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "karpenter-load-errors-{}-{}-{tag}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, bytes).expect("write a temporary file");
        TempFile(path)
    }

    fn name(&self) -> String {
        self.0.to_string_lossy().into_owned()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn pod(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: default}}\n\
         spec:\n  containers: [{{name: app}}]\n"
    )
}

/// A Pod `default/web-0` whose first container requests `requests` (a flow map body).
fn pod_requesting(requests: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: web-0, namespace: default}}\nspec:\n  \
         containers:\n  - name: app\n    resources: {{requests: {{{requests}}}}}\n"
    )
}

const NODE_POOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: general}\n\
spec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.fake, kind: FakeNodeClass, name: default}\n";

/// The NodePool `general` with one requirement (a flow map).
fn pool_requiring(requirement: &str) -> String {
    format!("{NODE_POOL}      requirements:\n      - {requirement}\n")
}

/// An InstanceType `it` with the given fields after its metadata.
fn instance_type(fields: &str) -> String {
    format!(
        "apiVersion: karpenter.fake/v1alpha1\nkind: InstanceType\nmetadata: {{name: it}}\n{fields}"
    )
}

const CAPACITY: &str = "capacity: {cpu: '4', memory: 8Gi}\n";

fn offering(offering: &str) -> String {
    instance_type(&format!("{CAPACITY}offerings: [{offering}]\n"))
}

const EXAMPLE: &str = include_str!("../../../examples/scenarios/provision-basic.yaml");

// ---------------------------------------------------------------------------
// Syntax

#[test]
fn bad_indentation_is_a_parse_error_with_line_and_column() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n   namespace: b\n";
    let e = error("indent.yaml", text);
    assert!(
        matches!(e, LoadError::Parse { ref file, document: Some(1), line: Some(5), column: Some(13), .. } if file == "indent.yaml"),
        "{e:?}"
    );
    assert_says(&e, &["indent.yaml", "document 1", "line 5 column 13"]);
}

#[test]
fn unclosed_flow_map_is_a_parse_error_with_line_and_column() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: a\n";
    let e = error("flow.yaml", text);
    assert!(
        matches!(e, LoadError::Parse { ref file, document: Some(1), line: Some(3), column: Some(11), ref message, .. }
            if file == "flow.yaml" && message.contains("unclosed")),
        "{e:?}"
    );
    assert_says(&e, &["flow.yaml", "document 1", "line 3 column 11"]);
}

#[test]
fn syntax_error_in_the_third_document_names_document_3() {
    let text = format!("{}---\n{}---\n  bad: [\n", pod("a"), pod("b"));
    let e = error("third.yaml", &text);
    assert!(
        matches!(
            e,
            LoadError::Parse {
                document: Some(3),
                line: Some(13),
                column: Some(_),
                ..
            }
        ),
        "{e:?}"
    );
    assert_says(&e, &["third.yaml", "document 3", "line 13"]);
}

#[test]
fn json_syntax_error_is_a_parse_error_with_line_and_column() {
    let text = "{\"apiVersion\": \"v1\",\n \"kind\": \"Pod\",\n \"metadata\": {\"name\": \"a\" \"namespace\": \"b\"}}";
    let e = error("bad.json", text);
    assert!(
        matches!(e, LoadError::Parse { ref file, document: Some(1), line: Some(3), column: Some(_), .. } if file == "bad.json"),
        "{e:?}"
    );
    assert_says(&e, &["bad.json", "document 1", "line 3 column"]);
    let e = error("eof.json", "{\"apiVersion\": \"v1\", \"kind\": \"Pod\",");
    assert!(
        matches!(e, LoadError::Parse { ref file, document: Some(1), line: Some(1), column: Some(_), .. } if file == "eof.json"),
        "{e:?}"
    );
    assert_says(&e, &["eof.json", "document 1", "line 1 column"]);
}

#[test]
fn syntax_errors_name_no_placeholder_field() {
    for (name, text) in [
        ("eof.json", "{\"apiVersion\": \"v1\", \"kind\": \"Pod\","),
        (
            "indent.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n   namespace: b\n",
        ),
        (
            "flow.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a\n",
        ),
        ("nullkey.yaml", "apiVersion: v1\nkind: Pod\n: : :\n"),
    ] {
        let e = error(name, text);
        let text = e.to_string();
        assert!(matches!(e, LoadError::Parse { .. }), "{e:?}");
        assert!(!text.contains('?'), "{name}: {text}");
        assert!(!text.contains("Option<"), "{name}: {text}");
    }
}

// ---------------------------------------------------------------------------
// Wrong types: the document and the field's path

#[test]
fn wrong_type_in_the_second_document_names_document_2_and_the_field() {
    let text = format!(
        "{}---\n{}",
        pod("a"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n  containers: 3\n"
    );
    let e = error("multi.yaml", &text);
    assert_parse(&e, "multi.yaml", 2, "spec.containers");
    assert!(
        matches!(
            e,
            LoadError::Parse {
                line: Some(11),
                column: Some(_),
                ..
            }
        ),
        "{e:?}"
    );

    let text = format!(
        "{}---\napiVersion: v1\nkind: Pod\nmetadata: {{name: b}}\nspec:\n  containers:\n  - name: c\n    \
         ports:\n    - containerPort: abc\n",
        pod("a")
    );
    let e = error("port.yaml", &text);
    assert_parse(
        &e,
        "port.yaml",
        2,
        "spec.containers[0].ports[0].containerPort",
    );
    assert!(
        matches!(e, LoadError::Parse { line: Some(14), .. }),
        "{e:?}"
    );
}

#[test]
fn empty_documents_are_not_counted() {
    let text = format!(
        "---\n---\n{}---\n---\n{}---\napiVersion: v1\nkind: Pod\nspec: {{containers: 3}}\n",
        pod("a"),
        pod("b")
    );
    let e = error("gaps.yaml", &text);
    assert_parse(&e, "gaps.yaml", 3, "spec.containers");

    let text = format!("# only a comment\n---\n{}", pod("a"));
    let scenario = loaded("comment.yaml", &text);
    assert_eq!(scenario.pods[0].source.document, 1);
}

const LIST_YAML: &str = "apiVersion: v1\nkind: List\nitems:\n\
- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n\
- apiVersion: v1\n  kind: Pod\n  metadata: {name: b}\n\
- apiVersion: v1\n  kind: Pod\n  metadata: {name: c}\n\
- apiVersion: v1\n  kind: Pod\n  metadata: {name: d}\n  spec:\n    containers:\n    - name: x\n      ports: [{containerPort: abc}]\n";

/// `kubectl get pods -o json` of the same list: keys sorted, list metadata last.
const LIST_JSON: &str = r#"{
    "apiVersion": "v1",
    "items": [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "c"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "d"},
         "spec": {"containers": [{"name": "x", "ports": [{"containerPort": "abc"}]}]}}
    ],
    "kind": "List",
    "metadata": {"resourceVersion": ""}
}"#;

#[test]
fn wrong_type_in_a_yaml_list_item_names_the_item_path() {
    let e = error("list.yaml", LIST_YAML);
    assert_parse(
        &e,
        "list.yaml",
        1,
        "items[3].spec.containers[0].ports[0].containerPort",
    );
    assert!(
        matches!(e, LoadError::Parse { line: Some(19), .. }),
        "{e:?}"
    );
}

#[test]
fn wrong_type_in_a_json_list_item_names_the_item_path() {
    let e = error("list.json", LIST_JSON);
    assert_parse(
        &e,
        "list.json",
        1,
        "items[3].spec.containers[0].ports[0].containerPort",
    );
    assert!(
        matches!(
            e,
            LoadError::Parse {
                line: Some(8),
                column: Some(_),
                ..
            }
        ),
        "{e:?}"
    );
    assert_says(&e, &["abc"]);
}

#[test]
fn a_valid_json_list_reads_its_items_with_their_index() {
    let text = LIST_JSON.replace("\"abc\"", "8080");
    let scenario = loaded("list.json", &text);
    let names: Vec<_> = scenario
        .pods
        .iter()
        .map(|p| p.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    let items: Vec<_> = scenario
        .pods
        .iter()
        .map(|p| (p.source.document, p.source.item))
        .collect();
    assert_eq!(
        items,
        [(1, Some(0)), (1, Some(1)), (1, Some(2)), (1, Some(3))]
    );
    assert_eq!(
        scenario.pods[3].source.to_string(),
        "list.json, document 1, item 3"
    );
}

#[test]
fn wrong_type_in_the_second_json_object_of_a_stream_names_document_2() {
    let text = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}\n\
                {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"},\"spec\":{\"containers\":3}}";
    let e = error("stream.json", text);
    assert_parse(&e, "stream.json", 2, "spec.containers");
    assert!(matches!(e, LoadError::Parse { line: Some(2), .. }), "{e:?}");
}

#[test]
fn wrong_type_in_a_json_array_element_names_its_index() {
    let text = r#"[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}},
                   {"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":3}}]"#;
    let e = error("array.json", text);
    assert_parse(&e, "array.json", 1, "[1].spec.containers");
}

// ---------------------------------------------------------------------------
// Kind after metadata and spec: the buffered path

/// Moves each document's top-level `apiVersion` and `kind` lines to its end.
fn kind_last(text: &str) -> String {
    text.split("\n---\n")
        .map(|document| {
            let (head, rest): (Vec<&str>, Vec<&str>) = document
                .lines()
                .partition(|l| l.starts_with("apiVersion:") || l.starts_with("kind:"));
            assert_eq!(head.len(), 2, "{document}");
            let mut out = rest.join("\n");
            out.push('\n');
            out.push_str(&head.join("\n"));
            out
        })
        .collect::<Vec<_>>()
        .join("\n---\n")
        + "\n"
}

/// The pods as read, written back as `Pod`s (what planning reads of them).
fn pod_values(
    pods: &[karpenter_scenario::Sourced<std::sync::Arc<karpenter_core::pods::PodInfo>>],
) -> Vec<serde_json::Value> {
    pods.iter()
        .map(|p| serde_json::to_value(p.object.to_pod()).expect("serialize"))
        .collect()
}

fn values<T: serde::Serialize>(
    objects: &[karpenter_scenario::Sourced<T>],
) -> Vec<serde_json::Value> {
    objects
        .iter()
        .map(|o| serde_json::to_value(&o.object).expect("serialize"))
        .collect()
}

#[test]
fn kind_last_reads_plain_scalar_quantities_as_kind_first_does() {
    let body = "metadata: {name: web-0, namespace: default}\nspec:\n  containers:\n  - name: app\n    \
                resources: {requests: {cpu: 1, memory: 1.5}, limits: {cpu: 2}}\n";
    let first = loaded("first.yaml", &format!("apiVersion: v1\nkind: Pod\n{body}"));
    let last = loaded("last.yaml", &format!("{body}kind: Pod\napiVersion: v1\n"));
    let (first, last) = (pod_values(&first.pods), pod_values(&last.pods));
    assert_eq!(first, last);
    let requests = &first[0]["spec"]["containers"][0]["resources"]["requests"];
    assert_eq!(requests["cpu"], "1");
    assert_eq!(requests["memory"], "1.5");
}

#[test]
fn kind_last_loads_the_example_identically() {
    let first = loaded("first.yaml", EXAMPLE);
    let reordered = kind_last(EXAMPLE);
    assert_ne!(reordered, EXAMPLE);
    let last = loaded("last.yaml", &reordered);
    assert_eq!(first.object_count(), 10);
    assert_eq!(last.object_count(), first.object_count());
    assert_eq!(pod_values(&last.pods), pod_values(&first.pods));
    assert_eq!(values(&last.node_pools), values(&first.node_pools));
    assert_eq!(values(&last.daemon_sets), values(&first.daemon_sets));
    assert_eq!(values(&last.instance_types), values(&first.instance_types));
    let sources = |s: &Scenario| s.pods.iter().map(|p| p.source.document).collect::<Vec<_>>();
    assert_eq!(sources(&last), sources(&first));
}

#[test]
fn kind_last_errors_still_name_the_field() {
    let text = "metadata: {name: b}\nspec:\n  containers:\n  - name: c\n    ports:\n    - containerPort: abc\n\
                kind: Pod\napiVersion: v1\n";
    let e = error("late.yaml", text);
    assert_parse(
        &e,
        "late.yaml",
        1,
        "spec.containers[0].ports[0].containerPort",
    );

    let text = format!(
        "{}---\napiVersion: v1\nmetadata: {{name: b}}\nspec:\n  containers: 3\nkind: Pod\n",
        pod("a")
    );
    let e = error("late2.yaml", &text);
    assert_parse(&e, "late2.yaml", 2, "spec.containers");

    let e = error("late3.yaml", &kind_last(&pod_requesting("cpu: 2x")));
    assert_invalid(
        &e,
        "late3.yaml",
        1,
        "Pod default/web-0",
        &pod_field("cpu"),
        &["2x"],
    );
}

#[test]
fn kind_last_list_item_error_names_the_item() {
    let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n\
                - metadata: {name: b}\n  spec: {containers: 3}\n  kind: Pod\n  apiVersion: v1\n";
    let e = error("list-late.yaml", text);
    assert_parse(&e, "list-late.yaml", 1, "items[1].spec.containers");
    let text = r#"[{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}},
                   {"spec": {"containers": 3}, "kind": "Pod", "apiVersion": "v1"}]"#;
    let e = error("array-late.json", text);
    assert_parse(&e, "array-late.json", 1, "[1].spec.containers");
}

#[test]
fn kind_last_keeps_the_text_of_string_fields() {
    for value in ["1.10", "yes", "0x1F", "1e3", "010"] {
        let body = format!(
            "metadata: {{name: w, namespace: d, labels: {{v: {value}}}}}\nspec:\n  nodeSelector: {{v: {value}}}\n  \
             containers: [{{name: c}}]\n"
        );
        let first = loaded("first.yaml", &format!("apiVersion: v1\nkind: Pod\n{body}"));
        let last = loaded("last.yaml", &format!("{body}kind: Pod\napiVersion: v1\n"));
        assert_eq!(
            pod_values(&first.pods),
            pod_values(&last.pods),
            "label value {value}"
        );
    }
}

#[test]
fn kind_last_accepts_what_kind_first_accepts() {
    for spec in [
        "  containers: [{name: c, ports: [{containerPort: '80'}]}]\n",
        "  hostNetwork: 'true'\n  containers: [{name: c}]\n",
    ] {
        let body = format!("metadata: {{name: w, namespace: d}}\nspec:\n{spec}");
        let first = load("first.yaml", &format!("apiVersion: v1\nkind: Pod\n{body}"));
        let last = load("last.yaml", &format!("{body}kind: Pod\napiVersion: v1\n"));
        match (first, last) {
            (Ok(first), Ok(last)) => assert_eq!(pod_values(&first.pods), pod_values(&last.pods)),
            (Err(_), Err(_)) => {}
            (first, last) => panic!(
                "{spec}: kind first {:?}, kind last {:?}",
                first.map(|_| ()).map_err(|e| e.to_string()),
                last.map(|_| ()).map_err(|e| e.to_string())
            ),
        }
    }
}

// ---------------------------------------------------------------------------
// Document shapes

#[test]
fn missing_kind_is_a_parse_error() {
    let e = error(
        "nokind.yaml",
        &format!("{}---\napiVersion: v1\nmetadata: {{name: b}}\n", pod("a")),
    );
    assert!(
        matches!(e, LoadError::Parse { ref file, document: Some(2), ref message, .. }
            if file == "nokind.yaml" && message.contains("`kind`")),
        "{e:?}"
    );
    assert_says(&e, &["nokind.yaml", "document 2", "kind"]);
}

#[test]
fn missing_api_version_is_a_parse_error() {
    let e = error("noapi.yaml", "kind: Pod\nmetadata: {name: b}\n");
    assert!(
        matches!(e, LoadError::Parse { ref file, document: Some(1), ref message, .. }
            if file == "noapi.yaml" && message.contains("`apiVersion`")),
        "{e:?}"
    );
    assert_says(&e, &["noapi.yaml", "document 1", "apiVersion"]);
}

#[test]
fn missing_kind_in_a_list_item_names_the_item() {
    let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n\
                - apiVersion: v1\n  metadata: {name: b}\n";
    let e = error("item.yaml", text);
    assert_parse(&e, "item.yaml", 1, "items[1]");
    assert_says(&e, &["kind"]);
    let e = error(
        "item.json",
        r#"{"apiVersion":"v1","kind":"List","items":[{"kind":"Pod","metadata":{"name":"a"}}]}"#,
    );
    assert_parse(&e, "item.json", 1, "items[0]");
    assert_says(&e, &["apiVersion"]);
}

#[test]
fn list_with_no_items_is_empty() {
    for text in [
        "apiVersion: v1\nkind: List\nitems: []\n",
        "apiVersion: v1\nkind: List\nitems: []\nmetadata: {resourceVersion: ''}\n",
        r#"{"apiVersion": "v1", "items": [], "kind": "List", "metadata": {"resourceVersion": ""}}"#,
    ] {
        let scenario = loaded("empty-list", text);
        assert_eq!(scenario.object_count(), 0, "{text}");
        assert!(scenario.warnings.is_empty(), "{text}");
    }
}

#[test]
fn list_with_null_items_is_empty() {
    for (name, text) in [
        ("null.yaml", "apiVersion: v1\nkind: List\nitems: null\n"),
        ("tilde.yaml", "apiVersion: v1\nkind: List\nitems: ~\n"),
        (
            "null.json",
            r#"{"apiVersion": "v1", "items": null, "kind": "List"}"#,
        ),
    ] {
        match load(name, text) {
            Ok(scenario) => assert_eq!(scenario.object_count(), 0),
            Err(e) => panic!("{name}: {e}"),
        }
    }
}

#[test]
fn json_array_of_objects_reads_each() {
    let text = r#"[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"default"}},
                   {"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}]"#;
    let scenario = loaded("array.json", text);
    assert_eq!((scenario.pods.len(), scenario.nodes.len()), (1, 1));
    assert_eq!(scenario.nodes[0].source.item, Some(1));
}

#[test]
fn json_stream_of_two_objects_reads_both() {
    let text = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}\n\
                {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"b\"}}\n";
    let scenario = loaded("stream.json", text);
    let documents: Vec<_> = scenario.pods.iter().map(|p| p.source.document).collect();
    assert_eq!(documents, [1, 2]);
}

#[test]
fn utf8_bom_is_skipped() {
    let scenario = loaded("bom.yaml", &format!("\u{feff}{}", pod("a")));
    assert_eq!(scenario.pods.len(), 1);
    let text = "\u{feff}{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\"}}";
    assert_eq!(loaded("bom.json", text).pods.len(), 1);
    let file = TempFile::new("bom.yaml", format!("\u{feff}{}", pod("a")).as_bytes());
    let scenario =
        Scenario::load_files(&[&file.0], &LoadOptions::default()).expect("a BOM is fine");
    assert_eq!(scenario.pods.len(), 1);
}

#[test]
fn non_utf8_bytes_are_an_error_naming_the_file() {
    let mut bytes = pod("a").into_bytes();
    bytes.extend_from_slice(b"---\napiVersion: v1\nkind: Pod\nmetadata: {name: \xff\xfe}\n");
    let file = TempFile::new("latin1.yaml", &bytes);
    let e = Scenario::load_files(&[&file.0], &LoadOptions::default()).unwrap_err();
    assert!(
        matches!(e, LoadError::Parse { ref file, line: Some(9), .. } if *file == self::name(&e)),
        "{e:?}"
    );
    assert_says(&e, &[&file.name(), "UTF-8"]);
}

fn name(e: &LoadError) -> String {
    match e {
        LoadError::Parse { file, .. }
        | LoadError::Io { file, .. }
        | LoadError::TooLarge { file, .. } => file.clone(),
        LoadError::Invalid { origin, .. } => origin.file.to_string(),
        _ => String::new(),
    }
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let path = std::env::temp_dir().join(format!(
        "karpenter-load-errors-{}-absent.yaml",
        std::process::id()
    ));
    let e = Scenario::load_files(&[&path], &LoadOptions::default()).unwrap_err();
    assert!(matches!(e, LoadError::Io { .. }), "{e:?}");
    assert_says(&e, &[&path.to_string_lossy()]);
}

// ---------------------------------------------------------------------------
// Kinds not read: a warning, not an error

#[test]
fn unknown_kind_is_skipped_with_a_warning() {
    let text = format!(
        "{}---\napiVersion: batch/v1\nkind: Job\nmetadata: {{name: web, namespace: default}}\n\
         spec: {{parallelism: 3}}\n",
        pod("a")
    );
    let scenario = loaded("job.yaml", &text);
    assert_eq!(scenario.object_count(), 1);
    assert_eq!(scenario.warnings.len(), 1);
    let warning = &scenario.warnings[0];
    assert_eq!(
        (&*warning.source.file, warning.source.document),
        ("job.yaml", 2)
    );
    let text = warning.to_string();
    for part in ["job.yaml", "document 2", "batch/v1", "Job", "default/web"] {
        assert!(text.contains(part), "{text:?} should contain {part:?}");
    }
}

#[test]
fn known_kind_at_another_version_is_skipped_with_a_warning() {
    let text = "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: old}\nspec: {weird: [1]}\n";
    let scenario = loaded("old.yaml", text);
    assert_eq!(scenario.node_pools.len(), 0);
    assert_eq!(scenario.warnings.len(), 1);
    let text = scenario.warnings[0].to_string();
    for part in [
        "old.yaml",
        "document 1",
        "karpenter.sh/v1beta1",
        "NodePool",
        "old",
        "karpenter.sh/v1 ",
    ] {
        assert!(text.contains(part), "{text:?} should contain {part:?}");
    }
}

#[test]
fn unknown_kind_in_a_list_names_the_item() {
    let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: a}\n\
                - apiVersion: batch/v1\n  kind: Job\n  metadata: {name: d, namespace: x}\n";
    let scenario = loaded("list.yaml", text);
    assert_eq!(scenario.pods.len(), 1);
    let text = scenario.warnings[0].to_string();
    assert!(
        text.starts_with("list.yaml, document 1, item 1: "),
        "{text}"
    );
    assert!(text.contains("Job x/d"), "{text}");
}

// ---------------------------------------------------------------------------
// Values checked by `validate`

/// The path a container's request should have.
fn pod_field(resource: &str) -> String {
    format!("spec.containers[0].resources.requests.{resource}")
}

#[test]
fn bad_quantity_in_a_container_request_is_invalid() {
    let e = error("q.yaml", &pod_requesting("cpu: 250m, memory: 1.5.5Gi"));
    let field = pod_field("memory");
    assert_invalid(&e, "q.yaml", 1, "Pod default/web-0", &field, &["1.5.5Gi"]);
    // The second container, in a List item.
    let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  \
                metadata: {name: web-0, namespace: default}\n  spec:\n    containers:\n    - name: a\n    \
                - name: b\n      resources: {requests: {cpu: 2x}}\n";
    let e = error("list.yaml", text);
    let field = "spec.containers[1].resources.requests.cpu";
    assert_invalid(
        &e,
        "list.yaml",
        1,
        "Pod default/web-0",
        field,
        &["item 0", "2x"],
    );
}

#[test]
fn bad_quantity_in_an_init_container_is_invalid() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web-0, namespace: default}\nspec:\n  \
                containers: [{name: c}]\n  initContainers:\n  - name: i\n    resources: {requests: {memory: lots}}\n";
    let e = error("init.yaml", text);
    let field = "spec.initContainers[0].resources.requests.memory";
    assert_invalid(&e, "init.yaml", 1, "Pod default/web-0", field, &["lots"]);
}

const DAEMON_SET: &str = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: kube-system}\n\
spec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    spec:\n      containers:\n      - name: c\n        \
resources: {requests: {cpu: 5q}}\n";

#[test]
fn bad_quantity_in_a_daemon_set_template_is_invalid() {
    let e = error("ds.yaml", &format!("{}---\n{DAEMON_SET}", pod("a")));
    let field = "spec.template.spec.containers[0].resources.requests.cpu";
    assert_invalid(
        &e,
        "ds.yaml",
        2,
        "DaemonSet kube-system/agent",
        field,
        &["5q"],
    );
}

#[test]
fn negative_request_is_invalid() {
    let e = error("neg.yaml", &pod_requesting("cpu: '-1'"));
    assert!(
        matches!(e, LoadError::Invalid { ref field, .. } if field.ends_with("requests.cpu")),
        "{e:?}"
    );
}

#[test]
fn bad_quantity_in_node_allocatable_is_invalid() {
    let text = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: '4', memory: huge}\n";
    let e = error("node.yaml", text);
    assert_invalid(
        &e,
        "node.yaml",
        1,
        "Node n1",
        "status.allocatable.memory",
        &["huge"],
    );
}

#[test]
fn bad_quantity_in_node_pool_limits_is_invalid() {
    let e = error(
        "limits.yaml",
        &format!("{NODE_POOL}  limits: {{cpu: 1000x}}\n"),
    );
    assert_invalid(
        &e,
        "limits.yaml",
        1,
        "NodePool general",
        "spec.limits.cpu",
        &["1000x"],
    );
}

const REQUIREMENT: &str = "spec.template.spec.requirements[0]";

#[test]
fn requirement_with_an_unknown_operator_is_invalid() {
    let text = pool_requiring("{key: karpenter.sh/capacity-type, operator: Like, values: [spot]}");
    let e = error("op.yaml", &text);
    assert_invalid(
        &e,
        "op.yaml",
        1,
        "NodePool general",
        REQUIREMENT,
        &["Like", "karpenter.sh/capacity-type"],
    );
}

#[test]
fn requirement_in_with_no_values_is_invalid() {
    for requirement in [
        "{key: example.com/team, operator: In, values: []}",
        "{key: example.com/team, operator: In}",
    ] {
        let e = error("in.yaml", &pool_requiring(requirement));
        assert_invalid(
            &e,
            "in.yaml",
            1,
            "NodePool general",
            REQUIREMENT,
            &["example.com/team"],
        );
    }
}

#[test]
fn requirement_gt_with_a_non_integer_is_invalid() {
    let e = error(
        "gt.yaml",
        &pool_requiring("{key: example.com/size, operator: Gt, values: [big]}"),
    );
    assert_invalid(
        &e,
        "gt.yaml",
        1,
        "NodePool general",
        REQUIREMENT,
        &["Gt", "big"],
    );
}

#[test]
fn requirement_min_values_over_the_values_is_invalid() {
    let text = pool_requiring(
        "{key: node.kubernetes.io/instance-type, operator: In, values: [a, b], minValues: 3}",
    );
    let e = error("min.yaml", &text);
    assert_invalid(
        &e,
        "min.yaml",
        1,
        "NodePool general",
        REQUIREMENT,
        &["minValues", "3"],
    );
}

#[test]
fn requirement_on_a_restricted_label_is_invalid() {
    for key in ["kubernetes.io/hostname", "karpenter.sh/foo"] {
        let e = error(
            "restricted.yaml",
            &pool_requiring(&format!("{{key: {key}, operator: In, values: [a]}}")),
        );
        assert_invalid(
            &e,
            "restricted.yaml",
            1,
            "NodePool general",
            REQUIREMENT,
            &[key],
        );
    }
    // A well-known karpenter.sh label is allowed.
    loaded(
        "allowed.yaml",
        &pool_requiring("{key: karpenter.sh/capacity-type, operator: In, values: [spot]}"),
    );
}

#[test]
fn budget_with_bad_nodes_is_invalid() {
    let text =
        format!("{NODE_POOL}  disruption:\n    budgets:\n    - nodes: '10%'\n    - nodes: abc\n");
    let e = error("budget.yaml", &text);
    assert_invalid(
        &e,
        "budget.yaml",
        1,
        "NodePool general",
        "spec.disruption.budgets[1].nodes",
        &["abc"],
    );
}

#[test]
fn budget_with_schedule_but_no_duration_is_invalid() {
    let text = format!(
        "{NODE_POOL}  disruption:\n    budgets:\n    - nodes: '10%'\n      schedule: '@daily'\n"
    );
    let e = error("budget.yaml", &text);
    assert_invalid(
        &e,
        "budget.yaml",
        1,
        "NodePool general",
        "spec.disruption.budgets[0]",
        &["duration"],
    );
}

#[test]
fn instance_type_without_cpu_is_invalid() {
    let text = instance_type(
        "capacity: {memory: 1Gi}\nofferings: [{zone: a, capacityType: spot, price: 1}]\n",
    );
    let e = error("it.yaml", &text);
    assert_invalid(
        &e,
        "it.yaml",
        1,
        "InstanceType it",
        "capacity.cpu",
        &["required"],
    );
}

#[test]
fn instance_type_without_offerings_is_invalid() {
    for fields in [CAPACITY.to_string(), format!("{CAPACITY}offerings: []\n")] {
        let e = error("it.yaml", &instance_type(&fields));
        assert_invalid(
            &e,
            "it.yaml",
            1,
            "InstanceType it",
            "offerings",
            &["offering"],
        );
    }
}

#[test]
fn instance_type_with_an_unknown_capacity_type_is_invalid() {
    let e = error(
        "it.yaml",
        &offering("{zone: a, capacityType: preemptible, price: 1}"),
    );
    assert_invalid(
        &e,
        "it.yaml",
        1,
        "InstanceType it",
        "offerings[0].capacityType",
        &["preemptible"],
    );
}

#[test]
fn instance_type_with_a_negative_price_is_invalid() {
    let text = offering(
        "{zone: a, capacityType: spot, price: 1}, {zone: b, capacityType: spot, price: -0.5}",
    );
    let e = error("it.yaml", &text);
    assert_invalid(
        &e,
        "it.yaml",
        1,
        "InstanceType it",
        "offerings[1].price",
        &["-0.5"],
    );
}

#[test]
fn instance_type_with_a_non_finite_price_is_invalid() {
    for price in [".nan", ".inf", "-.inf"] {
        let e = error(
            "it.yaml",
            &offering(&format!("{{zone: a, capacityType: spot, price: {price}}}")),
        );
        assert_invalid(
            &e,
            "it.yaml",
            1,
            "InstanceType it",
            "offerings[0].price",
            &["not a price"],
        );
    }
    // Too large for a float: refused while parsing, still naming the field.
    let e = error(
        "it.yaml",
        &offering("{zone: a, capacityType: spot, price: 1e400}"),
    );
    assert_parse(&e, "it.yaml", 1, "offerings[0].price");
    let text = r#"{"apiVersion": "karpenter.fake/v1alpha1", "kind": "InstanceType", "metadata": {"name": "it"},
        "capacity": {"cpu": "4", "memory": "8Gi"},
        "offerings": [{"zone": "a", "capacityType": "spot", "price": 1e400}]}"#;
    let e = error("it.json", text);
    assert_parse(&e, "it.json", 1, "offerings[0].price");
}

#[test]
fn two_node_pools_with_one_name_name_both_places() {
    let e = error(
        "pools.yaml",
        &format!("{NODE_POOL}---\n{}---\n{NODE_POOL}", pod("a")),
    );
    assert_invalid(
        &e,
        "pools.yaml",
        3,
        "NodePool general",
        "metadata.name",
        &["pools.yaml, document 1"],
    );

    let (a, b) = (
        TempFile::new("a.yaml", NODE_POOL.as_bytes()),
        TempFile::new("b.yaml", NODE_POOL.as_bytes()),
    );
    let e = Scenario::load_files(&[&a.0, &b.0], &LoadOptions::default()).unwrap_err();
    assert_invalid(
        &e,
        &b.name(),
        1,
        "NodePool general",
        "metadata.name",
        &[&format!("{}, document 1", a.name())],
    );
}

#[test]
fn two_pods_with_one_namespace_and_name_are_invalid() {
    let e = error(
        "pods.yaml",
        &format!("{}---\n{}", pod("web-0"), pod("web-0")),
    );
    assert_invalid(
        &e,
        "pods.yaml",
        2,
        "Pod default/web-0",
        "metadata.name",
        &["pods.yaml, document 1"],
    );
    // The same name in another namespace is another pod.
    let other = pod("web-0").replace("namespace: default", "namespace: other");
    assert_eq!(
        loaded("pods.yaml", &format!("{}---\n{other}", pod("web-0")))
            .pods
            .len(),
        2
    );
}

#[test]
fn go_duration_with_days_names_the_field() {
    let text = format!("{NODE_POOL}      expireAfter: 30d\n");
    let e = error("expire.yaml", &text);
    assert_parse(&e, "expire.yaml", 1, "spec.template.spec.expireAfter");
    assert_says(&e, &["30d"]);
    let e = error("expire-late.yaml", &kind_last(&text));
    assert_parse(&e, "expire-late.yaml", 1, "spec.template.spec.expireAfter");
    // What Go accepts is fine.
    loaded("ok.yaml", &format!("{NODE_POOL}      expireAfter: 720h\n"));
    loaded(
        "never.yaml",
        &format!("{NODE_POOL}      expireAfter: Never\n"),
    );
}

// ---------------------------------------------------------------------------
// CapacityBuffers (behind their gate), PodTemplates and apps/v1 workloads

/// Loads `text` with the `CapacityBuffer` feature gate on.
fn load_buffers(name: &str, text: &str) -> Result<Scenario, LoadError> {
    let gates = FeatureGates::UPSTREAM.with(FeatureGate::CapacityBuffer, true);
    Scenario::from_str(
        name,
        text,
        &LoadOptions::default().with_feature_gates(gates),
    )
}

/// The error `text` must give with the `CapacityBuffer` gate on.
#[track_caller]
fn buffer_error(name: &str, text: &str) -> LoadError {
    match load_buffers(name, text) {
        Ok(scenario) => panic!(
            "{name}: expected an error, got {} objects and warnings {:?}",
            scenario.object_count(),
            scenario.warnings
        ),
        Err(e) => e,
    }
}

/// The scenario `text` must give with the `CapacityBuffer` gate on.
#[track_caller]
fn buffers_loaded(name: &str, text: &str) -> Scenario {
    load_buffers(name, text).unwrap_or_else(|e| panic!("{name}: expected to load, got: {e}"))
}

/// The CapacityBuffer `shop/headroom` with `spec` (a flow map body).
fn buffer(spec: &str) -> String {
    format!(
        "apiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\n\
         metadata: {{name: headroom, namespace: shop}}\nspec: {{{spec}}}\n"
    )
}

/// The PodTemplate `shop/chunk`, its container requesting `requests`.
fn pod_template(requests: &str) -> String {
    format!(
        "apiVersion: v1\nkind: PodTemplate\nmetadata: {{name: chunk, namespace: shop}}\n\
         template:\n  spec:\n    containers:\n    - name: pause\n      \
         resources: {{requests: {{{requests}}}}}\n"
    )
}

const BUFFER: &str = "CapacityBuffer shop/headroom";

#[test]
fn buffer_with_both_references_is_invalid() {
    let text = format!(
        "{}---\n{}",
        pod_template("cpu: '1'"),
        buffer(
            "podTemplateRef: {name: chunk}, scalableRef: {kind: Deployment, name: web}, \
             replicas: 2"
        )
    );
    let e = buffer_error("both.yaml", &text);
    assert_invalid(
        &e,
        "both.yaml",
        2,
        BUFFER,
        "spec",
        &["podTemplateRef and scalableRef are mutually exclusive"],
    );
}

#[test]
fn buffer_with_a_template_but_no_count_is_invalid() {
    let e = buffer_error("count.yaml", &buffer("podTemplateRef: {name: chunk}"));
    assert_invalid(
        &e,
        "count.yaml",
        1,
        BUFFER,
        "spec",
        &["podTemplateRef", "replicas or limits"],
    );
    // Either says how many chunks; a percentage alone does not.
    buffers_loaded(
        "replicas.yaml",
        &buffer("podTemplateRef: {name: chunk}, replicas: 0"),
    );
    buffers_loaded(
        "limits.yaml",
        &buffer("podTemplateRef: {name: chunk}, limits: {cpu: '8'}"),
    );
    let e = buffer_error(
        "percentage.yaml",
        &buffer("podTemplateRef: {name: chunk}, percentage: 10"),
    );
    assert_invalid(
        &e,
        "percentage.yaml",
        1,
        BUFFER,
        "spec",
        &["replicas or limits"],
    );
    // A workload's buffer may count by its percentage alone.
    buffers_loaded(
        "scalable.yaml",
        &buffer("scalableRef: {kind: Deployment, name: web}, percentage: 10"),
    );
}

#[test]
fn negative_buffer_counts_are_invalid() {
    let e = buffer_error(
        "replicas.yaml",
        &buffer("podTemplateRef: {name: chunk}, replicas: -1"),
    );
    assert_invalid(
        &e,
        "replicas.yaml",
        1,
        BUFFER,
        "spec.replicas",
        &["-1", "negative"],
    );
    let e = buffer_error(
        "percentage.yaml",
        &buffer("scalableRef: {kind: StatefulSet, name: db}, percentage: -5"),
    );
    assert_invalid(
        &e,
        "percentage.yaml",
        1,
        BUFFER,
        "spec.percentage",
        &["-5", "negative"],
    );
}

#[test]
fn empty_buffer_reference_names_are_invalid() {
    for spec in [
        "podTemplateRef: {name: ''}, replicas: 1",
        "podTemplateRef: {}, replicas: 1",
    ] {
        let e = buffer_error("template.yaml", &buffer(spec));
        assert_invalid(
            &e,
            "template.yaml",
            1,
            BUFFER,
            "spec.podTemplateRef.name",
            &["required"],
        );
    }
    let e = buffer_error(
        "name.yaml",
        &buffer("scalableRef: {kind: Deployment, name: ''}, replicas: 1"),
    );
    assert_invalid(
        &e,
        "name.yaml",
        1,
        BUFFER,
        "spec.scalableRef.name",
        &["required"],
    );
    let e = buffer_error(
        "kind.yaml",
        &buffer("scalableRef: {apiGroup: apps, name: web}, replicas: 1"),
    );
    assert_invalid(
        &e,
        "kind.yaml",
        1,
        BUFFER,
        "spec.scalableRef.kind",
        &["required"],
    );
}

#[test]
fn bad_quantity_in_buffer_limits_is_invalid() {
    let e = buffer_error(
        "limits.yaml",
        &buffer("podTemplateRef: {name: chunk}, limits: {cpu: '8', memory: lots}"),
    );
    assert_invalid(
        &e,
        "limits.yaml",
        1,
        BUFFER,
        "spec.limits.memory",
        &["lots"],
    );
    // A buffer in a List names the item.
    let text = "apiVersion: v1\nkind: List\nitems:\n\
                - apiVersion: autoscaling.x-k8s.io/v1beta1\n  kind: CapacityBuffer\n  \
                metadata: {name: headroom, namespace: shop}\n  \
                spec: {scalableRef: {kind: Deployment, name: web}, limits: {cpu: 2x}}\n";
    let e = buffer_error("list.yaml", text);
    assert_invalid(
        &e,
        "list.yaml",
        1,
        BUFFER,
        "spec.limits.cpu",
        &["item 0", "2x"],
    );
}

#[test]
fn a_buffer_with_neither_reference_is_admitted() {
    let scenario = buffers_loaded("neither.yaml", &buffer("replicas: 2"));
    assert_eq!(scenario.capacity_buffers.len(), 1);
    assert!(scenario.warnings.is_empty(), "{:?}", scenario.warnings);
}

#[test]
fn two_buffers_or_pod_templates_with_one_namespace_and_name_are_invalid() {
    let one = buffer("podTemplateRef: {name: chunk}, replicas: 1");
    let e = buffer_error("buffers.yaml", &format!("{one}---\n{}---\n{one}", pod("a")));
    assert_invalid(
        &e,
        "buffers.yaml",
        3,
        BUFFER,
        "metadata.name",
        &[
            "a second CapacityBuffer shop/headroom",
            "buffers.yaml, document 1",
        ],
    );
    let template = pod_template("cpu: '1'");
    let e = buffer_error("templates.yaml", &format!("{template}---\n{template}"));
    assert_invalid(
        &e,
        "templates.yaml",
        2,
        "PodTemplate shop/chunk",
        "metadata.name",
        &["templates.yaml, document 1"],
    );
    // The same names in another namespace are other objects.
    let other = |text: &str| text.replace("namespace: shop", "namespace: other");
    let scenario = buffers_loaded(
        "other.yaml",
        &format!(
            "{one}---\n{}---\n{template}---\n{}",
            other(&one),
            other(&template)
        ),
    );
    assert_eq!(scenario.capacity_buffers.len(), 2);
    assert_eq!(scenario.pod_templates.len(), 2);
}

#[test]
fn bad_quantity_in_a_pod_template_or_a_workload_template_is_invalid() {
    let e = error("template.yaml", &pod_template("cpu: 1.5.5"));
    assert_invalid(
        &e,
        "template.yaml",
        1,
        "PodTemplate shop/chunk",
        "template.spec.containers[0].resources.requests.cpu",
        &["1.5.5"],
    );
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n\
                      spec:\n  selector: {matchLabels: {app: web}}\n  template:\n    spec:\n      \
                      containers:\n      - name: app\n        resources: {requests: {memory: -1Gi}}\n";
    let e = error("deploy.yaml", deployment);
    assert_invalid(
        &e,
        "deploy.yaml",
        1,
        "Deployment shop/web",
        "spec.template.spec.containers[0].resources.requests.memory",
        &["negative"],
    );
}

#[test]
fn a_buffer_is_skipped_with_its_gate_off_whatever_it_says() {
    // Not validated either: upstream ignores the object while the gate is off.
    let text = format!(
        "{}---\n{}",
        pod("a"),
        buffer("podTemplateRef: {name: chunk}, replicas: -3")
    );
    let scenario = loaded("gated.yaml", &text);
    assert_eq!(scenario.capacity_buffers.len(), 0);
    assert_eq!(scenario.warnings.len(), 1);
    let text = scenario.warnings[0].to_string();
    for part in [
        "gated.yaml, document 2: ",
        "skipped autoscaling.x-k8s.io/v1beta1 CapacityBuffer shop/headroom",
        "the CapacityBuffer feature gate is off (--feature-gates CapacityBuffer=true)",
    ] {
        assert!(text.contains(part), "{text:?} should contain {part:?}");
    }
    // Without a namespace the buffer is `default`'s, as applied.
    let bare = buffer("replicas: 1").replace(", namespace: shop", "");
    let scenario = loaded("bare.yaml", &bare);
    assert!(
        scenario.warnings[0]
            .message
            .contains("CapacityBuffer default/headroom"),
        "{:?}",
        scenario.warnings
    );
}

#[test]
fn a_v1alpha1_buffer_is_not_read() {
    let text = buffer("podTemplateRef: {name: chunk}, replicas: 1").replace(
        "autoscaling.x-k8s.io/v1beta1",
        "autoscaling.x-k8s.io/v1alpha1",
    );
    let scenario = buffers_loaded("alpha.yaml", &text);
    assert_eq!(scenario.capacity_buffers.len(), 0);
    let text = scenario.warnings[0].to_string();
    assert!(
        text.contains("only autoscaling.x-k8s.io/v1beta1 CapacityBuffer is read"),
        "{text}"
    );
}

#[test]
fn pod_templates_and_workloads_are_read_silently_whatever_the_gate() {
    let text = format!(
        "{}---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web, namespace: shop}}\n\
         spec: {{replicas: 4, selector: {{matchLabels: {{app: web}}}}, template: {{}}}}\n---\n\
         apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: db, namespace: shop}}\n\
         spec: {{selector: {{matchLabels: {{app: db}}}}, template: {{}}}}\n---\n\
         apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {{name: web-1, namespace: shop}}\n\
         spec: {{selector: {{matchLabels: {{app: web}}}}}}\n",
        pod_template("cpu: '1'")
    );
    for scenario in [
        loaded("kinds.yaml", &text),
        buffers_loaded("kinds.yaml", &text),
    ] {
        assert!(scenario.warnings.is_empty(), "{:?}", scenario.warnings);
        assert_eq!(scenario.pod_templates.len(), 1);
        assert_eq!(scenario.deployments.len(), 1);
        assert_eq!(scenario.stateful_sets.len(), 1);
        assert_eq!(scenario.replica_sets.len(), 1);
        assert_eq!(scenario.deployments[0].source.document, 2);
        // No pod is made from a workload.
        assert_eq!(scenario.pods.len(), 0);
    }
}

// ---------------------------------------------------------------------------
// Limits

fn deep_yaml(depth: usize, kind_first: bool) -> String {
    let nested = format!("{}x{}", "[".repeat(depth), "]".repeat(depth));
    if kind_first {
        format!("apiVersion: example.com/v1\nkind: Widget\nspec: {nested}\n")
    } else {
        format!("spec: {nested}\napiVersion: example.com/v1\nkind: Widget\n")
    }
}

fn deep_json(depth: usize, kind_first: bool) -> String {
    let nested = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    if kind_first {
        format!("{{\"apiVersion\": \"example.com/v1\", \"kind\": \"Widget\", \"spec\": {nested}}}")
    } else {
        format!("{{\"spec\": {nested}, \"apiVersion\": \"example.com/v1\", \"kind\": \"Widget\"}}")
    }
}

#[test]
fn ten_thousand_deep_yaml_is_an_error_not_a_stack_overflow() {
    for kind_first in [true, false] {
        let e = on_small_stack(move || load("deep.yaml", &deep_yaml(10_000, kind_first)).map(drop));
        let e = e.expect_err("10,000 levels pass the depth limit");
        assert!(
            matches!(e, LoadError::Parse { ref file, document: Some(1), .. } if file == "deep.yaml"),
            "{e:?}"
        );
        assert_says(&e, &["deep.yaml", "document 1", "limit"]);
    }
}

#[test]
fn ten_thousand_deep_json_kind_last_is_an_error_not_a_stack_overflow() {
    let e = on_small_stack(|| load("deep.json", &deep_json(10_000, false)).map(drop));
    let e = e.expect_err("10,000 levels pass the depth limit");
    assert!(
        matches!(
            e,
            LoadError::Parse {
                document: Some(1),
                ..
            }
        ),
        "{e:?}"
    );
    assert_says(&e, &["deep.json", "document 1"]);
}

#[test]
fn ten_thousand_deep_json_kind_first_is_an_error() {
    let result = on_small_stack(|| load("deep.json", &deep_json(10_000, true)).map(|s| s.warnings));
    let e = result.expect_err("10,000 levels pass the depth limit");
    assert!(
        matches!(
            e,
            LoadError::Parse {
                document: Some(1),
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn deep_nesting_fits_a_small_stack() {
    // Loading or refusing are both fine; aborting the process is not.
    let nested = format!("{}1{}", "[".repeat(80), "]".repeat(80));
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: a}}\nspec:\n  bogus: {nested}\n  containers: []\n"
    );
    let _ = on_small_stack(move || load("pod.yaml", &pod).map(drop));
    for depth in [100, 200] {
        let _ = on_small_stack(move || load("deep.yaml", &deep_yaml(depth, true)).map(drop));
        let _ = on_small_stack(move || load("deep.yaml", &deep_yaml(depth, false)).map(drop));
        let _ = on_small_stack(move || load("deep.json", &deep_json(depth, false)).map(drop));
    }
    let text = format!("[{}1{}]", "{\"a\": ".repeat(128), "}".repeat(128));
    let _ = on_small_stack(move || load("deep.json", &text).map(drop));
}

#[test]
fn max_depth_refuses_a_deeper_yaml_document() {
    let options = LoadOptions::default().with_max_depth(8);
    let text = deep_yaml(10, true);
    let e = Scenario::from_str("d.yaml", &text, &options).unwrap_err();
    assert!(
        matches!(
            e,
            LoadError::Parse {
                document: Some(1),
                ..
            }
        ),
        "{e:?}"
    );
    assert_says(&e, &["d.yaml", "document 1"]);
    // Within the limit it loads, with a warning for the unknown kind.
    let scenario =
        Scenario::from_str("d.yaml", &deep_yaml(3, true), &options).expect("3 levels are fine");
    assert_eq!(scenario.warnings.len(), 1);
}

#[test]
fn max_depth_refuses_a_deeper_json_document() {
    let options = LoadOptions::default().with_max_depth(8);
    let e = Scenario::from_str("d.json", &deep_json(10, true), &options).unwrap_err();
    assert!(
        matches!(
            e,
            LoadError::Parse {
                document: Some(1),
                ..
            }
        ),
        "{e:?}"
    );
}

#[test]
fn file_over_the_size_limit_is_too_large() {
    let mut text = pod("a");
    while text.len() <= 1000 {
        text.push_str("# padding padding padding padding padding padding\n");
    }
    let tmp = TempFile::new("big.yaml", text.as_bytes());
    let options = LoadOptions::default().with_max_file_bytes(1000);
    let e = Scenario::load_files(&[&tmp.0], &options).unwrap_err();
    assert!(
        matches!(e, LoadError::TooLarge { ref file, size, limit: 1000 } if *file == tmp.name() && size > 1000),
        "{e:?}"
    );
    assert_says(&e, &[&tmp.name(), "1000"]);
    // The same through from_str, and a file at the limit is fine.
    let e = Scenario::from_str("big.yaml", &text, &options).unwrap_err();
    assert!(matches!(e, LoadError::TooLarge { .. }), "{e:?}");
    let small = TempFile::new("small.yaml", pod("a").as_bytes());
    Scenario::load_files(&[&small.0], &options).expect("under the limit");
}

// ---------------------------------------------------------------------------
// No panic on garbage

/// An edit of a text: delete, duplicate or swap characters at positions given as
/// fractions of its length.
#[derive(Clone, Debug)]
enum Edit {
    Delete(f64),
    Duplicate(f64, usize),
    Swap(f64, f64),
    Insert(f64, char),
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let at = |chars: &Vec<char>, f: f64| ((chars.len() as f64) * f) as usize % chars.len().max(1);
    for edit in edits {
        if chars.is_empty() {
            break;
        }
        match *edit {
            Edit::Delete(f) => {
                let i = at(&chars, f);
                chars.remove(i);
            }
            Edit::Duplicate(f, n) => {
                let i = at(&chars, f);
                let end = (i + n).min(chars.len());
                let copy: Vec<char> = chars[i..end].to_vec();
                chars.splice(i..i, copy);
            }
            Edit::Swap(f, g) => {
                let (i, j) = (at(&chars, f), at(&chars, g));
                chars.swap(i, j);
            }
            Edit::Insert(f, c) => {
                let i = at(&chars, f);
                chars.insert(i, c);
            }
        }
    }
    chars.into_iter().collect()
}

fn edit() -> impl Strategy<Value = Edit> {
    let special = prop::sample::select(vec![
        ':', '-', ' ', '\n', '[', ']', '{', '}', '&', '*', '\'', '"', '#', '!', '|', '>', '?',
        '\t', ',', '%', '@',
    ]);
    prop_oneof![
        (0.0..1.0f64).prop_map(Edit::Delete),
        (0.0..1.0f64, 1..40usize).prop_map(|(f, n)| Edit::Duplicate(f, n)),
        (0.0..1.0f64, 0.0..1.0f64).prop_map(|(f, g)| Edit::Swap(f, g)),
        (0.0..1.0f64, special).prop_map(|(f, c)| Edit::Insert(f, c)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        let _ = load("fuzz.yaml", &text);
    }

    #[test]
    fn arbitrary_yamlish_text_never_panics(text in "[-a-zA-Z0-9:{}\\[\\],&*!|>'\"#\n ]{0,200}") {
        let _ = load("fuzz.yaml", &text);
    }

    #[test]
    fn mutated_example_never_panics(edits in prop::collection::vec(edit(), 1..12)) {
        let text = apply(EXAMPLE, &edits);
        if let Err(e) = load("mutated.yaml", &text) {
            // Whatever the error, it names the file.
            prop_assert!(e.to_string().starts_with("mutated.yaml"), "{}", e);
        }
    }

    #[test]
    fn mutated_json_example_never_panics(edits in prop::collection::vec(edit(), 1..8)) {
        let text = apply(LIST_JSON, &edits);
        if let Err(e) = load("mutated.json", &text) {
            prop_assert!(e.to_string().starts_with("mutated.json"), "{}", e);
        }
    }
}

#[test]
fn instance_type_overhead_over_its_capacity_is_invalid() {
    let text = "apiVersion: karpenter.fake/v1alpha1\nkind: InstanceType\nmetadata: {name: tiny}\ncapacity: {cpu: '1', memory: 1Gi}\noverhead: {cpu: 1500m}\nofferings: [{zone: a, capacityType: spot, price: 0.1}]\n";
    let e = error("it.yaml", text);
    assert!(
        matches!(e, LoadError::Invalid { ref field, .. } if field == "overhead.cpu"),
        "{e:?}"
    );
    assert_says(
        &e,
        &["it.yaml", "InstanceType tiny", "overhead.cpu", "capacity"],
    );
}

#[test]
fn negative_init_container_limit_is_invalid() {
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n  containers: [{name: a}]\n  initContainers: [{name: i, resources: {limits: {memory: -1Gi}}}]\n";
    let e = error("neg.yaml", text);
    assert!(
        matches!(e, LoadError::Invalid { ref field, .. } if field == "spec.initContainers[0].resources.limits.memory"),
        "{e:?}"
    );
}

#[test]
fn more_documents_than_serde_saphyrs_default_budget_load() {
    // serde-saphyr refuses more than 1,024 documents by default; a scenario of
    // single-document pods easily has more.
    let text: String = (0..5_000)
        .map(|i| format!("---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}, namespace: default}}\nspec: {{containers: [{{name: a}}]}}\n"))
        .collect();
    let scenario = Scenario::from_str("many.yaml", &text, &LoadOptions::default()).expect("loads");
    assert_eq!(scenario.pods.len(), 5_000);
    assert_eq!(scenario.pods[4_999].source.document, 5_000);
}

#[test]
fn a_reserved_offering_needs_its_reservation_and_only_it_may_have_one() {
    let cases = [
        (
            "{zone: a, capacityType: reserved, price: 1, capacity: 2}",
            "offerings[0].reservationID",
            "required for a reserved offering",
        ),
        (
            "{zone: a, capacityType: reserved, price: 1, reservationID: cr-1}",
            "offerings[0].capacity",
            "required for a reserved offering",
        ),
        (
            "{zone: a, capacityType: on-demand, price: 1, reservationID: cr-1}",
            "offerings[0].reservationID",
            "only a reserved offering",
        ),
        (
            "{zone: a, capacityType: spot, price: 1, capacity: 3}",
            "offerings[0].capacity",
            "only a reserved offering",
        ),
        (
            "{zone: a, capacityType: reserved, price: 1, reservationID: 'not a value!', capacity: 1}",
            "offerings[0].reservationID",
            "not a value!",
        ),
    ];
    for (written, field, says) in cases {
        let e = error("it.yaml", &offering(written));
        assert_invalid(&e, "it.yaml", 1, "InstanceType it", field, &[says]);
    }
    // Two offerings of one zone, capacity type and reservation.
    let twice = instance_type(&format!(
        "{CAPACITY}offerings: [{{zone: a, capacityType: spot, price: 1}}, {{zone: a, capacityType: spot, price: 2}}]\n"
    ));
    let e = error("it.yaml", &twice);
    assert_invalid(
        &e,
        "it.yaml",
        1,
        "InstanceType it",
        "offerings[1]",
        &["repeats offerings[0]"],
    );
    // A misspelt field is refused, not dropped.
    let e = error(
        "it.yaml",
        &offering("{zone: a, capacityType: reserved, price: 1, reservationId: cr-1, capacity: 1}"),
    );
    assert_says(&e, &["it.yaml", "reservationId"]);
    // Two reservations in one zone are two offerings.
    loaded(
        "it.yaml",
        &instance_type(&format!(
            "{CAPACITY}offerings: [{{zone: a, capacityType: reserved, price: 1, reservationID: cr-1, capacity: 1}}, {{zone: a, capacityType: reserved, price: 1, reservationID: cr-2, capacity: 0}}]\n"
        )),
    );
}

#[test]
fn a_csi_node_count_is_not_negative_and_its_name_is_unique() {
    let csi = |name: &str, count: i64| {
        format!(
            "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {{name: {name}}}\nspec:\n  drivers:\n  - {{name: ebs.csi.aws.com, nodeID: {name}, allocatable: {{count: {count}}}}}\n"
        )
    };
    let e = error("csi.yaml", &csi("node-a", -1));
    assert_invalid(
        &e,
        "csi.yaml",
        1,
        "CSINode node-a",
        "spec.drivers[0].allocatable.count",
        &["-1 is negative"],
    );
    let twice = format!("{}---\n{}", csi("node-a", 1), csi("node-a", 2));
    assert_says(&error("csi.yaml", &twice), &["CSINode", "node-a"]);
    let scenario = loaded("csi.yaml", &csi("node-a", 25));
    assert_eq!(scenario.csi_nodes.len(), 1);
}

#[test]
fn a_namespace_is_read_with_its_labels_and_bad_ones_are_named() {
    let namespace = |name: &str, labels: &str| {
        format!(
            "apiVersion: v1\nkind: Namespace\nmetadata: {{name: {name}, labels: {{{labels}}}}}\n"
        )
    };
    let scenario = loaded("ns.yaml", &namespace("team-a", "team: a"));
    assert!(scenario.warnings.is_empty(), "{:?}", scenario.warnings);
    assert_eq!(scenario.namespaces.len(), 1);
    let labels = scenario.namespaces[0].object.metadata.labels.clone();
    assert_eq!(
        labels.unwrap_or_default().get("team").map(String::as_str),
        Some("a")
    );

    let e = error("ns.yaml", &namespace("team-a", "\"bad key!\": a"));
    assert_invalid(
        &e,
        "ns.yaml",
        1,
        "Namespace team-a",
        "metadata.labels.bad key!",
        &[],
    );
    let e = error("ns.yaml", &namespace("team-a", "team: \"-a-\""));
    assert_invalid(
        &e,
        "ns.yaml",
        1,
        "Namespace team-a",
        "metadata.labels.team",
        &["-a-"],
    );
    let e = error(
        "ns.yaml",
        &namespace("team-a", "kubernetes.io/metadata.name: team-b"),
    );
    assert_invalid(
        &e,
        "ns.yaml",
        1,
        "Namespace team-a",
        "metadata.labels.kubernetes.io/metadata.name",
        &["team-b", "team-a"],
    );
    let e = error(
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {labels: {team: a}}\n",
    );
    assert_invalid(
        &e,
        "ns.yaml",
        1,
        "Namespace (unnamed)",
        "metadata.name",
        &[],
    );
    let twice = format!(
        "{}---\n{}",
        namespace("team-a", "team: a"),
        namespace("team-a", "team: b")
    );
    assert_says(&error("ns.yaml", &twice), &["Namespace", "team-a"]);
}

//! YAML aliases are judged by what they expand to, as go-yaml judges them: files
//! that reuse objects (PyYAML writes an anchor and an alias wherever one object is
//! used twice) load whatever their number of aliases, and the billion-laughs family
//! is refused from its text, before anything is expanded.

use karpenter_scenario::{LoadError, LoadOptions, Scenario};

fn load(name: &str, text: &str) -> Result<Scenario, LoadError> {
    Scenario::from_str(name, text, &LoadOptions::default())
}

/// A pod as PyYAML's `yaml.dump` writes it (keys sorted, two-space lists) at
/// `indent`, whose spread selector is its own labels object: an anchor on the
/// labels, an alias in the selector.
fn pyyaml_pod(i: usize, anchor: &str, first: &str, indent: &str) -> String {
    let lines = [
        "apiVersion: v1".to_string(),
        "kind: Pod".to_string(),
        "metadata:".to_string(),
        format!("  labels: &{anchor}"),
        "    app: web".to_string(),
        format!("    shard: '{}'", i % 7),
        format!("  name: web-{i}"),
        "  namespace: default".to_string(),
        "spec:".to_string(),
        "  containers:".to_string(),
        "  - name: app".to_string(),
        "    resources:".to_string(),
        "      requests:".to_string(),
        "        cpu: 100m".to_string(),
        "        memory: 128Mi".to_string(),
        "  topologySpreadConstraints:".to_string(),
        "  - labelSelector:".to_string(),
        format!("      matchLabels: *{anchor}"),
        "    maxSkew: 1".to_string(),
        "    topologyKey: topology.kubernetes.io/zone".to_string(),
        "    whenUnsatisfiable: DoNotSchedule".to_string(),
    ];
    let mut text = String::new();
    for (n, line) in lines.iter().enumerate() {
        text.push_str(if n == 0 { first } else { indent });
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// `pods` pods as `yaml.dump_all` writes them: a document each, every document's
/// anchors starting again at `id001`.
fn pyyaml_documents(pods: usize) -> String {
    (0..pods)
        .map(|i| pyyaml_pod(i, "id001", "", ""))
        .collect::<Vec<_>>()
        .join("---\n")
}

/// `pods` pods as `yaml.dump` writes a `kind: List`: one document, anchors `id001`
/// to `id20000` and on.
fn pyyaml_list(pods: usize) -> String {
    let mut text = String::from("apiVersion: v1\nitems:\n");
    for i in 0..pods {
        text.push_str(&pyyaml_pod(i, &format!("id{:03}", i + 1), "- ", "  "));
    }
    text.push_str("kind: List\n");
    text
}

#[track_caller]
fn assert_selectors_are_the_labels(scenario: &Scenario, pods: usize) {
    assert_eq!(scenario.pods.len(), pods);
    for pod in [&scenario.pods[0], &scenario.pods[pods - 1]] {
        let labels = pod.metadata.labels.clone().expect("labels");
        let spec = pod.spec.as_ref().expect("spec");
        let spread = &spec.topology_spread_constraints.as_ref().expect("spread")[0];
        let selector = spread.label_selector.as_ref().expect("selector");
        assert_eq!(selector.match_labels.as_ref(), Some(&labels));
        assert_eq!(labels.len(), 2);
    }
}

#[test]
fn a_generated_file_of_20000_pod_documents_loads() {
    let scenario = load("pods.yaml", &pyyaml_documents(20_000)).expect("loads");
    assert_selectors_are_the_labels(&scenario, 20_000);
}

#[test]
fn a_generated_list_of_20000_pods_with_20000_anchors_loads() {
    let scenario = load("list.yaml", &pyyaml_list(20_000)).expect("loads");
    assert_selectors_are_the_labels(&scenario, 20_000);
}

#[test]
fn one_anchor_used_by_every_pod_of_a_list_loads() {
    // One labels object shared by 15,000 pods: 15,000 aliases of one anchor (the
    // deserializer's own heuristic allows ten per anchor), and as many merge keys.
    let mut text = String::from(
        "apiVersion: v1\nkind: List\nmetadata: {}\nshared: &labels {app: web, tier: front}\n\
         defaults: &defaults {namespace: default}\nitems:\n",
    );
    for i in 0..15_000 {
        text.push_str(&format!(
            "- apiVersion: v1\n  kind: Pod\n  metadata: {{<<: *defaults, name: web-{i}, labels: *labels}}\n  \
             spec: {{containers: [{{name: app}}]}}\n"
        ));
    }
    let scenario = load("shared.yaml", &text).expect("loads");
    assert_eq!(scenario.pods.len(), 15_000);
    let last = &scenario.pods[14_999].metadata;
    assert_eq!(last.namespace.as_deref(), Some("default"));
    assert_eq!(last.labels.as_ref().map(|l| l.len()), Some(2));
}

#[track_caller]
fn assert_refused(e: &LoadError, file: &str, document: usize, line: u64) {
    assert!(
        matches!(e, LoadError::Parse { file: f, document: Some(d), line: Some(l), message, .. }
            if f == file && *d == document && *l == line && message.contains("excessive aliasing")),
        "expected excessive aliasing in {file}, document {document}, line {line}; got {e:?}"
    );
    let text = e.to_string();
    assert!(
        text.contains(&format!("{file}, document {document}, line {line}")),
        "{text}"
    );
}

#[track_caller]
fn assert_says_column(e: &LoadError, column: u64) {
    assert!(
        matches!(e, LoadError::Parse { column: Some(c), .. } if *c == column),
        "expected column {column}: {e:?}"
    );
}

/// Nine levels of ten aliases each: 10^9 scalars if expanded.
fn billion_laughs(api_version_first: bool) -> String {
    let mut text = String::new();
    if api_version_first {
        text.push_str("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\n");
    }
    text.push_str("data:\n  l0: &l0 lol\n");
    for level in 1..=9 {
        let aliases = vec![format!("*l{}", level - 1); 10].join(", ");
        text.push_str(&format!("  l{level}: &l{level} [{aliases}]\n"));
    }
    if !api_version_first {
        text.push_str("apiVersion: v1\nkind: ConfigMap\n");
    }
    text
}

#[test]
fn billion_laughs_is_refused_where_its_share_passes_the_limit() {
    // Level 3 leaves the document at 2,430 of 2,480 nodes from aliases (98 %);
    // level 4's second alias takes it to 6,872 of 6,926 (99.2 %).
    let e = load("lol.yaml", &billion_laughs(true)).unwrap_err();
    assert_refused(&e, "lol.yaml", 1, 9);
    assert_says_column(&e, 17);
    // Without the eight nodes of kind and name first, level 4's first alias does.
    let e = load("lol-late.yaml", &billion_laughs(false)).unwrap_err();
    assert_refused(&e, "lol-late.yaml", 1, 6);
    assert_says_column(&e, 12);
}

#[test]
fn billion_laughs_in_a_later_document_names_that_document() {
    let text = format!("{}---\n{}", pyyaml_documents(3), billion_laughs(true));
    let e = load("third.yaml", &text).unwrap_err();
    // Three pods of 21 lines and three separators before it.
    assert_refused(&e, "third.yaml", 4, 3 * 21 + 3 + 9);
}

#[test]
fn a_wide_bomb_of_one_big_anchor_is_refused() {
    // A list of 100,000 scalars aliased 10,000 times: 10^9 nodes if expanded.
    let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nbig: &big [");
    text.push_str(&vec!["x"; 100_000].join(","));
    text.push_str("]\ncopies:\n");
    for _ in 0..10_000 {
        text.push_str("- *big\n");
    }
    let e = load("wide.yaml", &text).unwrap_err();
    // 100,010 own nodes, then each alias adds 100,002: at the 8th, 800,008 of
    // 900,026 nodes (89 %) is more than the 87 % a document that large may take.
    assert_refused(&e, "wide.yaml", 1, 4 + 8);
}

#[test]
fn a_bomb_of_merge_keys_is_refused() {
    let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nm0: &m0 {a: 1, b: 2, c: 3}\n");
    for level in 1..=12 {
        let previous = level - 1;
        text.push_str(&format!(
            "m{level}: &m{level} {{<<: [*m{previous}, *m{previous}], k{level}: [*m{previous}, *m{previous}, *m{previous}]}}\n"
        ));
    }
    let e = load("merge.yaml", &text).unwrap_err();
    assert!(
        matches!(&e, LoadError::Parse { message, .. } if message.contains("excessive aliasing")),
        "{e:?}"
    );
}

#[test]
fn a_small_document_may_take_nearly_all_its_nodes_from_aliases() {
    // 1 anchor of 30 nodes aliased 40 times: 1,200 of 1,300 nodes (92 %).
    let mut text = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: reuse}\n");
    text.push_str("data: &d {");
    text.push_str(
        &(0..15)
            .map(|i| format!("k{i}: v"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    text.push_str("}\ncopies: [");
    text.push_str(&vec!["*d"; 40].join(", "));
    text.push_str("]\n");
    let scenario = load("reuse.yaml", &text).expect("loads");
    // A ConfigMap is not read, only skipped with a warning.
    assert_eq!(scenario.object_count(), 0);
}

#[test]
fn many_small_documents_of_nearly_all_aliases_are_refused_as_a_file() {
    // Each document passes go-yaml's rule (9,900 of 10,105 nodes from aliases,
    // 98 %), but 500 together would expand 50,000 nodes of text to 5,000,000.
    let mut one = String::from("apiVersion: v1\nkind: ConfigMap\na: &a [");
    one.push_str(&vec!["x"; 89].join(","));
    one.push_str("]\nb: [");
    one.push_str(&vec!["*a"; 110].join(","));
    one.push_str("]\n");
    assert!(load("one.yaml", &one).is_ok());
    let file = vec![one.as_str(); 500].join("---\n");
    let e = load("many.yaml", &file).unwrap_err();
    assert!(
        matches!(&e, LoadError::Parse { file, document: None, message, .. }
            if file == "many.yaml" && message.contains("the file's")),
        "{e:?}"
    );
}

//! Behaviour of upstream's `taints_test.go` and Kubernetes' toleration rules.

use k8s_openapi::api::core::v1::{Taint, Toleration};

use crate::scheduling::{
    DISRUPTED_NO_SCHEDULE_TAINT, KNOWN_EPHEMERAL_TAINTS, TAINT_EXTERNAL_CLOUD_PROVIDER,
    is_known_ephemeral_taint, merge_taints, tolerates, tolerates_all, uninitialized_node_taints,
};

fn taint(key: &str, value: &str, effect: &str) -> Taint {
    Taint {
        key: key.to_owned(),
        value: (!value.is_empty()).then(|| value.to_owned()),
        effect: effect.to_owned(),
        time_added: None,
    }
}

fn toleration(key: &str, operator: &str, value: &str, effect: &str) -> Toleration {
    let some = |s: &str| (!s.is_empty()).then(|| s.to_owned());
    Toleration {
        key: some(key),
        operator: some(operator),
        value: some(value),
        effect: some(effect),
        toleration_seconds: None,
    }
}

#[test]
fn known_ephemeral_taints() {
    assert!(is_known_ephemeral_taint(&taint(
        "node.kubernetes.io/not-ready",
        "",
        "NoSchedule"
    )));
    assert!(is_known_ephemeral_taint(&taint(
        "node.kubernetes.io/not-ready",
        "",
        "NoExecute"
    )));
    assert!(is_known_ephemeral_taint(&taint(
        "node.kubernetes.io/unreachable",
        "",
        "NoSchedule"
    )));
    assert!(!is_known_ephemeral_taint(&taint(
        "node.kubernetes.io/unreachable",
        "",
        "NoExecute"
    )));
    // Matched by key and effect, whatever the value.
    assert!(is_known_ephemeral_taint(&taint(
        TAINT_EXTERNAL_CLOUD_PROVIDER,
        "",
        "NoSchedule"
    )));
    assert!(is_known_ephemeral_taint(&taint(
        "karpenter.sh/unregistered",
        "",
        "NoExecute"
    )));
    assert!(is_known_ephemeral_taint(&taint(
        "readiness.k8s.io/my-rule",
        "",
        "NoSchedule"
    )));
    assert!(is_known_ephemeral_taint(&taint(
        "readiness.k8s.io/another",
        "",
        "NoExecute"
    )));
    assert!(!is_known_ephemeral_taint(&taint(
        "example.com/some-taint",
        "",
        "NoSchedule"
    )));
    assert!(!is_known_ephemeral_taint(&taint(
        "foo/readiness.k8s.io/bar",
        "",
        "NoSchedule"
    )));
    assert_eq!(
        KNOWN_EPHEMERAL_TAINTS[3].to_taint().value.as_deref(),
        Some("true")
    );
}

#[test]
fn uninitialized_nodes_ignore_ephemeral_and_startup_taints() {
    let taints = [
        taint("node.kubernetes.io/not-ready", "", "NoSchedule"),
        taint("example.com/startup", "pending", "NoSchedule"),
        taint("dedicated", "ml", "NoSchedule"),
    ];
    let startup = [taint("example.com/startup", "", "NoSchedule")];
    let left: Vec<_> = uninitialized_node_taints(&taints, &startup).collect();
    assert_eq!(left, [&taints[2]]);
}

#[test]
fn tolerations_match_as_kubernetes_does() {
    let gpu = taint("gpu", "true", "NoSchedule");
    let yes = [
        toleration("gpu", "Equal", "true", "NoSchedule"),
        toleration("gpu", "", "true", ""),
        toleration("gpu", "Exists", "", ""),
        toleration("", "Exists", "", ""),
        toleration("", "Exists", "", "NoSchedule"),
    ];
    let no = [
        toleration("gpu", "Equal", "false", "NoSchedule"),
        toleration("gpu", "Equal", "true", "NoExecute"),
        toleration("tpu", "Exists", "", ""),
        toleration("gpu", "", "", ""),
        toleration("gpu", "Like", "true", ""),
    ];
    yes.iter()
        .for_each(|t| assert!(tolerates(t, &gpu), "{t:?}"));
    no.iter()
        .for_each(|t| assert!(!tolerates(t, &gpu), "{t:?}"));
    // An empty value equals an absent one.
    assert!(tolerates(
        &toleration("x", "Equal", "", ""),
        &taint("x", "", "NoSchedule")
    ));
}

#[test]
fn numeric_toleration_operators() {
    let generation = |value: &str| taint("generation", value, "NoSchedule");
    let gt = toleration("generation", "Gt", "5", "");
    let lt = toleration("generation", "Lt", "5", "");
    assert!(tolerates(&gt, &generation("6")));
    assert!(!tolerates(&gt, &generation("5")));
    assert!(tolerates(&lt, &generation("-1")));
    assert!(!tolerates(&lt, &generation("5")));
    for malformed in ["06", "+6", "-0", "six", "", "99999999999999999999"] {
        assert!(!tolerates(&gt, &generation(malformed)), "{malformed}");
    }
    assert!(!tolerates(
        &toleration("generation", "Gt", "05", ""),
        &generation("6")
    ));
}

#[test]
fn tolerates_all_names_the_first_untolerated_taint() {
    let taints = [
        taint("a", "", "NoSchedule"),
        taint("b", "x", "PreferNoSchedule"),
        taint("c", "", "NoExecute"),
    ];
    let tolerations = [toleration("a", "Exists", "", "")];
    let error = tolerates_all(&taints, &tolerations).unwrap_err();
    assert_eq!(
        error.to_string(),
        "did not tolerate taint b=x:PreferNoSchedule"
    );
    assert!(tolerates_all(&taints, &[toleration("", "Exists", "", "")]).is_ok());
    assert!(tolerates_all(&[], &[]).is_ok());
    let disrupted = DISRUPTED_NO_SCHEDULE_TAINT.to_taint();
    assert_eq!(
        tolerates_all(&[disrupted], &[]).unwrap_err().to_string(),
        "did not tolerate taint karpenter.sh/disrupted:NoSchedule"
    );
}

#[test]
fn merge_keeps_the_first_of_each_key_and_effect() {
    let merged = merge_taints(
        &[taint("a", "1", "NoSchedule")],
        &[taint("a", "2", "NoSchedule"), taint("a", "2", "NoExecute")],
    );
    assert_eq!(
        merged,
        [taint("a", "1", "NoSchedule"), taint("a", "2", "NoExecute")]
    );
}

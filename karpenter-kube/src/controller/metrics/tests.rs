use super::*;

/// The lines of `text` starting with `prefix`.
fn lines_of<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.starts_with(prefix)).collect()
}

#[test]
fn a_fresh_registry_writes_every_family_header_in_name_order() {
    let version = env!("CARGO_PKG_VERSION");
    let expected = format!(
        "# HELP karpenter_build_info Always 1, labeled by the version of karpenter running.\n\
         # TYPE karpenter_build_info gauge\n\
         karpenter_build_info{{version=\"{version}\"}} 1\n\
         # HELP karpenter_cluster_state_node_count Nodes in the controller's view of the cluster.\n\
         # TYPE karpenter_cluster_state_node_count gauge\n\
         # HELP karpenter_cluster_state_synced 1 when the controller's view of the cluster has \
         synced with the API server, else 0.\n\
         # TYPE karpenter_cluster_state_synced gauge\n\
         # HELP karpenter_nodeclaims_created_total NodeClaims created, by NodePool and by why \
         they were created.\n\
         # TYPE karpenter_nodeclaims_created_total counter\n\
         # HELP karpenter_nodeclaims_disrupted_total NodeClaims disrupted, by NodePool and by \
         disruption reason.\n\
         # TYPE karpenter_nodeclaims_disrupted_total counter\n\
         # HELP karpenter_nodeclaims_terminated_total NodeClaims terminated, by NodePool and by \
         why they were terminated.\n\
         # TYPE karpenter_nodeclaims_terminated_total counter\n\
         # HELP karpenter_scheduler_queue_depth Pods waiting to be scheduled.\n\
         # TYPE karpenter_scheduler_queue_depth gauge\n\
         # HELP karpenter_scheduler_scheduling_duration_seconds Time taken by scheduling \
         simulations, in seconds.\n\
         # TYPE karpenter_scheduler_scheduling_duration_seconds histogram\n\
         # HELP karpenter_voluntary_disruption_decision_evaluation_duration_seconds Time taken \
         to evaluate a disruption decision, in seconds, by disruption reason and consolidation \
         type.\n\
         # TYPE karpenter_voluntary_disruption_decision_evaluation_duration_seconds histogram\n"
    );
    assert_eq!(Metrics::new().render(), expected);
}

#[test]
fn claim_counters_count_by_nodepool_and_reason() {
    let metrics = Metrics::new();
    metrics.claim_created("default", reason::PROVISIONING);
    metrics.claim_created("default", reason::PROVISIONING);
    metrics.claim_created("gpu", reason::CONSOLIDATION);
    metrics.claim_terminated("default", reason::DRIFT);
    metrics.claim_disrupted("default", reason::EMPTINESS);
    let text = metrics.render();
    assert_eq!(
        lines_of(&text, "karpenter_nodeclaims_"),
        [
            "karpenter_nodeclaims_created_total{nodepool=\"default\",reason=\"provisioning\"} 2",
            "karpenter_nodeclaims_created_total{nodepool=\"gpu\",reason=\"consolidation\"} 1",
            "karpenter_nodeclaims_disrupted_total{nodepool=\"default\",reason=\"emptiness\"} 1",
            "karpenter_nodeclaims_terminated_total{nodepool=\"default\",reason=\"drift\"} 1",
        ]
    );
}

#[test]
fn gauges_hold_the_last_value() {
    let metrics = Metrics::new();
    metrics.set_pending_pods(12);
    metrics.set_pending_pods(3);
    metrics.set_cluster_state(5, true);
    let text = metrics.render();
    assert_eq!(
        lines_of(&text, "karpenter_scheduler_queue_depth"),
        ["karpenter_scheduler_queue_depth{controller=\"provisioner\"} 3"]
    );
    assert_eq!(
        lines_of(&text, "karpenter_cluster_state_"),
        [
            "karpenter_cluster_state_node_count 5",
            "karpenter_cluster_state_synced 1"
        ]
    );
    metrics.set_cluster_state(0, false);
    assert!(
        metrics
            .render()
            .contains("\nkarpenter_cluster_state_synced 0\n")
    );
}

#[test]
fn scheduling_durations_fill_the_upstream_buckets() {
    let metrics = Metrics::new();
    metrics.observe_scheduling(Duration::from_millis(250));
    metrics.observe_scheduling(Duration::from_secs(700));
    let text = metrics.render();
    let name = "karpenter_scheduler_scheduling_duration_seconds";
    let buckets = lines_of(&text, &format!("{name}_bucket"));
    assert_eq!(buckets.len(), DURATION_BUCKETS.len() + 1);
    assert_eq!(
        buckets[..2],
        [
            format!("{name}_bucket{{controller=\"provisioner\",le=\"0.005\"}} 0"),
            format!("{name}_bucket{{controller=\"provisioner\",le=\"0.01\"}} 0"),
        ]
    );
    assert_eq!(
        buckets[7],
        format!("{name}_bucket{{controller=\"provisioner\",le=\"0.25\"}} 1")
    );
    assert_eq!(
        buckets[buckets.len() - 2..],
        [
            format!("{name}_bucket{{controller=\"provisioner\",le=\"600\"}} 1"),
            format!("{name}_bucket{{controller=\"provisioner\",le=\"+Inf\"}} 2"),
        ]
    );
    assert_eq!(
        lines_of(&text, &format!("{name}_s"))[..],
        [format!("{name}_sum{{controller=\"provisioner\"}} 700.25")]
    );
    assert_eq!(
        lines_of(&text, &format!("{name}_count"))[..],
        [format!("{name}_count{{controller=\"provisioner\"}} 2")]
    );
}

#[test]
fn disruption_evaluations_are_labeled_by_consolidation_type_and_reason() {
    let metrics = Metrics::new();
    metrics.observe_disruption_evaluation(reason::CONSOLIDATION, "single", Duration::from_secs(2));
    metrics.observe_disruption_evaluation(reason::DRIFT, "", Duration::from_millis(5));
    let text = metrics.render();
    let name = "karpenter_voluntary_disruption_decision_evaluation_duration_seconds";
    assert_eq!(
        lines_of(&text, &format!("{name}_count")),
        [
            format!("{name}_count{{consolidation_type=\"\",reason=\"drift\"}} 1"),
            format!("{name}_count{{consolidation_type=\"single\",reason=\"consolidation\"}} 1"),
        ]
    );
    assert!(text.contains(&format!(
        "\n{name}_bucket{{consolidation_type=\"\",reason=\"drift\",le=\"0.005\"}} 1\n"
    )));
    assert!(text.contains(&format!(
        "\n{name}_bucket{{consolidation_type=\"single\",reason=\"consolidation\",le=\"1.75\"}} 0\n\
         {name}_bucket{{consolidation_type=\"single\",reason=\"consolidation\",le=\"2\"}} 1\n"
    )));
}

#[test]
fn metrics_are_shared_across_threads() {
    let metrics = Arc::new(Metrics::new());
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let metrics = metrics.clone();
            std::thread::spawn(move || {
                for _ in 0..250 {
                    metrics.claim_created("default", reason::PROVISIONING);
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert!(metrics.render().contains(
        "\nkarpenter_nodeclaims_created_total{nodepool=\"default\",reason=\"provisioning\"} 1000\n"
    ));
}

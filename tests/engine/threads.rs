//! Planning on several threads decides exactly as planning on one: the same
//! commands in the same order, the same refusals, the same blocked nodes.
//! The clusters are the scale benchmark's shape (many candidates, a
//! multi-node binary search, single-node batches) and the disruption
//! benchmark's (hostname anti-affinity, tighter nodes).

use k8s_openapi::jiff::Timestamp;
use karpenter::core::disruption::{
    DisruptionOptions, first_command_explained, plan_disruption, single_node_options,
};
use karpenter::core::provisioning::plan_provisioning;
use karpenter::core::snapshot::Snapshot;
use karpenter::fake::generate::running::running_cluster;
use karpenter::fake::generate::scale::scale_cluster;
use karpenter::fake::generate::workload::diverse_pods;

fn now() -> Timestamp {
    "2026-06-01T00:00:00Z".parse().expect("a timestamp")
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
}

/// Runs `f` on one thread and on four, and asserts the answers are equal.
fn same_on_any_pool<T: PartialEq + std::fmt::Debug + Send>(f: impl Fn() -> T + Sync) {
    let one = pool(1).install(&f);
    let four = pool(4).install(&f);
    assert_eq!(one, four);
}

fn clusters() -> Vec<Snapshot> {
    vec![scale_cluster(300, 7), running_cluster(120, 2_400, 11)]
}

#[test]
fn the_plan_is_the_same_on_any_number_of_threads() {
    for cluster in clusters() {
        same_on_any_pool(|| plan_disruption(&cluster, now()));
    }
}

#[test]
fn single_node_options_and_the_first_command_are_the_same_on_any_number_of_threads() {
    for cluster in clusters() {
        same_on_any_pool(|| single_node_options(&cluster, now()));
        same_on_any_pool(|| {
            first_command_explained(&cluster, now(), &DisruptionOptions::default())
        });
    }
}

#[test]
fn provisioning_is_the_same_on_any_number_of_threads() {
    let cluster = scale_cluster(200, 3).with_pods(diverse_pods(600, 5));
    same_on_any_pool(|| plan_provisioning(&cluster));
}

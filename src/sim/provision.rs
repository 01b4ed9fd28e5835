//! `karpenter-sim provision`'s table: the new claims, the pods placed on existing
//! capacity, the pods left unschedulable with why, and the total price.

use std::fmt::Write as _;

use karpenter_core::provisioning::{BufferPlacement, ProvisioningPlan};

/// The plan as a short table for a person.
pub fn plan_table(plan: &ProvisioningPlan) -> String {
    let mut out = String::new();
    if plan.node_claims.is_empty() {
        out.push_str("no new node claims\n");
    } else {
        let _ = writeln!(
            out,
            "{:<20} {:<28} {:<16} {:<10} {:>10} {:>5}",
            "NODEPOOL", "INSTANCE TYPE", "ZONE", "CAPACITY", "PRICE/H", "PODS"
        );
        for claim in &plan.node_claims {
            let (instance_type, zone, capacity_type, price) = match &claim.launch {
                Some(l) => (
                    l.instance_type.as_str(),
                    l.zone.as_str(),
                    l.capacity_type.as_str(),
                    format!("{:.4}", l.price),
                ),
                None => ("-", "-", "-", "-".to_string()),
            };
            let buffered: u32 = claim.capacity_buffers.values().sum();
            let buffered = if buffered > 0 {
                format!(" +{buffered} buffer")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "{:<20} {instance_type:<28} {zone:<16} {capacity_type:<10} {price:>10} {:>5}{buffered}",
                claim.node_pool,
                claim.pods.len()
            );
        }
    }
    for node in &plan.existing_nodes {
        let _ = writeln!(out, "existing node {}: {} pods", node.name, node.pods.len());
    }
    if !plan.static_removals.is_empty() {
        let _ = writeln!(out, "\nstatic NodePool claims removed:");
        for removal in &plan.static_removals {
            let node = removal.node.as_deref().unwrap_or("no node yet");
            let _ = writeln!(
                out,
                "  {} ({}, {node}): {}",
                removal.node_claim, removal.node_pool, removal.reason
            );
        }
    }
    if !plan.capacity_buffers.is_empty() {
        let _ = writeln!(out, "\ncapacity buffers:");
        for buffer in &plan.capacity_buffers {
            let _ = writeln!(out, "  {}", buffer_line(buffer));
        }
    }
    if !plan.unschedulable.is_empty() {
        let _ = writeln!(out, "\nunschedulable pods:");
        for pod in &plan.unschedulable {
            let _ = writeln!(out, "  {}: {}", pod.pod, pod.reason);
        }
    }
    let _ = writeln!(
        out,
        "\ntotal price per hour: {:.4}",
        plan.total_price_per_hour
    );
    if let Some(bound) = plan.lower_bound_per_hour {
        let _ = writeln!(out, "lower bound per hour: {bound:.4}");
    }
    out
}

/// One buffer's line: where its chunks went, or why it has none.
fn buffer_line(buffer: &BufferPlacement) -> String {
    if let Some(why) = &buffer.message {
        return format!("{}: {} ({why}), no chunks", buffer.buffer, buffer.ready);
    }
    let existing: u32 = buffer.existing_nodes.values().sum();
    let mut line = format!(
        "{}: {} chunks, {existing} on existing nodes, {} on new claims",
        buffer.buffer, buffer.replicas, buffer.new_claims
    );
    if buffer.unschedulable > 0 {
        let _ = write!(line, ", {} unschedulable", buffer.unschedulable);
    }
    if let Some(condition) = &buffer.provisioning {
        let _ = write!(line, " ({condition})");
    }
    line
}

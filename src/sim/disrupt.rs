//! `karpenter-sim disrupt`'s table: one line per command with its savings,
//! one per drifted candidate with why, one per replacement, then one per
//! blocked node.

use std::fmt::Write as _;

use karpenter_core::disruption::DisruptionPlan;

/// The plan as a short table for a person.
pub fn disruption_table(plan: &DisruptionPlan) -> String {
    let mut out = String::new();
    if plan.commands.is_empty() {
        out.push_str("no disruption\n");
    }
    for (i, command) in plan.commands.iter().enumerate() {
        let action = if command.replacements.is_empty() {
            "delete"
        } else {
            "replace"
        };
        let _ = writeln!(
            out,
            "{}. {:?}: {action} {} (saves {:.4}/h)",
            i + 1,
            command.reason,
            command.candidates.join(", "),
            command.savings_per_hour
        );
        for cause in &command.drift {
            let _ = writeln!(
                out,
                "   {} drifted: {} ({})",
                cause.node, cause.reason, cause.detail
            );
        }
        for claim in &command.replacements {
            let launch = claim.launch.as_ref().map_or_else(
                || "no launch".to_string(),
                |l| {
                    format!(
                        "{} {} {} {:.4}/h",
                        l.instance_type, l.zone, l.capacity_type, l.price
                    )
                },
            );
            let buffered: u32 = claim.capacity_buffers.values().sum();
            let buffered = if buffered > 0 {
                format!(" and {buffered} buffer chunks")
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "   with a {} node: {launch}, {} pods{buffered}",
                claim.node_pool,
                claim.pods.len()
            );
        }
    }
    if !plan.blocked.is_empty() {
        let _ = writeln!(out, "\nblocked:");
        for blocked in &plan.blocked {
            let _ = writeln!(out, "  {}: {}", blocked.node, blocked.reason);
        }
    }
    out
}

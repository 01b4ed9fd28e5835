//! AL2: the class's parts, then a shell part running the EKS bootstrap
//! script (upstream's `bootstrap.EKS`).

use std::net::Ipv4Addr;

use super::args::kubelet_extra_args;
use super::mime::{self, Part};
use super::{Resolved, UserDataError, custom_parts};

/// The content type of shell parts, upstream's spelling.
pub(super) const SHELL: &str = "text/x-shellscript; charset=\"us-ascii\"";

pub(super) fn user_data(resolved: &Resolved<'_>) -> Result<String, UserDataError> {
    let mut parts = match resolved.custom() {
        Some(data) if mime::looks_like_mime(data) => custom_parts(data)?,
        // A bare script becomes a shell part of its own.
        Some(data) => vec![Part::new(SHELL, data)],
        None => Vec::new(),
    };
    for part in &mut parts {
        // Go's multipart writer emits a part's headers sorted by name.
        part.headers.sort_by(|a, b| a.0.cmp(&b.0));
    }
    parts.push(Part::new(SHELL, bootstrap_script(resolved)));
    Ok(mime::serialize(&parts))
}

/// The bootstrap script: one `/etc/eks/bootstrap.sh` call, one flag a line.
fn bootstrap_script(resolved: &Resolved<'_>) -> String {
    let input = resolved.input;
    let mut script = String::from(
        "#!/bin/bash -xe\n\
         exec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n",
    );
    let ca = input
        .ca_bundle
        .as_deref()
        .map(|ca| format!("--b64-cluster-ca '{ca}'"))
        .unwrap_or_default();
    script.push_str(&format!(
        "/etc/eks/bootstrap.sh '{}' --apiserver-endpoint '{}' {ca}",
        input.cluster_name, input.cluster_endpoint
    ));
    let mut flags: Vec<String> = Vec::new();
    if let Some(dns) = resolved.cluster_dns() {
        // Upstream takes anything that is not an IPv4 address as IPv6.
        if dns.parse::<Ipv4Addr>().is_err() {
            flags.push("--ip-family ipv6".to_owned());
        }
        flags.push(format!("--dns-cluster-ip '{dns}'"));
    }
    let kubelet = resolved.kubelet.as_ref();
    if kubelet
        .and_then(|k| k.max_pods.as_ref())
        .and_then(|m| m.count())
        .is_some()
    {
        // Our --max-pods replaces the ENI-based value the script computes.
        flags.push("--use-max-pods false".to_owned());
    }
    let extra = kubelet_extra_args(&input.labels, &resolved.taints, kubelet);
    if !extra.is_empty() {
        flags.push(format!("--kubelet-extra-args '{}'", extra.join(" ")));
    }
    if resolved.raid0() {
        flags.push("--local-disks raid0".to_owned());
    }
    for flag in flags {
        script.push_str(" \\\n");
        script.push_str(&flag);
    }
    script
}

//! The script itself: a fixed head that waits for the image's provisioning
//! scripts, the variables in the order upstream's template assigns them
//! (`KUBE_BINARY_URL` twice, as there), and a fixed tail that starts
//! `provision_start.sh`.

use crate::catalog::Catalog;
use crate::settings::SubnetId;

use super::gpu;
use super::kubelet::{kubelet_flags, render_flags};
use super::urls::CpuArch;
use super::variables::{Line, Variables};
use super::version::KubeVersion;
use super::{BootstrapError, CustomDataInputs, labels};

/// Everything before the variables: export them all, mark the manifest,
/// log the start, and wait (20 minutes at most) for the image's
/// `provision.sh` to be complete. The empty line is where upstream's
/// template holds the custom-cloud block, which is never rendered here.
const HEAD: &str = "#!/bin/bash

set -o allexport # export all variables to subshells
echo '#EOF' >> /opt/azure/manifest.json # wait_for_file looks for this
mkdir -p /var/log/azure/Microsoft.Azure.Extensions.CustomScript/events # expected, but not created w/o CSE

echo $(date),$(hostname) > /var/log/azure/cluster-provision-cse-output.log;
for i in $(seq 1 1200); do
grep -Fq \"EOF\" /opt/azure/containers/provision.sh && break;
if [ $i -eq 1200 ]; then exit 100; else sleep 1; fi;
done;

";

/// Everything after the variables: the registry, no IMDS restriction, the
/// provisioning timeout, and the start of provisioning.
const TAIL: &str = "MCR_REPOSITORY_BASE=\"mcr.microsoft.com\"
ENABLE_IMDS_RESTRICTION=false
INSERT_IMDS_RESTRICTION_RULE_TO_MANGLE_TABLE=false
CSE_TIMEOUT=15m
/usr/bin/nohup /bin/bash -c \"/bin/bash /opt/azure/containers/provision_start.sh\"
";

/// The node's subnet: the node class's `vnetSubnetID`, else the cluster's.
fn subnet(inputs: &CustomDataInputs<'_>) -> Result<SubnetId, BootstrapError> {
    match &inputs.node_class.spec.vnet_subnet_id {
        None => Ok(inputs.settings.subnet.clone()),
        Some(id) => SubnetId::parse(id).map_err(|message| BootstrapError::Subnet {
            class: inputs.node_class.metadata.name.clone().unwrap_or_default(),
            message,
        }),
    }
}

/// A value the shell takes as is: nothing that ends the quotes, expands,
/// escapes or starts a new line; unquoted, no whitespace either.
fn shell_safe(value: &str, quoted: bool) -> bool {
    !value.chars().any(|c| {
        matches!(c, '"' | '$' | '`' | '\\' | '\n' | '\r') || (!quoted && c.is_whitespace())
    })
}

/// The script from its variables, refusing a value the shell would not
/// take as is.
fn assemble(lines: &[Line]) -> Result<String, BootstrapError> {
    let mut script = String::from(HEAD);
    for line in lines {
        match line {
            Line::Bare(name, value) | Line::Quoted(name, value) => {
                let quoted = matches!(line, Line::Quoted(..));
                if !shell_safe(value, quoted) {
                    return Err(BootstrapError::UnsafeValue { variable: name });
                }
                let q = if quoted { "\"" } else { "" };
                script.push_str(&format!("{name}={q}{value}{q}\n"));
            }
            Line::Blank => script.push('\n'),
        }
    }
    script.push_str(TAIL);
    Ok(script)
}

/// The script for `inputs`.
pub(crate) fn render(inputs: &CustomDataInputs<'_>) -> Result<String, BootstrapError> {
    inputs.node_class.validate()?;
    let version = KubeVersion::parse(inputs.kubernetes_version)?;
    let arch = CpuArch::parse(&inputs.sku.arch).ok_or_else(|| BootstrapError::Architecture {
        size: inputs.sku.name.clone(),
        arch: inputs.sku.arch.clone(),
    })?;
    let subnet = subnet(inputs)?;
    // A GPU node only where AKS installs the driver: with `gpu.mode: None`
    // the scripts must skip the driver and keep runc.
    let driver = gpu::nvidia_driver(Catalog::embedded(), &inputs.sku.name)
        .filter(|_| inputs.node_class.gpu_driver_managed());
    let flags = kubelet_flags(inputs, version)?;
    let labels = labels::kubelet_node_labels(
        inputs.settings,
        inputs.kubernetes_version,
        inputs.node_class,
        inputs.instance_type,
        inputs.claim,
    );
    let labels = labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let vars = Variables {
        inputs,
        version,
        arch,
        subnet,
        driver,
        flags: render_flags(&flags),
        labels,
    };
    assemble(&vars.lines())
}

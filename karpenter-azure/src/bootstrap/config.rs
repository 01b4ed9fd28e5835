//! What the script carries besides its variables' plain values: the
//! kernel and containerd configuration files, and the network plugin the
//! provisioning scripts are told of.

use base64::Engine as _;

use crate::settings::{NetworkDataplane, NetworkPlugin, NetworkPluginMode};

use super::CustomDataInputs;

/// The kernel settings the node applies (`SYSCTL_CONTENT`), in part a
/// workaround for kubernetes/kubernetes#41916.
pub(crate) const SYSCTL: &str = "# This is a partial workaround to this upstream Kubernetes issue:
# https://github.com/kubernetes/kubernetes/issues/41916#issuecomment-312428731
net.ipv4.tcp_retries2=8
net.core.message_burst=80
net.core.message_cost=40
net.core.somaxconn=16384
net.ipv4.tcp_max_syn_backlog=16384
net.ipv4.neigh.default.gc_thresh1=4096
net.ipv4.neigh.default.gc_thresh2=8192
net.ipv4.neigh.default.gc_thresh3=16384
";

/// How the provisioning command is checked to reach the registry.
pub(crate) const OUTBOUND_COMMAND: &str =
    "curl -v --insecure --proxy-insecure https://mcr.microsoft.com/v2/";

/// `text` base64-encoded, as the scripts decode their files.
pub(crate) fn base64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// containerd's configuration (`CONTAINERD_CONFIG_CONTENT`): the pause
/// image, the default runtime (NVIDIA's on a node whose driver AKS
/// installs, runc otherwise) with systemd cgroups, the registry hosts
/// directory and AKS's source header, metrics on port 10257.
pub(crate) fn containerd_config(gpu: bool) -> String {
    let cri = "plugins.\"io.containerd.grpc.v1.cri\"";
    let (runtime, binary) = if gpu {
        (
            "nvidia-container-runtime",
            "/usr/bin/nvidia-container-runtime",
        )
    } else {
        ("runc", "/usr/bin/runc")
    };
    format!(
        "version = 2
oom_score = 0
[{cri}]
  sandbox_image = \"mcr.microsoft.com/oss/kubernetes/pause:3.6\"
  [{cri}.containerd]
    default_runtime_name = \"{runtime}\"
    [{cri}.containerd.runtimes.{runtime}]
      runtime_type = \"io.containerd.runc.v2\"
    [{cri}.containerd.runtimes.{runtime}.options]
      BinaryName = \"{binary}\"
      SystemdCgroup = true
    [{cri}.containerd.runtimes.untrusted]
      runtime_type = \"io.containerd.runc.v2\"
    [{cri}.containerd.runtimes.untrusted.options]
      BinaryName = \"{binary}\"
  [{cri}.registry]
    config_path = \"/etc/containerd/certs.d\"
  [{cri}.registry.headers]
    X-Meta-Source-Client = [\"azure/aks\"]
[metrics]
  address = \"0.0.0.0:10257\"
"
    )
}

/// `NETWORK_PLUGIN` as the provisioning scripts read it: `none` where AKS's
/// scripts must not install Azure CNI's IPAM (overlay, Cilium on the node
/// subnet, no plugin), `azure` for Azure CNI on the node subnet.
pub(crate) fn agent_network_plugin(inputs: &CustomDataInputs<'_>) -> &'static str {
    let s = inputs.settings;
    let overlay = s.network_plugin == NetworkPlugin::Azure
        && s.network_plugin_mode == NetworkPluginMode::Overlay;
    let cilium_node_subnet = s.network_plugin == NetworkPlugin::Azure
        && s.network_plugin_mode == NetworkPluginMode::NodeSubnet
        && s.network_dataplane == NetworkDataplane::Cilium;
    if overlay || cilium_node_subnet || s.network_plugin == NetworkPlugin::None {
        "none"
    } else {
        "azure"
    }
}

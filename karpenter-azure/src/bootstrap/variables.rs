//! The script's variables, in the order upstream's template assigns them,
//! with the values upstream gives them: the cluster's and node's data, and
//! the static values (cloud-provider backoff and rate limits, file paths,
//! features this provider never turns on).

use crate::settings::SubnetId;

use super::CustomDataInputs;
use super::config::{OUTBOUND_COMMAND, SYSCTL, agent_network_plugin, base64, containerd_config};
use super::gpu::GpuDriver;
use super::urls::{self, CpuArch};
use super::version::KubeVersion;

/// One line of the variables' section.
pub(crate) enum Line {
    /// `NAME=value`.
    Bare(&'static str, String),
    /// `NAME="value"`.
    Quoted(&'static str, String),
    /// An empty line, where upstream's template renders an empty list.
    Blank,
}

/// What the variables are computed from.
pub(crate) struct Variables<'a> {
    pub(crate) inputs: &'a CustomDataInputs<'a>,
    pub(crate) version: KubeVersion,
    pub(crate) arch: CpuArch,
    pub(crate) subnet: SubnetId,
    pub(crate) driver: Option<GpuDriver>,
    pub(crate) flags: String,
    pub(crate) labels: String,
}

fn bare(name: &'static str, value: impl ToString) -> Line {
    Line::Bare(name, value.to_string())
}

fn quoted(name: &'static str, value: impl ToString) -> Line {
    Line::Quoted(name, value.to_string())
}

impl Variables<'_> {
    /// Every variable line, in the template's order.
    pub(crate) fn lines(&self) -> Vec<Line> {
        let mut lines = self.cluster();
        lines.extend(self.runtime());
        lines.extend(Self::features());
        lines.extend(self.node());
        lines
    }

    /// From `ADMINUSER` to `CLOUDPROVIDER_RATELIMIT_BUCKET_WRITE`: who the
    /// node is, where it lives, its network and cloud-provider settings.
    fn cluster(&self) -> Vec<Line> {
        let s = self.inputs.settings;
        let kube_binary_url =
            urls::kube_binary_url(self.inputs.kubernetes_version, self.version, self.arch);
        vec![
            // Upstream renders the static user, whatever LINUX_ADMIN_USERNAME says.
            bare("ADMINUSER", "azureuser"),
            bare("MOBY_VERSION", ""),
            bare("TENANT_ID", &s.tenant_id),
            bare("KUBERNETES_VERSION", self.inputs.kubernetes_version),
            bare("HYPERKUBE_URL", ""),
            bare("KUBE_BINARY_URL", &kube_binary_url),
            bare("CUSTOM_KUBE_BINARY_URL", ""),
            bare(
                "CREDENTIAL_PROVIDER_DOWNLOAD_URL",
                urls::credential_provider_url(self.version, self.arch).unwrap_or_default(),
            ),
            bare("KUBEPROXY_URL", ""),
            bare("APISERVER_PUBLIC_KEY", ""),
            bare("SUBSCRIPTION_ID", &s.subscription_id),
            bare("RESOURCE_GROUP", &s.node_resource_group),
            bare("LOCATION", &s.location),
            bare("VM_TYPE", "standard"),
            bare("SUBNET", &self.subnet.subnet),
            bare("NETWORK_SECURITY_GROUP", self.inputs.network_security_group),
            bare("VIRTUAL_NETWORK", &self.subnet.vnet),
            bare(
                "VIRTUAL_NETWORK_RESOURCE_GROUP",
                &self.subnet.resource_group,
            ),
            bare("ROUTE_TABLE", self.inputs.route_table),
            bare("PRIMARY_AVAILABILITY_SET", ""),
            bare("PRIMARY_SCALE_SET", ""),
            bare("SERVICE_PRINCIPAL_CLIENT_ID", "msi"),
            bare("NETWORK_PLUGIN", agent_network_plugin(self.inputs)),
            quoted("NETWORK_POLICY", &s.network_policy),
            bare(
                "VNET_CNI_PLUGINS_URL",
                urls::vnet_cni_plugins_url(self.arch),
            ),
            bare("CNI_PLUGINS_URL", urls::cni_plugins_url(self.arch)),
            bare("CLOUDPROVIDER_BACKOFF", true),
            bare("CLOUDPROVIDER_BACKOFF_MODE", "v2"),
            bare("CLOUDPROVIDER_BACKOFF_RETRIES", 6),
            bare("CLOUDPROVIDER_BACKOFF_EXPONENT", 0),
            bare("CLOUDPROVIDER_BACKOFF_DURATION", 5),
            bare("CLOUDPROVIDER_BACKOFF_JITTER", 0),
            bare("CLOUDPROVIDER_RATELIMIT", true),
            bare("CLOUDPROVIDER_RATELIMIT_QPS", 10),
            bare("CLOUDPROVIDER_RATELIMIT_QPS_WRITE", 10),
            bare("CLOUDPROVIDER_RATELIMIT_BUCKET", 100),
            bare("CLOUDPROVIDER_RATELIMIT_BUCKET_WRITE", 100),
        ]
    }

    /// From `LOAD_BALANCER_DISABLE_OUTBOUND_SNAT` to `CUSTOM_CA_TRUST_COUNT`:
    /// load balancer, runtime, identity, API server, GPU.
    fn runtime(&self) -> Vec<Line> {
        let s = self.inputs.settings;
        let kube_binary_url =
            urls::kube_binary_url(self.inputs.kubernetes_version, self.version, self.arch);
        let gpu = self.driver.is_some();
        vec![
            bare("LOAD_BALANCER_DISABLE_OUTBOUND_SNAT", false),
            bare("USE_MANAGED_IDENTITY_EXTENSION", true),
            bare("USE_INSTANCE_METADATA", true),
            bare("LOAD_BALANCER_SKU", "Standard"),
            bare("EXCLUDE_MASTER_FROM_STANDARD_LB", true),
            bare("MAXIMUM_LOADBALANCER_RULE_COUNT", 250),
            bare("CONTAINER_RUNTIME", "containerd"),
            bare("CLI_TOOL", "ctr"),
            bare("CONTAINERD_DOWNLOAD_URL_BASE", ""),
            bare("NETWORK_MODE", ""),
            bare("KUBE_BINARY_URL", &kube_binary_url),
            bare(
                "USER_ASSIGNED_IDENTITY_ID",
                s.kubelet_identity_client_id.as_deref().unwrap_or_default(),
            ),
            bare("API_SERVER_NAME", &s.api_server_name),
            bare("IS_VHD", true),
            bare("GPU_NODE", gpu),
            bare("SGX_NODE", false),
            bare("MIG_NODE", false),
            bare("CONFIG_GPU_DRIVER_IF_NEEDED", gpu),
            bare("ENABLE_GPU_DEVICE_PLUGIN_IF_NEEDED", false),
            bare("TELEPORTD_PLUGIN_DOWNLOAD_URL", ""),
            bare("CONTAINERD_VERSION", ""),
            bare("CONTAINERD_PACKAGE_URL", ""),
            bare("RUNC_VERSION", ""),
            bare("RUNC_PACKAGE_URL", ""),
            quoted("ENABLE_HOSTS_CONFIG_AGENT", false),
            quoted("DISABLE_SSH", false),
            quoted("NEEDS_CONTAINERD", true),
            quoted("TELEPORT_ENABLED", false),
            quoted("SHOULD_CONFIGURE_HTTP_PROXY", false),
            quoted("SHOULD_CONFIGURE_HTTP_PROXY_CA", false),
            quoted("HTTP_PROXY_TRUSTED_CA", ""),
            quoted("SHOULD_CONFIGURE_CUSTOM_CA_TRUST", false),
            quoted("CUSTOM_CA_TRUST_COUNT", 0),
            // Where the template lists the custom CA certificates: none.
            Line::Blank,
        ]
    }

    /// From `IS_KRUSTLET` to `SWAP_FILE_SIZE_MB`: features this provider
    /// leaves off and the provisioning scripts' paths.
    fn features() -> Vec<Line> {
        let helpers = "/opt/azure/containers";
        vec![
            quoted("IS_KRUSTLET", false),
            quoted("GPU_NEEDS_FABRIC_MANAGER", false),
            quoted("NEEDS_DOCKER_LOGIN", false),
            quoted("IPV6_DUAL_STACK_ENABLED", false),
            quoted("OUTBOUND_COMMAND", OUTBOUND_COMMAND),
            quoted("ENABLE_UNATTENDED_UPGRADES", false),
            quoted("ENSURE_NO_DUPE_PROMISCUOUS_BRIDGE", false),
            quoted("SHOULD_CONFIG_SWAP_FILE", false),
            quoted("SHOULD_CONFIG_TRANSPARENT_HUGE_PAGE", false),
            quoted("TARGET_CLOUD", "AzurePublicCloud"),
            quoted("TARGET_ENVIRONMENT", "AzurePublicCloud"),
            quoted("CUSTOM_ENV_JSON", ""),
            quoted("IS_CUSTOM_CLOUD", false),
            quoted(
                "CSE_HELPERS_FILEPATH",
                format!("{helpers}/provision_source.sh"),
            ),
            quoted(
                "CSE_DISTRO_HELPERS_FILEPATH",
                format!("{helpers}/provision_source_distro.sh"),
            ),
            quoted(
                "CSE_INSTALL_FILEPATH",
                format!("{helpers}/provision_installs.sh"),
            ),
            quoted(
                "CSE_DISTRO_INSTALL_FILEPATH",
                format!("{helpers}/provision_installs_distro.sh"),
            ),
            quoted(
                "CSE_CONFIG_FILEPATH",
                format!("{helpers}/provision_configs.sh"),
            ),
            quoted("AZURE_PRIVATE_REGISTRY_SERVER", ""),
            quoted("HAS_CUSTOM_SEARCH_DOMAIN", false),
            quoted(
                "CUSTOM_SEARCH_DOMAIN_FILEPATH",
                format!("{helpers}/setup-custom-search-domains.sh"),
            ),
            quoted("HTTP_PROXY_URLS", ""),
            quoted("HTTPS_PROXY_URLS", ""),
            quoted("NO_PROXY_URLS", ""),
            quoted("ENABLE_TLS_BOOTSTRAPPING", true),
            quoted("ENABLE_SECURE_TLS_BOOTSTRAPPING", false),
            quoted("ENABLE_KUBELET_SERVING_CERTIFICATE_ROTATION", false),
            quoted("DHCPV6_SERVICE_FILEPATH", ""),
            quoted("DHCPV6_CONFIG_FILEPATH", ""),
            quoted("THP_ENABLED", ""),
            quoted("THP_DEFRAG", ""),
            // The managed identity stands in for a service principal.
            quoted("SERVICE_PRINCIPAL_FILE_CONTENT", base64("msi")),
            quoted("KUBELET_CLIENT_CONTENT", ""),
            quoted("KUBELET_CLIENT_CERT_CONTENT", ""),
            quoted("KUBELET_CONFIG_FILE_ENABLED", false),
            quoted("KUBELET_CONFIG_FILE_CONTENT", ""),
            quoted("SWAP_FILE_SIZE_MB", 0),
        ]
    }

    /// From `GPU_IMAGE_SHA` to `IS_KATA`: the GPU driver, kernel settings,
    /// the join credentials, kubelet flags and labels, containerd.
    fn node(&self) -> Vec<Line> {
        let driver = |pick: fn(&GpuDriver) -> &'static str| {
            self.driver.as_ref().map(pick).unwrap_or_default()
        };
        vec![
            quoted("GPU_IMAGE_SHA", driver(|d| d.image_sha)),
            quoted("GPU_DRIVER_VERSION", driver(|d| d.version)),
            quoted("GPU_DRIVER_TYPE", driver(|d| d.kind)),
            quoted("GPU_INSTANCE_PROFILE", ""),
            quoted("CUSTOM_SEARCH_DOMAIN_NAME", ""),
            quoted("CUSTOM_SEARCH_REALM_USER", ""),
            quoted("CUSTOM_SEARCH_REALM_PASSWORD", ""),
            quoted("MESSAGE_OF_THE_DAY", ""),
            quoted("HAS_KUBELET_DISK_TYPE", false),
            quoted("NEEDS_CGROUPV2", true),
            quoted("SYSCTL_CONTENT", base64(SYSCTL)),
            quoted(
                "TLS_BOOTSTRAP_TOKEN",
                self.inputs.settings.bootstrap_token.expose(),
            ),
            quoted("KUBELET_FLAGS", &self.flags),
            quoted("KUBELET_NODE_LABELS", &self.labels),
            quoted("AZURE_ENVIRONMENT_FILEPATH", ""),
            quoted("KUBE_CA_CRT", self.inputs.ca_bundle),
            quoted(
                "CONTAINERD_CONFIG_CONTENT",
                base64(&containerd_config(self.driver.is_some())),
            ),
            quoted("IS_KATA", false),
        ]
    }
}

//! What shapes the instance types: the region, the node class's settings and
//! the operator's options.

use crate::nodeclass::{
    AKSNodeClass, DEFAULT_OS_DISK_SIZE_GB, ImageFamily, NetworkOptions, NodeClassError,
};

use super::resources::DEFAULT_VM_MEMORY_OVERHEAD_PERCENT;

/// Everything that shapes the instance types: the region, the node class's
/// settings and the operator's options.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The ARM region, `eastus`.
    pub region: String,
    /// The node class's image family.
    pub image_family: ImageFamily,
    /// The OS disk size in GB (the nodes' ephemeral storage).
    pub os_disk_size_gb: u32,
    /// Pods per node.
    pub max_pods: u32,
    /// Whether the node class asks for encryption at host.
    pub encryption_at_host: bool,
    /// Whether AKS installs the GPU driver (`gpu.mode: Driver`, the default).
    pub gpu_driver_managed: bool,
    /// Whether artifact streaming is on.
    pub artifact_streaming: bool,
    /// Whether the node class asks for FIPS images.
    pub fips: bool,
    /// Whether the node class asks for trusted launch (vTPM or secure boot).
    pub trusted_launch: bool,
    /// Whether LocalDNS runs on the nodes (the node class's resolved state).
    pub local_dns: bool,
    /// The cluster's node resource group (`MC_...`), which nodes name in
    /// `kubernetes.azure.com/cluster`; `None` where it is not known (a
    /// scenario), and then the types leave that key open.
    pub node_resource_group: Option<String>,
    /// The share of memory the VM keeps (`--vm-memory-overhead-percent`).
    pub vm_memory_overhead_percent: f64,
}

impl Settings {
    /// The defaults for `region`: Ubuntu, 128 GB OS disk, 250 pods (Azure CNI
    /// overlay, the operator's default network).
    pub fn for_region(region: &str) -> Settings {
        Settings {
            region: region.to_owned(),
            image_family: ImageFamily::Ubuntu,
            os_disk_size_gb: 128,
            max_pods: 250,
            encryption_at_host: false,
            gpu_driver_managed: true,
            artifact_streaming: false,
            fips: false,
            trusted_launch: false,
            local_dns: false,
            node_resource_group: None,
            vm_memory_overhead_percent: DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
        }
    }

    /// The settings `class` gives its nodes in `region` on `network`, once
    /// the class is valid.
    pub fn for_node_class(
        class: &AKSNodeClass,
        region: &str,
        network: &NetworkOptions,
    ) -> Result<Settings, NodeClassError> {
        class.validate()?;
        let mut settings = Settings::for_region(region);
        settings.image_family = class.image_family()?;
        settings.os_disk_size_gb = class
            .spec
            .os_disk_size_gb
            .map_or(DEFAULT_OS_DISK_SIZE_GB, |s| s as u32);
        settings.max_pods = class
            .spec
            .max_pods
            .map_or_else(|| network.default_max_pods(), |p| p as u32);
        settings.encryption_at_host = class.spec_flag(&["security", "encryptionAtHost"]);
        settings.artifact_streaming = class.spec_flag(&["artifactStreaming", "enabled"]);
        settings.gpu_driver_managed = class.gpu_driver_managed();
        settings.fips = class.fips_enabled();
        settings.trusted_launch = class.trusted_launch();
        settings.local_dns = class.local_dns_enabled();
        Ok(settings)
    }
}

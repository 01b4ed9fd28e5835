//! Which AKS node image a class's nodes boot when its status lists none, as
//! upstream's image families choose (`pkg/providers/imagefamily/`):
//! the class's `imageFamily`, FIPS mode, trusted launch and the cluster's
//! Kubernetes version pick a [`Distro`]; the distro names its image
//! definitions in preference order, each for one architecture and Hyper-V
//! generation; a definition's newest version in AKS's community gallery
//! (the self-hosted default, `USE_SIG=false`) is the image.

use jiff::Timestamp;
use serde_json::Value;

use crate::instancetype::Settings;
use crate::nodeclass::ImageFamily;

/// AKS's community gallery of Ubuntu node images.
pub(crate) const UBUNTU_GALLERY: &str = "AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2";
/// AKS's community gallery of Azure Linux node images.
pub(crate) const AZURE_LINUX_GALLERY: &str = "AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b";

/// The OS release a class's nodes run, once its family is resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Distro {
    /// Ubuntu 20.04: only reached by the `Ubuntu` family with FIPS and no
    /// trusted launch; FIPS images only.
    Ubuntu2004,
    /// Ubuntu 22.04.
    Ubuntu2204,
    /// Ubuntu 24.04.
    Ubuntu2404,
    /// Azure Linux 2.
    AzureLinux2,
    /// Azure Linux 3.
    AzureLinux3,
}

/// The `(major, minor)` of a Kubernetes version (`1.32.0`, `v1.31.2`).
fn minor_version(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.trim().trim_start_matches('v').split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?;
    // `1.32` and `1.32.0-rc.1` alike: the minor's leading digits.
    let digits: String = minor.chars().take_while(char::is_ascii_digit).collect();
    Some((major, digits.parse().ok()?))
}

/// Whether `kubernetes_version` is at least `1.<minor>`. Without a version
/// the newest rules apply (every threshold is met): a class whose cluster
/// version is unknown gets today's default release. A version that does
/// not parse meets none, as upstream's semver fallback.
fn at_least(kubernetes_version: Option<&str>, minor: u64) -> bool {
    match kubernetes_version {
        None => true,
        Some(version) => minor_version(version).is_some_and(|v| v >= (1, minor)),
    }
}

impl Distro {
    /// The distro of `family` under FIPS and trusted launch on
    /// `kubernetes_version` (upstream's `GetImageFamily`): `Ubuntu` (or
    /// unset) takes 22.04 with trusted launch, 20.04 for FIPS alone, 24.04
    /// from Kubernetes 1.34, else 22.04; `AzureLinux` is 3 from 1.32.
    /// `None` for the version means the newest rules.
    pub(crate) fn resolve(
        family: ImageFamily,
        fips: bool,
        trusted_launch: bool,
        kubernetes_version: Option<&str>,
    ) -> Distro {
        match family {
            ImageFamily::Ubuntu2204 => Distro::Ubuntu2204,
            ImageFamily::Ubuntu2404 => Distro::Ubuntu2404,
            ImageFamily::AzureLinux if at_least(kubernetes_version, 32) => Distro::AzureLinux3,
            ImageFamily::AzureLinux => Distro::AzureLinux2,
            ImageFamily::Ubuntu if trusted_launch => Distro::Ubuntu2204,
            ImageFamily::Ubuntu if fips => Distro::Ubuntu2004,
            ImageFamily::Ubuntu if at_least(kubernetes_version, 34) => Distro::Ubuntu2404,
            ImageFamily::Ubuntu => Distro::Ubuntu2204,
        }
    }

    /// The distro a node class's `settings` give on `kubernetes_version`.
    pub(crate) fn of(settings: &Settings, kubernetes_version: Option<&str>) -> Distro {
        Distro::resolve(
            settings.image_family,
            settings.fips,
            settings.trusted_launch,
            kubernetes_version,
        )
    }

    /// The `kubernetes.azure.com/os-sku-effective` label of its nodes
    /// (upstream's family name: 20.04 is plain `Ubuntu`).
    pub(crate) fn os_sku_effective(self) -> &'static str {
        match self {
            Distro::Ubuntu2004 => "Ubuntu",
            Distro::Ubuntu2204 => "Ubuntu2204",
            Distro::Ubuntu2404 => "Ubuntu2404",
            Distro::AzureLinux2 => "AzureLinux2",
            Distro::AzureLinux3 => "AzureLinux3",
        }
    }

    /// The community gallery holding its images.
    pub(crate) fn community_gallery(self) -> &'static str {
        match self {
            Distro::AzureLinux2 | Distro::AzureLinux3 => AZURE_LINUX_GALLERY,
            _ => UBUNTU_GALLERY,
        }
    }

    /// Its image definitions for FIPS and trusted launch, most preferred
    /// first, wherever they are published (FIPS images only in AKS's shared
    /// gallery).
    pub(crate) fn definitions(self, fips: bool, trusted_launch: bool) -> &'static [Definition] {
        use catalog as c;
        match (self, fips, trusted_launch) {
            (Distro::Ubuntu2004, true, false) => c::UBUNTU_2004_FIPS,
            (Distro::Ubuntu2004, _, _) | (Distro::Ubuntu2204 | Distro::Ubuntu2404, true, false) => {
                &[]
            }
            (Distro::Ubuntu2204, true, true) => c::UBUNTU_2204_FIPS_TL,
            (Distro::Ubuntu2204, false, true) => c::UBUNTU_2204_TL,
            (Distro::Ubuntu2204, false, false) => c::UBUNTU_2204,
            (Distro::Ubuntu2404, true, true) => &[],
            (Distro::Ubuntu2404, false, true) => c::UBUNTU_2404_TL,
            (Distro::Ubuntu2404, false, false) => c::UBUNTU_2404,
            (Distro::AzureLinux2, true, _) => c::AZURE_LINUX_2_FIPS,
            (Distro::AzureLinux2, false, true) => c::AZURE_LINUX_2_TL,
            (Distro::AzureLinux2, false, false) => c::AZURE_LINUX_2,
            (Distro::AzureLinux3, true, _) => c::AZURE_LINUX_3_FIPS,
            (Distro::AzureLinux3, false, true) => c::AZURE_LINUX_3_TL,
            (Distro::AzureLinux3, false, false) => c::AZURE_LINUX_3,
        }
    }

    /// Its definitions published in the community gallery, most preferred
    /// first: none under FIPS, whose images only AKS's shared gallery has.
    pub(crate) fn community_definitions(
        self,
        fips: bool,
        trusted_launch: bool,
    ) -> &'static [Definition] {
        if fips {
            &[]
        } else {
            self.definitions(fips, trusted_launch)
        }
    }
}

/// The `kubernetes.azure.com/os-sku-effective` label of nodes of a class
/// with `settings` on `kubernetes_version` (`None`: the newest rules).
pub(crate) fn os_sku_effective(
    settings: &Settings,
    kubernetes_version: Option<&str>,
) -> &'static str {
    Distro::of(settings, kubernetes_version).os_sku_effective()
}

/// One AKS image definition and the nodes it boots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Definition {
    /// The definition's name in the gallery (`2204gen2containerd`).
    pub(crate) name: &'static str,
    /// The `kubernetes.io/arch` it boots.
    pub(crate) arch: &'static str,
    /// The `karpenter.azure.com/sku-hyperv-generation` it boots.
    pub(crate) hyperv_generation: &'static str,
    /// AKS's distro name for it (`aks-ubuntu-containerd-22.04-gen2`).
    pub(crate) distro: &'static str,
}

/// The community gallery image ID of `definition` at `version` in `gallery`.
pub(crate) fn community_image_id(gallery: &str, definition: &str, version: &str) -> String {
    format!("/CommunityGalleries/{gallery}/images/{definition}/versions/{version}")
}

/// The name of the newest of a community gallery image's `versions` (as
/// ARM lists them): the latest `properties.publishedDate`; on a tie, the
/// higher version by its numeric dot-separated parts (`202505.10.0` above
/// `202505.9.0`; the longer above its own prefix, as upstream compares node
/// image versions), then the greater name. Versions without a name or with
/// a date that is not RFC 3339 are passed over; `None` when none is left.
pub(crate) fn newest_version(versions: &[Value]) -> Option<String> {
    versions
        .iter()
        .filter_map(|version| {
            let name = version["name"].as_str()?;
            let published: Timestamp = version["properties"]["publishedDate"]
                .as_str()?
                .parse()
                .ok()?;
            Some((published, version_parts(name), name))
        })
        .max()
        .map(|(_, _, name)| name.to_owned())
}

/// A version's dot-separated parts as numbers (a part that is not a number
/// counts as 0, the name breaking the tie).
fn version_parts(name: &str) -> Vec<u64> {
    name.split('.')
        .map(|part| part.parse().unwrap_or(0))
        .collect()
}

/// The definitions of upstream's families (`ubuntu_2004.go` ...
/// `azlinux3.go`), in their preference order.
mod catalog {
    use super::Definition;

    const fn def(
        name: &'static str,
        arch: &'static str,
        hyperv_generation: &'static str,
        distro: &'static str,
    ) -> Definition {
        Definition {
            name,
            arch,
            hyperv_generation,
            distro,
        }
    }

    pub(super) const UBUNTU_2004_FIPS: &[Definition] = &[
        def(
            "2004gen2fipscontainerd",
            "amd64",
            "2",
            "aks-ubuntu-fips-containerd-20.04-gen2",
        ),
        def(
            "2004fipscontainerd",
            "amd64",
            "1",
            "aks-ubuntu-fips-containerd-20.04",
        ),
    ];
    pub(super) const UBUNTU_2204: &[Definition] = &[
        def(
            "2204gen2containerd",
            "amd64",
            "2",
            "aks-ubuntu-containerd-22.04-gen2",
        ),
        def(
            "2204containerd",
            "amd64",
            "1",
            "aks-ubuntu-containerd-22.04",
        ),
        def(
            "2204gen2arm64containerd",
            "arm64",
            "2",
            "aks-ubuntu-arm64-containerd-22.04-gen2",
        ),
    ];
    pub(super) const UBUNTU_2204_TL: &[Definition] = &[def(
        "2204gen2TLcontainerd",
        "amd64",
        "2",
        "aks-ubuntu-containerd-22.04-tl-gen2",
    )];
    pub(super) const UBUNTU_2204_FIPS_TL: &[Definition] = &[def(
        "2204gen2fipsTLcontainerd",
        "amd64",
        "2",
        "aks-ubuntu-fips-containerd-22.04-tl-gen2",
    )];
    pub(super) const UBUNTU_2404: &[Definition] = &[
        def(
            "2404gen2containerd",
            "amd64",
            "2",
            "aks-ubuntu-containerd-24.04-gen2",
        ),
        def(
            "2404containerd",
            "amd64",
            "1",
            "aks-ubuntu-containerd-24.04",
        ),
        def(
            "2404gen2arm64containerd",
            "arm64",
            "2",
            "aks-ubuntu-arm64-containerd-24.04-gen2",
        ),
    ];
    pub(super) const UBUNTU_2404_TL: &[Definition] = &[def(
        "2404gen2TLcontainerd",
        "amd64",
        "2",
        "aks-ubuntu-containerd-24.04-tl-gen2",
    )];
    pub(super) const AZURE_LINUX_2: &[Definition] = &[
        def("V2gen2", "amd64", "2", "aks-azurelinux-v2-gen2"),
        def("V2", "amd64", "1", "aks-azurelinux-v2"),
        def("V2gen2arm64", "arm64", "2", "aks-azurelinux-v2-arm64-gen2"),
    ];
    pub(super) const AZURE_LINUX_2_TL: &[Definition] =
        &[def("V2gen2TL", "amd64", "2", "aks-azurelinux-v2-gen2-tl")];
    pub(super) const AZURE_LINUX_2_FIPS: &[Definition] = &[
        def("V2gen2fips", "amd64", "2", "aks-azurelinux-v2-gen2-fips"),
        def("V2fips", "amd64", "1", "aks-azurelinux-v2-fips"),
    ];
    pub(super) const AZURE_LINUX_3: &[Definition] = &[
        def("V3gen2", "amd64", "2", "aks-azurelinux-v3-gen2"),
        def("V3", "amd64", "1", "aks-azurelinux-v3"),
        def("V3gen2arm64", "arm64", "2", "aks-azurelinux-v3-arm64-gen2"),
    ];
    pub(super) const AZURE_LINUX_3_TL: &[Definition] =
        &[def("V3gen2TL", "amd64", "2", "aks-azurelinux-v3-gen2-tl")];
    pub(super) const AZURE_LINUX_3_FIPS: &[Definition] = &[
        def("V3gen2fips", "amd64", "2", "aks-azurelinux-v3-gen2-fips"),
        def("V3fips", "amd64", "1", "aks-azurelinux-v3-fips"),
        def(
            "V3gen2arm64fips",
            "arm64",
            "2",
            "aks-azurelinux-v3-arm64-gen2-fips",
        ),
    ];
}

#[cfg(test)]
mod tests;

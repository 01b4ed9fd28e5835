//! The NVIDIA driver the node installs, by size, kept in step with
//! upstream's `pkg/utils/gpu.go` (itself following AgentBaker): the driver
//! type selects the `mcr.microsoft.com/aks/aks-gpu-<type>` image, the
//! version and image suffix pin it.

use crate::catalog::Catalog;

/// The driver a GPU node installs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GpuDriver {
    /// `GPU_DRIVER_TYPE`: `cuda-lts`, `cuda`, `grid` or `grid-v20`.
    pub(crate) kind: &'static str,
    /// `GPU_DRIVER_VERSION`.
    pub(crate) version: &'static str,
    /// `GPU_IMAGE_SHA`: the driver image's version suffix.
    pub(crate) image_sha: &'static str,
}

/// Sizes on the converged (CUDA and GRID) driver: installing the plain CUDA
/// driver on them fails.
const GRID_SIZES: [&str; 9] = [
    "standard_nv6ads_a10_v5",
    "standard_nv12ads_a10_v5",
    "standard_nv18ads_a10_v5",
    "standard_nv36ads_a10_v5",
    "standard_nv72ads_a10_v5",
    "standard_nv36adms_a10_v5",
    "standard_nc8ads_a10_v4",
    "standard_nc16ads_a10_v4",
    "standard_nc32ads_a10_v4",
];

/// The RTX PRO 6000 Blackwell sizes, which need the GRID v20 driver.
const GRID_V20_SIZES: [&str; 9] = [
    "standard_nc24lds_xl_rtxpro6000bse_v6",
    "standard_nc36ds_xl_rtxpro6000bse_v6",
    "standard_nc36lds_xl_rtxpro6000bse_v6",
    "standard_nc72ds_xl_rtxpro6000bse_v6",
    "standard_nc72lds_xl_rtxpro6000bse_v6",
    "standard_nc144ds_xl_rtxpro6000bse_v6",
    "standard_nc144lds_xl_rtxpro6000bse_v6",
    "standard_nc288ds_xl_rtxpro6000bse_v6",
    "standard_nc288lds_xl_rtxpro6000bse_v6",
];

const GRID_V20: GpuDriver = GpuDriver {
    kind: "grid-v20",
    version: "595.58.03",
    image_sha: "20260609172331",
};
const GRID: GpuDriver = GpuDriver {
    kind: "grid",
    version: "570.211.01",
    image_sha: "20260522192315",
};
/// NCv1 (K80) keeps the legacy R470 driver on the `cuda` image, whose suffix
/// is the LTS image's, as upstream pairs them.
const CUDA_NCV1: GpuDriver = GpuDriver {
    kind: "cuda",
    version: "470.82.01",
    image_sha: "20260629214430",
};
/// Every other CUDA size: the LTS branch the GPU images' prebaked userspace
/// is built against (an older driver mismatches it).
const CUDA_LTS: GpuDriver = GpuDriver {
    kind: "cuda-lts",
    version: "580.159.04",
    image_sha: "20260629214430",
};

/// The size name as the GPU registry keys it: lower case, no `_promo`.
fn normalized(size: &str) -> String {
    let lower = size.to_lowercase();
    lower
        .strip_suffix("_promo")
        .map_or_else(|| lower.clone(), str::to_owned)
}

/// The driver an NVIDIA size installs; `None` for a size the GPU registry
/// does not list as NVIDIA.
pub(crate) fn nvidia_driver(catalog: &Catalog, size: &str) -> Option<GpuDriver> {
    let name = normalized(size);
    let gpu = catalog.gpu(&name)?;
    if gpu.manufacturer != "nvidia" {
        return None;
    }
    let driver = if GRID_V20_SIZES.contains(&name.as_str()) {
        GRID_V20
    } else if GRID_SIZES.contains(&name.as_str()) {
        GRID
    } else if name.starts_with("standard_nc") && !name.contains("_v") {
        CUDA_NCV1
    } else {
        CUDA_LTS
    };
    Some(driver)
}

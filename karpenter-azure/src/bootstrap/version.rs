//! The Kubernetes version, as far as the custom data needs it: the minor
//! version picks flags and download URLs.

use super::BootstrapError;

/// A Kubernetes version `1.MINOR.PATCH`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KubeVersion {
    /// The minor version, `31` of `1.31.2`.
    pub(crate) minor: u64,
}

impl KubeVersion {
    /// Parses `1.MINOR.PATCH` (digits only; no `v`, no pre-release), as
    /// the URLs and `KUBERNETES_VERSION` use the text verbatim.
    pub(crate) fn parse(text: &str) -> Result<KubeVersion, BootstrapError> {
        let error = || BootstrapError::KubernetesVersion {
            value: text.to_owned(),
        };
        let parts: Vec<&str> = text.split('.').collect();
        let numeric = |part: &&str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        if parts.len() != 3 || !parts.iter().all(numeric) || parts[0] != "1" {
            return Err(error());
        }
        let minor = parts[1].parse().map_err(|_| error())?;
        Ok(KubeVersion { minor })
    }
}

//! AMI families and image aliases (`family@version`).

use std::fmt;

/// An AMI family: the image's OS, which sets the user-data format, the
/// default volumes and the kubelet's reservations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AmiFamily {
    /// Amazon Linux 2.
    AL2,
    /// Amazon Linux 2023.
    AL2023,
    /// Bottlerocket.
    Bottlerocket,
    /// A custom image: no bootstrap merged, no defaults assumed.
    Custom,
    /// Windows Server 2019.
    Windows2019,
    /// Windows Server 2022.
    Windows2022,
    /// Windows Server 2025.
    Windows2025,
}

impl AmiFamily {
    /// Every family, in the CRD's order.
    pub const ALL: [AmiFamily; 7] = [
        AmiFamily::AL2,
        AmiFamily::AL2023,
        AmiFamily::Bottlerocket,
        AmiFamily::Custom,
        AmiFamily::Windows2019,
        AmiFamily::Windows2022,
        AmiFamily::Windows2025,
    ];

    /// The family as `spec.amiFamily` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            AmiFamily::AL2 => "AL2",
            AmiFamily::AL2023 => "AL2023",
            AmiFamily::Bottlerocket => "Bottlerocket",
            AmiFamily::Custom => "Custom",
            AmiFamily::Windows2019 => "Windows2019",
            AmiFamily::Windows2022 => "Windows2022",
            AmiFamily::Windows2025 => "Windows2025",
        }
    }

    /// The family named exactly `name`, as `spec.amiFamily` spells it.
    pub fn parse(name: &str) -> Option<AmiFamily> {
        Self::ALL.into_iter().find(|family| family.as_str() == name)
    }

    /// The family an alias names (`al2023`, `windows2022`, ...); `Custom`
    /// has no alias.
    pub fn from_alias_name(name: &str) -> Option<AmiFamily> {
        Self::ALL
            .into_iter()
            .filter(|family| *family != AmiFamily::Custom)
            .find(|family| family.as_str().to_ascii_lowercase() == name)
    }

    /// Whether nodes of this family run Windows.
    pub fn is_windows(self) -> bool {
        matches!(
            self,
            AmiFamily::Windows2019 | AmiFamily::Windows2022 | AmiFamily::Windows2025
        )
    }
}

impl fmt::Display for AmiFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An image alias, `family@version` (`al2023@latest`, `al2023@v20240807`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias {
    /// The family.
    pub family: AmiFamily,
    /// The version: `latest` or a release.
    pub version: String,
}

impl Alias {
    /// The version that follows the newest release.
    pub const LATEST: &str = "latest";

    /// Parses `family@version`; `None` unless the family is known and the
    /// version non-empty.
    pub fn parse(alias: &str) -> Option<Alias> {
        let (family, version) = alias.split_once('@')?;
        if version.is_empty() {
            return None;
        }
        Some(Alias {
            family: AmiFamily::from_alias_name(family)?,
            version: version.to_owned(),
        })
    }
}

impl fmt::Display for Alias {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let family = self.family.as_str().to_ascii_lowercase();
        write!(f, "{family}@{}", self.version)
    }
}

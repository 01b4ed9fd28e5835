//! Bearer tokens for ARM: a small [`TokenCredential`] trait, a static token
//! for tests and injection, and (feature `azure-identity`) Azure's own
//! credential chain. Token text never appears in a `Debug` string.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;

use super::ArmError;

/// A secret string: shown as `***` by `Debug` and `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `text`.
    pub fn new(text: impl Into<String>) -> Self {
        Secret(text.into())
    }

    /// The secret itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// A bearer token and when it expires.
#[derive(Clone, Debug)]
pub struct AccessToken {
    /// The token.
    pub token: Secret,
    /// When it stops working.
    pub expires_on: Timestamp,
}

/// Where bearer tokens come from.
#[async_trait]
pub trait TokenCredential: Send + Sync + fmt::Debug {
    /// A token for `scope` (`https://management.azure.com/.default`).
    async fn token(&self, scope: &str) -> Result<AccessToken, ArmError>;
}

/// One token, given: for tests, or a caller that gets tokens its own way.
#[derive(Clone, Debug)]
pub struct StaticCredential {
    token: AccessToken,
}

impl StaticCredential {
    /// A credential that always gives `token`.
    pub fn new(token: impl Into<String>) -> Self {
        StaticCredential {
            token: AccessToken {
                token: Secret::new(token),
                expires_on: Timestamp::MAX,
            },
        }
    }
}

#[async_trait]
impl TokenCredential for StaticCredential {
    async fn token(&self, _scope: &str) -> Result<AccessToken, ArmError> {
        Ok(self.token.clone())
    }
}

#[async_trait]
impl<T: TokenCredential + ?Sized> TokenCredential for Arc<T> {
    async fn token(&self, scope: &str) -> Result<AccessToken, ArmError> {
        (**self).token(scope).await
    }
}

/// Azure's credential chain (`azure_identity`): managed identity, workload
/// identity, the Azure CLI, ... as `azure_identity` picks.
#[cfg(feature = "azure-identity")]
#[derive(Debug)]
pub struct AzureIdentityCredential {
    inner: Arc<dyn azure_core::credentials::TokenCredential>,
}

#[cfg(feature = "azure-identity")]
impl AzureIdentityCredential {
    /// Wraps an `azure_identity` credential (e.g.
    /// `azure_identity::ManagedIdentityCredential::new(None)?`).
    pub fn new(inner: Arc<dyn azure_core::credentials::TokenCredential>) -> Self {
        AzureIdentityCredential { inner }
    }
}

#[cfg(feature = "azure-identity")]
#[async_trait]
impl TokenCredential for AzureIdentityCredential {
    async fn token(&self, scope: &str) -> Result<AccessToken, ArmError> {
        let token = self
            .inner
            .get_token(&[scope], None)
            .await
            .map_err(|e| ArmError::Auth {
                source: Box::new(e),
            })?;
        let expires_on =
            Timestamp::from_second(token.expires_on.unix_timestamp()).unwrap_or(Timestamp::MAX);
        Ok(AccessToken {
            token: Secret::new(token.token.secret()),
            expires_on,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_stay_out_of_debug_and_display() {
        let credential = StaticCredential::new("eyJ0eXAiOiJKV1Qi.secret");
        let shown = format!("{credential:?} {}", credential.token.token);
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("***"));
    }
}

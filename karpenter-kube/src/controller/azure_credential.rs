//! Where `--provider azure` gets its ARM bearer tokens, chosen from the
//! environment: a static token in `AZURE_ACCESS_TOKEN` first (tests and
//! quick trials; it lasts about an hour), else (feature `azure-identity`)
//! the pod's workload identity when the webhook injected its token file,
//! else the VM's managed identity. The choice is a pure function of the
//! environment so that every branch is testable without a network; no
//! token ever reaches a log, a `Debug` print or an error.

use std::sync::Arc;

use karpenter_azure::arm::{Secret, StaticCredential, TokenCredential};
use thiserror::Error;

#[cfg(feature = "azure-identity")]
use std::path::PathBuf;

/// The environment variable holding a static ARM bearer token.
pub const TOKEN_VARIABLE: &str = "AZURE_ACCESS_TOKEN";
/// The service account token file the workload identity webhook mounts.
#[cfg(feature = "azure-identity")]
const FEDERATED_TOKEN_FILE: &str = "AZURE_FEDERATED_TOKEN_FILE";
/// The identity's client ID (workload identity), or a user-assigned
/// managed identity's.
#[cfg(feature = "azure-identity")]
const CLIENT_ID: &str = "AZURE_CLIENT_ID";
/// The identity's tenant (workload identity).
#[cfg(feature = "azure-identity")]
const TENANT_ID: &str = "AZURE_TENANT_ID";

/// The ARM credential the environment asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CredentialChoice {
    /// The token in [`TOKEN_VARIABLE`], used until it expires.
    Static(Secret),
    /// The pod's workload identity: the federated service account token
    /// exchanged for ARM tokens, fresh ones as they expire.
    #[cfg(feature = "azure-identity")]
    WorkloadIdentity {
        /// `AZURE_FEDERATED_TOKEN_FILE`.
        token_file: PathBuf,
        /// `AZURE_CLIENT_ID`.
        client_id: String,
        /// `AZURE_TENANT_ID`.
        tenant_id: String,
    },
    /// The VM's managed identity through IMDS: the system-assigned one, or
    /// the user-assigned one `AZURE_CLIENT_ID` names.
    #[cfg(feature = "azure-identity")]
    ManagedIdentity {
        /// `AZURE_CLIENT_ID`, when set.
        client_id: Option<String>,
    },
}

impl CredentialChoice {
    /// The name the log gives this credential.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            CredentialChoice::Static(_) => "static token",
            #[cfg(feature = "azure-identity")]
            CredentialChoice::WorkloadIdentity { .. } => "workload identity",
            #[cfg(feature = "azure-identity")]
            CredentialChoice::ManagedIdentity { .. } => "managed identity",
        }
    }
}

/// Why the controller has no ARM credential.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CredentialError {
    /// No static token, and no identity this binary can read.
    #[cfg(not(feature = "azure-identity"))]
    #[error(
        "{TOKEN_VARIABLE} must hold an ARM bearer token (a karpenter-controller built with \
         karpenter-kube's `azure-identity` feature takes its tokens from workload identity instead)"
    )]
    NoToken,
    /// The workload identity webhook sets its variables together: one of
    /// them is missing.
    #[cfg(feature = "azure-identity")]
    #[error(
        "AZURE_FEDERATED_TOKEN_FILE is set but {variable} is not (workload identity needs both)"
    )]
    IncompleteWorkloadIdentity {
        /// The missing variable.
        variable: &'static str,
    },
    /// `azure_identity` refused to build the credential.
    #[cfg(feature = "azure-identity")]
    #[error("cannot set up the {credential} credential")]
    Identity {
        /// Which credential.
        credential: &'static str,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The credential `lookup` (an environment) asks for; an empty variable
/// counts as unset.
pub(crate) fn choose(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<CredentialChoice, CredentialError> {
    let get = |name: &str| lookup(name).filter(|value| !value.is_empty());
    if let Some(token) = get(TOKEN_VARIABLE) {
        return Ok(CredentialChoice::Static(Secret::new(token)));
    }
    #[cfg(feature = "azure-identity")]
    {
        if let Some(token_file) = get(FEDERATED_TOKEN_FILE) {
            let required = |variable: &'static str| {
                get(variable).ok_or(CredentialError::IncompleteWorkloadIdentity { variable })
            };
            return Ok(CredentialChoice::WorkloadIdentity {
                token_file: PathBuf::from(token_file),
                client_id: required(CLIENT_ID)?,
                tenant_id: required(TENANT_ID)?,
            });
        }
        Ok(CredentialChoice::ManagedIdentity {
            client_id: get(CLIENT_ID),
        })
    }
    #[cfg(not(feature = "azure-identity"))]
    Err(CredentialError::NoToken)
}

/// The credential the process's environment asks for, logged by name
/// (never its token).
pub(crate) fn from_env() -> Result<Arc<dyn TokenCredential>, CredentialError> {
    let choice = choose(|name| std::env::var(name).ok())?;
    tracing::info!(
        credential = choice.name(),
        "ARM bearer tokens come from the {}",
        choice.name()
    );
    build(choice)
}

/// The credential for `choice`. Building one does not touch the network
/// (the first token is fetched when ARM is first called); workload identity
/// reads its token file, and re-reads it as the kubelet rotates it.
fn build(choice: CredentialChoice) -> Result<Arc<dyn TokenCredential>, CredentialError> {
    match choice {
        CredentialChoice::Static(token) => Ok(Arc::new(StaticCredential::new(token.expose()))),
        #[cfg(feature = "azure-identity")]
        CredentialChoice::WorkloadIdentity {
            token_file,
            client_id,
            tenant_id,
        } => {
            let options = azure_identity::WorkloadIdentityCredentialOptions {
                client_id: Some(client_id),
                tenant_id: Some(tenant_id),
                token_file_path: Some(token_file),
                ..Default::default()
            };
            let inner = azure_identity::WorkloadIdentityCredential::new(Some(options))
                .map_err(identity_error("workload identity"))?;
            Ok(Arc::new(
                karpenter_azure::arm::AzureIdentityCredential::new(inner),
            ))
        }
        #[cfg(feature = "azure-identity")]
        CredentialChoice::ManagedIdentity { client_id } => {
            let options = azure_identity::ManagedIdentityCredentialOptions {
                user_assigned_id: client_id.map(azure_identity::UserAssignedId::ClientId),
                ..Default::default()
            };
            let inner = azure_identity::ManagedIdentityCredential::new(Some(options))
                .map_err(identity_error("managed identity"))?;
            Ok(Arc::new(
                karpenter_azure::arm::AzureIdentityCredential::new(inner),
            ))
        }
    }
}

/// Wraps an `azure_identity` error, naming the credential it came from.
#[cfg(feature = "azure-identity")]
fn identity_error<E: std::error::Error + Send + Sync + 'static>(
    credential: &'static str,
) -> impl FnOnce(E) -> CredentialError {
    move |source| CredentialError::Identity {
        credential,
        source: Box::new(source),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// An environment holding `vars`.
    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        let vars: BTreeMap<&str, &str> = vars.iter().copied().collect();
        move |name| vars.get(name).map(|value| (*value).to_owned())
    }

    /// What the workload identity webhook injects.
    const WEBHOOK: [(&str, &str); 4] = [
        (
            "AZURE_FEDERATED_TOKEN_FILE",
            "/var/run/secrets/azure/tokens/azure-identity-token",
        ),
        ("AZURE_CLIENT_ID", "00000000-0000-0000-0000-000000000001"),
        ("AZURE_TENANT_ID", "00000000-0000-0000-0000-000000000002"),
        ("AZURE_AUTHORITY_HOST", "https://login.microsoftonline.com/"),
    ];

    #[test]
    fn a_static_token_wins_over_any_identity() {
        let mut vars = WEBHOOK.to_vec();
        vars.push((TOKEN_VARIABLE, "eyJ0eXAi.secret"));
        let choice = choose(env(&vars)).expect("a credential");
        assert_eq!(
            choice,
            CredentialChoice::Static(Secret::new("eyJ0eXAi.secret"))
        );
        assert_eq!(choice.name(), "static token");
        assert!(!format!("{choice:?}").contains("secret"));
    }

    #[cfg(feature = "azure-identity")]
    #[test]
    fn the_webhooks_variables_choose_workload_identity() {
        let mut vars = WEBHOOK.to_vec();
        // An empty token is no token.
        vars.push((TOKEN_VARIABLE, ""));
        let choice = choose(env(&vars)).expect("a credential");
        assert_eq!(
            choice,
            CredentialChoice::WorkloadIdentity {
                token_file: PathBuf::from(WEBHOOK[0].1),
                client_id: WEBHOOK[1].1.to_owned(),
                tenant_id: WEBHOOK[2].1.to_owned(),
            }
        );
        assert_eq!(choice.name(), "workload identity");
    }

    #[cfg(feature = "azure-identity")]
    #[test]
    fn a_workload_identity_is_built_from_its_token_file_and_refused_without_it() {
        let dir = std::env::temp_dir().join(format!("karpenter-wi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let token_file = dir.join("azure-identity-token");
        let choice = |token_file: &std::path::Path| CredentialChoice::WorkloadIdentity {
            token_file: token_file.to_owned(),
            client_id: WEBHOOK[1].1.to_owned(),
            tenant_id: WEBHOOK[2].1.to_owned(),
        };
        // azure_identity reads the file when the credential is built.
        let error = build(choice(&token_file)).expect_err("no token file yet");
        assert!(
            matches!(
                error,
                CredentialError::Identity {
                    credential: "workload identity",
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(std::error::Error::source(&error).is_some());
        std::fs::write(&token_file, "eyJhbGciOi.service-account.token").expect("written");
        let built = build(choice(&token_file));
        std::fs::remove_dir_all(&dir).expect("removed");
        assert!(built.is_ok());
    }

    #[cfg(feature = "azure-identity")]
    #[test]
    fn a_token_file_without_its_identity_names_the_missing_variable() {
        for missing in ["AZURE_CLIENT_ID", "AZURE_TENANT_ID"] {
            let vars: Vec<_> = WEBHOOK
                .iter()
                .copied()
                .filter(|(n, _)| *n != missing)
                .collect();
            let error = choose(env(&vars)).expect_err("incomplete");
            assert!(error.to_string().contains(missing), "{error}");
        }
    }

    #[cfg(feature = "azure-identity")]
    #[test]
    fn without_a_token_file_the_managed_identity_is_used() {
        let choice = choose(env(&[])).expect("a credential");
        assert_eq!(
            choice,
            CredentialChoice::ManagedIdentity { client_id: None }
        );
        assert_eq!(choice.name(), "managed identity");
        let user_assigned = choose(env(&[WEBHOOK[1]])).expect("a credential");
        assert_eq!(
            user_assigned,
            CredentialChoice::ManagedIdentity {
                client_id: Some(WEBHOOK[1].1.to_owned())
            }
        );
        assert!(build(choice).is_ok());
        assert!(build(user_assigned).is_ok());
    }

    #[cfg(not(feature = "azure-identity"))]
    #[test]
    fn without_the_feature_a_missing_token_names_the_variable_and_the_feature() {
        for vars in [&[][..], &WEBHOOK[..], &[(TOKEN_VARIABLE, "")][..]] {
            let error = choose(env(vars)).expect_err("no token");
            let shown = error.to_string();
            assert!(shown.contains(TOKEN_VARIABLE), "{shown}");
            assert!(shown.contains("`azure-identity`"), "{shown}");
        }
    }
}

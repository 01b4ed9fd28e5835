//! The controller's kube config and client: `--kubeconfig`, else the file
//! `KUBECONFIG` names, else the in-cluster service account. The config is
//! kept apart from the client because the Azure nodes trust the API server
//! by the config's CA.

use std::path::PathBuf;

use kube::Client;
use kube::config::{Config, KubeConfigOptions, Kubeconfig};

use super::args::Args;
use super::error::RunError;

/// Where the kube config comes from: `--kubeconfig`, else the file
/// `KUBECONFIG` names, else (`None`) the in-cluster service account.
fn kubeconfig_path(args: &Args) -> Option<PathBuf> {
    args.kubeconfig.clone().or_else(|| {
        std::env::var_os("KUBECONFIG")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
}

/// Where [`RunError::Config`] says the config was looked for.
fn config_source(path: Option<&PathBuf>) -> String {
    path.map_or_else(
        || "the in-cluster service account (no --kubeconfig, no KUBECONFIG)".into(),
        |p| p.display().to_string(),
    )
}

/// The kube config: `--kubeconfig`, else the file `KUBECONFIG` names, else
/// the in-cluster service account. The Azure nodes trust the API server
/// by its CA.
pub(super) async fn kube_config(args: &Args) -> Result<Config, RunError> {
    let path = kubeconfig_path(args);
    let failed = |source: Box<dyn std::error::Error + Send + Sync>| RunError::Config {
        from: config_source(path.as_ref()),
        source,
    };
    match &path {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path).map_err(|e| failed(Box::new(e)))?;
            Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| failed(Box::new(e)))
        }
        None => Config::incluster().map_err(|e| failed(Box::new(e))),
    }
}

/// The client for `config`.
pub(super) fn client(args: &Args, mut config: Config) -> Result<Client, RunError> {
    // kube's default client retries 429s by itself, for minutes: an
    // eviction a PodDisruptionBudget refuses would hold the whole round.
    // The driver tries again next round instead, as upstream's eviction
    // queue does.
    config.default_retry = false;
    Client::try_from(config).map_err(|e| RunError::Config {
        from: config_source(kubeconfig_path(args).as_ref()),
        source: Box::new(e),
    })
}

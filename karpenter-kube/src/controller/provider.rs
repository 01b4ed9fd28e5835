//! The cloud `--provider` names. Each cloud is compiled into the binary by a
//! feature of its own (`kwok`, `azure`), so that a controller built for one
//! cloud links no other; a binary built without the cloud the flag names
//! refuses it, naming the feature it lacks, rather than running without a
//! cloud.

use std::sync::Arc;

use karpenter_core::cloudprovider::CloudProvider;

use super::args::{Args, ProviderKind};
use super::error::RunError;
use crate::KubeCluster;

/// Checks what the cloud the flags name needs before anything starts (the
/// Azure settings, all problems listed), so that a controller that cannot
/// run refuses at once instead of after serving and electing a leader.
pub(crate) fn check(args: &Args) -> Result<(), RunError> {
    match args.provider {
        #[cfg(feature = "azure")]
        ProviderKind::Azure => args.azure.settings().map(drop).map_err(RunError::from),
        #[cfg(not(feature = "azure"))]
        ProviderKind::Azure => Err(RunError::ProviderNotCompiled(ProviderKind::Azure)),
        ProviderKind::Fake => Ok(()),
    }
}

/// The cloud the flags name, or [`RunError::ProviderNotCompiled`] when this
/// binary was built without it. `kube_config` is the controller's own: the
/// Azure nodes trust the API server by its CA.
pub(crate) async fn provider(
    args: &Args,
    #[cfg_attr(
        not(feature = "azure"),
        expect(unused_variables, reason = "only Azure's nodes join the cluster")
    )]
    kube_config: &kube::Config,
    #[cfg_attr(
        not(any(feature = "kwok", feature = "azure")),
        expect(unused_variables, reason = "a binary without a cloud hands it to none")
    )]
    cluster: &KubeCluster,
) -> Result<Arc<dyn CloudProvider>, RunError> {
    match args.provider {
        #[cfg(feature = "kwok")]
        ProviderKind::Fake => kwok(args, cluster),
        #[cfg(feature = "azure")]
        ProviderKind::Azure => super::azure::provider(&args.azure, cluster, kube_config).await,
        #[cfg(not(feature = "kwok"))]
        ProviderKind::Fake => Err(RunError::ProviderNotCompiled(ProviderKind::Fake)),
        #[cfg(not(feature = "azure"))]
        ProviderKind::Azure => Err(RunError::ProviderNotCompiled(ProviderKind::Azure)),
    }
}

/// `--provider fake`: the Node-launching fake cloud, offering the instance
/// types of `--instance-types`.
#[cfg(feature = "kwok")]
fn kwok(args: &Args, cluster: &KubeCluster) -> Result<Arc<dyn CloudProvider>, RunError> {
    use std::path::PathBuf;

    let path = args
        .instance_types
        .clone()
        .ok_or_else(|| RunError::NoInstanceTypes(PathBuf::from("--instance-types")))?;
    let types = super::instance_types::load_instance_types(&path)?;
    if types.is_empty() {
        return Err(RunError::NoInstanceTypes(path));
    }
    tracing::info!(instance_types = types.len(), file = %path.display(), "fake cloud");
    Ok(Arc::new(super::kwok::KwokProvider::new(
        types,
        cluster.clone(),
        args.field_manager.clone(),
    )))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::KubeClusterOptions;

    /// A cluster whose API server is not there: the provider is chosen
    /// before anything is asked of it.
    fn config() -> kube::Config {
        kube::Config::new("http://127.0.0.1:9".parse().expect("a URI"))
    }

    fn cluster() -> KubeCluster {
        let client = kube::Client::try_from(config()).expect("a client");
        KubeCluster::with_options(client, KubeClusterOptions::default())
    }

    /// Whether the provider the flags name was refused as not compiled in;
    /// when it was, the error names the feature.
    async fn refused(flags: &[&str]) -> bool {
        let args = Args::try_parse_from(flags).expect("the flags parse");
        match check(&args) {
            Ok(()) => {}
            Err(error) => return matches!(error, RunError::ProviderNotCompiled(_)),
        }
        match provider(&args, &config(), &cluster()).await {
            Err(RunError::ProviderNotCompiled(kind)) => {
                let message = RunError::ProviderNotCompiled(kind).to_string();
                assert!(
                    message.contains(&format!("`{}` feature", kind.feature())),
                    "{message}"
                );
                assert!(
                    message.contains(&format!("--provider {}", kind.name())),
                    "{message}"
                );
                true
            }
            _ => false,
        }
    }

    #[tokio::test]
    async fn a_provider_is_refused_exactly_when_its_feature_is_off() {
        let fake = [
            "karpenter-controller",
            "--provider",
            "fake",
            "--instance-types",
            "/nonexistent/types.yaml",
        ];
        assert_eq!(refused(&fake).await, !cfg!(feature = "kwok"));
        let azure = [
            "karpenter-controller",
            "--provider",
            "azure",
            "--azure-subscription-id",
            "sub",
        ];
        assert_eq!(refused(&azure).await, !cfg!(feature = "azure"));
    }
}

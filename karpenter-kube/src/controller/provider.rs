//! The cloud `--provider` names. Each cloud is compiled into the binary by a
//! feature of its own (`kwok`, `azure`, `aws`), so that a controller built for one
//! cloud links no other; a binary built without the cloud the flag names
//! refuses it, naming the feature it lacks, rather than running without a
//! cloud.

use std::sync::Arc;

use karpenter_core::cloudprovider::CloudProvider;
use tokio::sync::watch;

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
        #[cfg(feature = "aws")]
        ProviderKind::Aws => args.aws.settings().map(drop).map_err(RunError::from),
        #[cfg(not(feature = "aws"))]
        ProviderKind::Aws => Err(RunError::ProviderNotCompiled(ProviderKind::Aws)),
        ProviderKind::Fake => Ok(()),
    }
}

/// Work a cloud starts only once this replica leads (it writes to the
/// cluster or its cloud), until the receiver turns true.
pub(crate) type Background = Box<dyn FnOnce(&watch::Receiver<bool>) + Send>;

/// The cloud the flags name, with the work it starts once this replica
/// leads, or [`RunError::ProviderNotCompiled`] when this binary was built
/// without it. `kube_config` is the controller's own: the Azure and AWS
/// nodes trust the API server by its CA.
pub(crate) async fn provider(
    args: &Args,
    #[cfg_attr(
        not(any(feature = "azure", feature = "aws")),
        expect(
            unused_variables,
            reason = "only Azure's and AWS's nodes join the cluster"
        )
    )]
    kube_config: &kube::Config,
    #[cfg_attr(
        not(any(feature = "kwok", feature = "azure", feature = "aws")),
        expect(unused_variables, reason = "a binary without a cloud hands it to none")
    )]
    cluster: &KubeCluster,
) -> Result<(Arc<dyn CloudProvider>, Option<Background>), RunError> {
    match args.provider {
        #[cfg(feature = "kwok")]
        ProviderKind::Fake => Ok((kwok(args, cluster)?, None)),
        #[cfg(feature = "azure")]
        ProviderKind::Azure => Ok((
            super::azure::provider(&args.azure, cluster, kube_config).await?,
            None,
        )),
        #[cfg(feature = "aws")]
        ProviderKind::Aws => {
            let reserved = args
                .planning
                .feature_gates()
                .is_on(karpenter_core::features::FeatureGate::ReservedCapacity);
            let (provider, background) =
                super::aws::provider(&args.aws, cluster, kube_config, reserved).await?;
            let start: Background = Box::new(move |stopping| background.start(stopping));
            Ok((provider, Some(start)))
        }
        #[cfg(not(feature = "kwok"))]
        ProviderKind::Fake => Err(RunError::ProviderNotCompiled(ProviderKind::Fake)),
        #[cfg(not(feature = "azure"))]
        ProviderKind::Azure => Err(RunError::ProviderNotCompiled(ProviderKind::Azure)),
        #[cfg(not(feature = "aws"))]
        ProviderKind::Aws => Err(RunError::ProviderNotCompiled(ProviderKind::Aws)),
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
        let aws = [
            "karpenter-controller",
            "--provider",
            "aws",
            "--cluster-name",
            "demo",
        ];
        if !cfg!(feature = "aws") {
            assert!(refused(&aws).await);
        }
    }
}

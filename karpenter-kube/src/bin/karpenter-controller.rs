//! `karpenter-controller`: Karpenter's provisioning and disruption on a
//! Kubernetes cluster. `--help` lists the flags; the README shows it on kind.

use std::process::ExitCode;

use clap::Parser;
use karpenter_kube::controller::{Args, logging, run};

/// Planning allocates many small objects on several threads; mimalloc does
/// that in about half the time glibc's malloc takes.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(error) = logging::init(args.log_format, None) {
        eprintln!("karpenter-controller: {error}");
        return ExitCode::FAILURE;
    }
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            let mut text = error.to_string();
            let mut source = std::error::Error::source(&error);
            while let Some(cause) = source {
                text.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            tracing::error!(error = text, "karpenter-controller stopped");
            eprintln!("karpenter-controller: {text}");
            ExitCode::FAILURE
        }
    }
}

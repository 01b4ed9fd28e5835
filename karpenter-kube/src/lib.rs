//! The karpenter engine on a Kubernetes cluster.

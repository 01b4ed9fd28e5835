//! A Kubernetes API server in memory, served on 127.0.0.1.

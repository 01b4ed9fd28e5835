//! What `karpenter-sim` prints: summaries of scenarios and phase timings.

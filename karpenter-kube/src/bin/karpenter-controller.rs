//! karpenter-controller.
fn main() {}

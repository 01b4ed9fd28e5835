//! Snapshot assembly from the watch stores.
fn main() {}

//! The annotations the driver writes on NodeClaims, so that a command lives
//! on the cluster and a driver started afresh can carry it on. Both the
//! disruption commands and the claims' lifecycle read them, so they sit below
//! both.

/// On a candidate's NodeClaim: the ID of the command disrupting it.
pub const COMMAND_ANNOTATION: &str = "driver.karpenter-core.dev/command";
/// On a candidate's NodeClaim: when its command started (RFC 3339).
pub const COMMAND_STARTED_ANNOTATION: &str = "driver.karpenter-core.dev/command-started";
/// On a candidate's NodeClaim: how many replacements its command launches.
pub const COMMAND_REPLACEMENTS_ANNOTATION: &str = "driver.karpenter-core.dev/command-replacements";
/// On a replacement's NodeClaim: the ID of the command it serves.
pub const REPLACES_ANNOTATION: &str = "driver.karpenter-core.dev/replaces";

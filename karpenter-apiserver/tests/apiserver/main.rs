//! The API server's integration tests, one binary (linking every dependency
//! once rather than per file), through a real `kube::Client`: reads and
//! writes of objects, and watches.

mod objects;
mod watches;

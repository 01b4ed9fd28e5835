//! The fake cloud's instance types, read from InstanceType documents as
//! karpenter-sim reads them.

use std::path::Path;

use karpenter_core::cloudprovider::InstanceType;
use karpenter_scenario::{LoadError, LoadOptions, Scenario};

/// The instance types the `karpenter.fake/v1alpha1` `InstanceType` documents
/// of `path` describe. Errors name the file, the document and the field.
pub fn load_instance_types(path: &Path) -> Result<Vec<InstanceType>, LoadError> {
    let scenario = Scenario::load_files(&[path], &LoadOptions::default())?;
    scenario.fake_instance_types()
}

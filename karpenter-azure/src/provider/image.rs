//! The image a size boots, as upstream's resolver picks it
//! (`ResolveNodeImageFromNodeClass`): the first of the AKSNodeClass's
//! `status.images`, in the order written, whose requirements (architecture,
//! Hyper-V generation, trusted launch) the size meets. An arm64 or a
//! Gen1-only size so never gets an image it cannot boot. A status listing
//! no images leaves the choice to the class's family ([`gallery`]).
//!
//! One departure, for want of data: the embedded catalog knows the Hyper-V
//! generations of only a few sizes (the public fixtures it is made from
//! lack them). For a size whose generations it does not know, an image's
//! generation requirement is not judged: the first image of the size's
//! architecture wins, which is right for every size that runs Gen2 and
//! wrong only for the old Gen1-only series.

use k8s_openapi::api::core::v1::NodeSelectorRequirement;
use karpenter_core::cloudprovider::{CloudProviderError, InstanceType};
use karpenter_core::scheduling::{Operator, Requirements, WellKnownLabels};

use crate::instancetype::labels::SKU_HYPERV_GENERATION;
use crate::nodeclass::AKSNodeClass;

/// The ID of the image `instance_type` boots under `class`'s status: the
/// first status image whose requirements it meets, `None` when the status
/// lists none (the class's family then chooses, see [`gallery`]). A status
/// whose images all ask for another architecture or generation fails the
/// launch (`NoCompatibleImage`), and so does an image requirement that is
/// not a node selector requirement (`InvalidImageRequirements`, naming the
/// entry).
pub(super) fn image_for(
    class: &AKSNodeClass,
    instance_type: &InstanceType,
) -> Result<Option<String>, CloudProviderError> {
    let images = class
        .status
        .as_ref()
        .and_then(|s| s.images.as_deref())
        .unwrap_or_default();
    if images.is_empty() {
        return Ok(None);
    }
    let class_name = class.metadata.name.as_deref().unwrap_or_default();
    for (index, image) in images.iter().enumerate() {
        let requirements = requirements(image.requirements.as_deref().unwrap_or_default())
            .map_err(|message| CloudProviderError::Create {
                reason: "InvalidImageRequirements".to_owned(),
                message: format!(
                    "AKSNodeClass {class_name}: status.images[{index}].requirements: {message}"
                ),
                source: None,
            })?;
        if meets(instance_type, &requirements) {
            return Ok(Some(image.id.clone()));
        }
    }
    Err(no_compatible_image(format!(
        "none of AKSNodeClass {class_name}'s {} status images is for size {} \
         (its architecture or Hyper-V generation)",
        images.len(),
        instance_type.name
    )))
}

/// The launch error of a size no image is for.
fn no_compatible_image(message: String) -> CloudProviderError {
    CloudProviderError::Create {
        reason: "NoCompatibleImage".to_owned(),
        message,
        source: None,
    }
}

/// An image's requirements as the engine reads them.
fn requirements(values: &[serde_json::Value]) -> Result<Requirements, String> {
    let parsed: Vec<NodeSelectorRequirement> = values
        .iter()
        .map(|v| serde_json::from_value(v.clone()).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    Requirements::from_node_selector_requirements(&parsed).map_err(|e| e.to_string())
}

/// Whether `it` meets an image's `requirements`, as upstream's
/// `Compatible`: they intersect, and a label the image requires present is
/// one the size defines; a generation the catalog does not know for the
/// size is not judged (see the module's note).
fn meets(it: &InstanceType, requirements: &Requirements) -> bool {
    let generation_unknown =
        it.requirements.get(SKU_HYPERV_GENERATION).operator() == Operator::DoesNotExist;
    let judged: Requirements = requirements
        .iter()
        .filter(|r| !(generation_unknown && r.key() == SKU_HYPERV_GENERATION))
        .cloned()
        .collect();
    it.requirements
        .is_compatible(&judged, &WellKnownLabels::empty())
}

pub(super) mod gallery;
#[cfg(test)]
mod tests;

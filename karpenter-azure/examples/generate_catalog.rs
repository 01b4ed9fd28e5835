//! Writes the embedded catalog from the public Azure data tables:
//!
//! ```text
//! cargo run -p karpenter-azure --example generate_catalog -- ../shared/azure-data karpenter-azure/data
//! ```
//!
//! See `karpenter_azure::generate` for what goes in each file.

use std::path::Path;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let [_, input, output] = args.as_slice() else {
        return Err("usage: generate_catalog <shared/azure-data> <karpenter-azure/data>".into());
    };
    for (file, text) in karpenter_azure::generate::generate(Path::new(input))? {
        let path = Path::new(output).join(file);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

//! External patches: the seam through which runtime extensions generate and validate patches.

use std::collections::BTreeMap;

use serde_json::Value;

use super::inline::PatchItem;

/// Generates and validates patches outside the engine (runtime extensions). The engine calls
/// `generate` after the inline patches, then `validate` on the result.
pub trait ExternalPatches {
    /// Patches `items` in place for the external patch `patch` (by name).
    fn generate(&self, patch: &str, items: &mut [PatchItem]) -> Result<(), String>;
    /// Checks the patched `items` for the external patch `patch`; an error refuses the plan.
    fn validate(&self, patch: &str, items: &[PatchItem]) -> Result<(), String>;
}

/// No runtime extensions: external patches change nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoExternalPatches;

impl ExternalPatches for NoExternalPatches {
    fn generate(&self, _patch: &str, _items: &mut [PatchItem]) -> Result<(), String> {
        Ok(())
    }

    fn validate(&self, _patch: &str, _items: &[PatchItem]) -> Result<(), String> {
        Ok(())
    }
}

/// External patches answered from memory (tests): per patch name, a JSON merge of `spec` fields
/// into every item whose kind matches.
#[derive(Debug, Clone, Default)]
pub struct MemoryExternalPatches {
    /// Patch name -> (template kind -> value merged into the template's `spec`).
    pub merges: BTreeMap<String, BTreeMap<String, Value>>,
    /// Patch names whose validation fails, with the message.
    pub invalid: BTreeMap<String, String>,
}

impl ExternalPatches for MemoryExternalPatches {
    fn generate(&self, patch: &str, items: &mut [PatchItem]) -> Result<(), String> {
        let Some(by_kind) = self.merges.get(patch) else {
            return Ok(());
        };
        for item in items {
            let kind = item.object["kind"].as_str().unwrap_or_default().to_owned();
            if let Some(value) = by_kind.get(&kind) {
                json_patch::merge(&mut item.object["spec"], value);
            }
        }
        Ok(())
    }

    fn validate(&self, patch: &str, _items: &[PatchItem]) -> Result<(), String> {
        self.invalid
            .get(patch)
            .map_or(Ok(()), |message| Err(message.clone()))
    }
}

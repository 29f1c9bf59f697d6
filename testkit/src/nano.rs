//! The one nano fixture: a synthetic model of a spec profile (`synth::model`), the profile's
//! groupwise-int template (`synth::template`) and the artifact packed from both
//! (`pack::pack_bytes`, default options). Tests, fuzz seeds and benches that need the
//! synth → template → pack sequence build it here, one way.

use ninfer_ternary::codec::TernaryType;
use ninfer_ternary::pack::{pack_bytes, PackOptions};
use ninfer_ternary::spec::{self, ModelProfile};
use ninfer_ternary::synth::{model, template};

/// The profile every nano fixture uses.
pub const NANO: &str = "bonsai-nano";

/// A synthetic model, its template and the artifact packed from both.
#[derive(Clone, Debug)]
pub struct Fixture {
    /// The synthetic GGUF.
    pub gguf: Vec<u8>,
    /// The groupwise-int template of its profile.
    pub template: Vec<u8>,
    /// `pack_bytes(gguf, template)` with default options.
    pub artifact: Vec<u8>,
}

/// A compiled-in profile by name (panics on a name the spec lacks: a test defect).
pub fn profile(name: &str) -> ModelProfile {
    spec::profile(name).unwrap_or_else(|| panic!("no profile {name} in spec/models"))
}

/// The synthetic model of profile `name` in format `ty` from `seed`.
pub fn model_of(name: &str, ty: TernaryType, seed: u64) -> Vec<u8> {
    model::model_bytes(&profile(name), ty, seed).expect("the synthesizer writes every profile")
}

/// The groupwise-int template of profile `name`.
pub fn template_of(name: &str) -> Vec<u8> {
    template::template_bytes(&profile(name)).expect("the template writer writes every profile")
}

/// The synthetic nano model in format `ty` from `seed`.
pub fn model(ty: TernaryType, seed: u64) -> Vec<u8> {
    model_of(NANO, ty, seed)
}

/// The nano template.
pub fn template() -> Vec<u8> {
    template_of(NANO)
}

/// The nano model of `ty` from `seed`, its template and the artifact packed from both.
pub fn packed(ty: TernaryType, seed: u64) -> Fixture {
    let gguf = model(ty, seed);
    let template = template();
    let artifact = pack_bytes(&gguf, &template, &PackOptions::default())
        .expect("the synthetic nano model packs onto its template");
    Fixture {
        gguf,
        template,
        artifact,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixture_is_deterministic_and_its_artifact_reopens() {
        let a = packed(TernaryType::Ptq1_0, 3);
        let b = packed(TernaryType::Ptq1_0, 3);
        assert_eq!(a.artifact, b.artifact);
        ninfer_ternary::ninfer::Artifact::parse(&a.artifact).expect("re-opens");
        // The seed and the format reach the model (a fixture ignoring them would pass above).
        assert_ne!(model(TernaryType::Ptq1_0, 4), a.gguf);
        assert_ne!(model(TernaryType::Pq2_0, 3), a.gguf);
    }
}

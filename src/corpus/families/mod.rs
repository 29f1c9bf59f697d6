//! One module per corpus family.

internal_mod!(boundaries);
internal_mod!(codec);
internal_mod!(gguf);
internal_mod!(kernel);
internal_mod!(ninfer);
internal_mod!(pack);
internal_mod!(registry);
internal_mod!(verify);

/// A generator step that failed on the generator's own fixed inputs: a bug in this tool, never
/// an input (`internal.invariant`), naming the step.
pub(crate) fn bug(step: &str, why: impl std::fmt::Display) -> crate::Error {
    crate::Error::new(
        crate::ErrorClass::InternalInvariant,
        format!("corpus generate: {step}"),
        why.to_string(),
    )
}

//! Generators of Bonsai-shaped stand-ins: the synthetic GGUF model and the groupwise-int template.

mod lanes;
pub mod model;
pub mod oracle;
mod par;
mod ptq1_fields;
pub mod template;

#[cfg(test)]
mod pins;

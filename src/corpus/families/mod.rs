//! One module per corpus family.

pub mod boundaries;
pub mod codec;
pub mod gguf;
pub mod kernel;
pub mod ninfer;
pub mod pack;
pub mod registry;
pub mod verify;

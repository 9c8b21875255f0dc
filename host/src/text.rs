//! Words the text output shares: the launcher's own, so that the program's
//! messages and the launcher's count things the same way.

pub use cg_launcher::text::{gpus_named, plural};

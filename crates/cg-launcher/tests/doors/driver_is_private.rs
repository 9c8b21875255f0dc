//! The raw driver layer: handles that are destroyed in `Drop`, built by
//! hand twice, and a switch that turns cudarc's event tracking off on any
//! context.
use cg_launcher::driver::{GraphExec, single_stream};

fn main() {
    let _ = (GraphExec::end_capture, single_stream);
}

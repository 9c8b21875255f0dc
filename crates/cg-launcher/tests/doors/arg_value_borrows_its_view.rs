//! A raw launch argument that outlives its buffer: it borrows the view.
use cg_launcher::device::{ArgValue, EmulatedDevice, Gpu};

fn main() -> cg_launcher::error::Result<()> {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let arg = {
        let mut buffer = gpu.zeros::<f32>(4)?;
        let view = buffer.slice_mut(..);
        ArgValue::output(&view)
    };
    println!("{arg:?}");
    Ok(())
}

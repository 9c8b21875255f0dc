//! The review's repro (issue 63, item 2): a dependent's own `Arg` passing a
//! `u8` view for an `Out<u32>`, so the kernel writes four times past it.
//! `Arg` is sealed: this implementation does not compile.
use cg_kernel::mem::Out;
use cg_launcher::device::{ArgValue, ViewMut};
use cg_launcher::launch::Arg;

struct Bytes<'a>(ViewMut<'a, u8>);

impl Arg<Out<u32>> for Bytes<'_> {
    fn value(&self) -> ArgValue<'_> {
        ArgValue::output(&self.0)
    }
}

fn main() {}

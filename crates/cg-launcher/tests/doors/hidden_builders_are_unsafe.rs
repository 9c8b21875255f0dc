//! The review's repros (issue 63, item 3): the two hidden builders that
//! change what an `unsafe` kernel relies on, called from safe code. A
//! kernel given no shared memory writes past its allocation; a kernel
//! renamed into another crate launches that crate's kernel of the same
//! name with these parameters. Both are `unsafe fn`s now: neither compiles.
use cg_kernel::kernels::{KernelDef, NoGridSync};
use cg_kernel::mem::Out;

fn no_shared_memory(def: KernelDef<(Out<u32>,), NoGridSync>) -> KernelDef<(Out<u32>,), NoGridSync> {
    def.with_shared_memory(|_| 0)
}

fn another_crate(def: KernelDef<(Out<u32>,), NoGridSync>) -> KernelDef<(Out<u32>,), NoGridSync> {
    def.in_crate("other")
}

fn main() {
    let _ = (no_shared_memory, another_crate);
}

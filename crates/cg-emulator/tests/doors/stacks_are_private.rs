//! The emulator's coroutine stacks trust their caller: a stack restored
//! into the wrong slot would overwrite another thread's.
fn main() {
    let _ = cg_emulator::stack::SlotStack::restore;
}

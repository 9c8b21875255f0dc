//! Emulated device memory is `Sync`: a write through `&Memory` from two
//! threads at once would race.
use cg_emulator::Memory;

fn main() {
    let memory = Memory::zeroed(16).unwrap();
    let shared = &memory;
    std::thread::scope(|s| {
        s.spawn(|| shared.write(0, &[1; 16]));
        s.spawn(|| shared.write(0, &[2; 16]));
    });
}

//! `Shared<T>`'s host accesses are one atomic of the element's size each
//! (issue 63, item 1): a thread that fills a `Shared` while another reads it
//! never shows the reader part of an element. Before, `fill` stored one
//! byte at a time and `read` loaded four, so a reader saw elements half
//! old and half new, and the two sizes of atomic on one location were
//! undefined behaviour under Rust's memory model.

use cg_emulator::Options;
use cg_launcher::device::{EmulatedDevice, Gpu, Pod};

/// One thread fills `shared` with `a` and `b` in turn while this one reads
/// it; every element read is `a` or `b`, whole.
fn never_torn<T: Pod + PartialEq + std::fmt::Debug + Send + Sync>(a: T, b: T) {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Options::default());
    let shared = gpu.shared::<T>(256).unwrap();
    shared.fill(a);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for k in 0..4000 {
                shared.fill(if k % 2 == 0 { b } else { a });
            }
            done.store(true, std::sync::atomic::Ordering::Release);
        });
        let mut reads = 0;
        while !done.load(std::sync::atomic::Ordering::Acquire) || reads < 10 {
            for v in shared.read() {
                assert!(v == a || v == b, "a torn element: {v:?}, neither {a:?} nor {b:?}");
            }
            reads += 1;
        }
    });
}

#[test]
fn a_shared_read_while_another_thread_fills_it_never_sees_part_of_an_element() {
    never_torn::<u32>(0, u32::MAX);
    never_torn::<u64>(0, u64::MAX);
    never_torn::<u16>(0, u16::MAX);
    never_torn::<f64>(0.0, f64::MAX);
}

//! A kernel thread that overflows its stack on the emulator is named: the
//! process still dies of `SIGSEGV` (the emulator cannot unwind a thread
//! past its guard page), but it first writes which kernel, block and thread
//! overflowed, where before 2026-12-04 it died without a word.

use cg_kernel::cg::this_grid;
use cg_kernel::kernel;
use cg_kernel::mem::Out;
use cg_launcher::device::{EmulatedDevice, Gpu};
use std::os::unix::process::ExitStatusExt;
use std::process::Command;

/// Linux's number for `SIGSEGV`.
const SIGSEGV: i32 = 11;

/// Recurses `depth` frames of at least 1 KiB each; returns `depth`.
#[inline(never)]
fn deeper(depth: u32) -> u32 {
    let frame = std::hint::black_box([1u8; 1024]);
    if depth == 0 { 0 } else { deeper(depth - 1) + std::hint::black_box(frame)[1023] as u32 }
}

/// Thread 0 of block 1 recurses `deep` frames, every other thread one.
///
/// # Safety
/// `out` holds one element per thread of the grid.
#[kernel(emulator)]
pub unsafe fn recurse(deep: u32, out: Out<u32>) {
    let i = this_grid().thread_rank();
    let depth = if i == 32 { deep } else { 1 };
    // SAFETY: one element per thread.
    unsafe { out.write(i, deeper(depth)) };
}

const CHILD: &str = "CG_STACK_OVERFLOW_CHILD";

/// Run as a child by the test below (and a no-op when run alone): one
/// launch of 2 blocks of 32 threads, thread 32 recursing `$CHILD` frames.
#[test]
fn child_recursion() {
    let Ok(deep) = std::env::var(CHILD) else { return };
    let gpu = Gpu::emulated(EmulatedDevice::T4, Default::default());
    let mut out = gpu.zeros::<u32>(64).unwrap();
    let k = gpu.kernel(&RECURSE).unwrap();
    // SAFETY: 64 elements for 2 blocks of 32 threads.
    unsafe { k.launch(2, 32, (deep.parse::<u32>().unwrap(), out.slice_mut(..))) }.unwrap();
    println!("thread 32 returned {}", gpu.read(&out).unwrap()[32]);
}

fn child(deep: u32) -> (std::process::ExitStatus, String, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_recursion", "--nocapture", "--test-threads", "1"])
        .env(CHILD, deep.to_string())
        .output()
        .unwrap();
    (out.status, String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_kernel_thread_that_overflows_its_emulated_stack_is_named_before_the_process_dies() {
    // 20 frames of 1 KiB (a few KiB in a debug build) fit in the emulator's 256 KiB.
    let (status, stdout, stderr) = child(20);
    assert!(status.success() && stdout.contains("thread 32 returned 20"), "{stdout}{stderr}");
    // 10,000 do not.
    let (status, stdout, stderr) = child(10_000);
    assert_eq!(status.signal(), Some(SIGSEGV), "{stdout}{stderr}");
    assert!(stderr.contains("error: thread 0 of block 1 of kernel `recurse` overflowed its emulated stack (256 KiB)"), "{stderr}");
}

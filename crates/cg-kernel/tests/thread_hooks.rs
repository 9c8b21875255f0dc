//! The hooks a kernel's host build calls (`cg_emulator::thread`) are public
//! and safe: given what cg-kernel's `mem` never passes (an index past an
//! `Out` argument, a slot the launch does not have, an atomic's address
//! that is not its element's), each stops the launch with a named fault and
//! touches no memory outside the launch's arguments. Before cg-emulator was
//! a crate of its own they were private, since each trusted its arguments:
//! `global_write(0, "y", 1 << 40, 0)` was written at the next grid barrier,
//! 4 TiB past `y` (cg-kernel's door `emulated_write_past_a_buffer`).

use cg_emulator::thread::{self, Element};
use cg_emulator::{Arg, Device, Fault, Launch, Options};
use cg_kernel::kernel;
use cg_kernel::kernels::Params;
use cg_kernel::mem::Out;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The address of the launch's `Out` argument, which the atomics' kernels
/// forge elements from.
static Y: AtomicUsize = AtomicUsize::new(0);
/// One launch at a time: each sets `Y`.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Writes element `1 << 40` of the `Out` in slot 0 through the hook.
///
/// # Safety
/// None: it is the hook's to refuse.
#[kernel(emulator)]
pub unsafe fn write_far(_y: Out<u32>) {
    thread::global_write(0, "y", 1 << 40, 7);
}

/// Writes through slot 3, which a launch of one `Out` does not have.
///
/// # Safety
/// None.
#[kernel(emulator)]
pub unsafe fn write_through_another_slot(_y: Out<u32>) {
    thread::global_write(3, "y", 0, 7);
}

/// Reads element `1 << 40` of slot 0 through the hook.
///
/// # Safety
/// None.
#[kernel(emulator)]
pub unsafe fn read_far(_y: Out<u32>) {
    let _ = thread::global_read(0, "y", 1 << 40, &|| 0);
}

/// An atomic add on a forged element: slot 0's index 0, at an address 64
/// bytes past the buffer.
///
/// # Safety
/// None.
#[kernel(emulator)]
pub unsafe fn atomic_elsewhere(_y: Out<u32>) {
    let at = Y.load(Ordering::Relaxed) + 64;
    let e = Element { slot: 0, name: "y", index: 0, address: at, size: 4 };
    let _ = thread::global_atomic(e, false, "atomic_add()", &|old| old + 1);
}

/// The same atomic on the element itself: allowed.
///
/// # Safety
/// None.
#[kernel(emulator)]
pub unsafe fn atomic_here(_y: Out<u32>) {
    let e = Element { slot: 0, name: "y", index: 0, address: Y.load(Ordering::Relaxed), size: 4 };
    let _ = thread::global_atomic(e, false, "atomic_add()", &|old| old + 1);
}

/// Runs `entry` on one block of 32 threads with `y` (32 words, words 8..16
/// of them the `Out` argument) and returns the fault, if any, and `y`.
fn run(name: &'static str, entry: unsafe fn(Out<u32>)) -> (Option<Fault>, Vec<u32>) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut y = vec![0u32; 32];
    Y.store(y[8..].as_mut_ptr() as usize, Ordering::Relaxed);
    let args = [Arg::Out { name: "y", address: Y.load(Ordering::Relaxed), len: 8, elem: 4, slot: 0 }];
    // SAFETY: one `Out` argument, the kernel's one parameter.
    let f = move |a: &[Arg]| unsafe { <(Out<u32>,)>::call(entry, a) };
    let launch = Launch {
        kernel: name,
        grid: 1,
        threads: 32,
        shared_bytes: 0,
        shared_tail: 0,
        registers_per_thread: None,
        cooperative: false,
        grid_sync: false,
        cluster: None,
        cluster_kernel: false,
        args: &args,
        entry: &f,
        trace: None,
    };
    // SAFETY: `y[8..16]` is live, aligned and untouched by anything else during the launch.
    let fault = unsafe { Device::T4.launch(&launch, &Options::default()) }.err();
    (fault, y)
}

#[test]
fn a_write_past_the_argument_through_the_hook_is_an_access_out_of_bounds() {
    let (fault, y) = run("write_far", WRITE_FAR.entry());
    assert!(matches!(fault, Some(Fault::OutOfBounds { index, len: 8, .. }) if index == 1 << 40), "{fault:?}");
    assert!(y.iter().all(|&v| v == 0), "memory changed: {y:?}");
}

#[test]
fn a_write_through_a_slot_the_launch_has_not_is_a_fault() {
    let (fault, y) = run("write_through_another_slot", WRITE_THROUGH_ANOTHER_SLOT.entry());
    let message = fault.as_ref().map(|f| f.to_string()).unwrap_or_default();
    assert!(message.contains("no Out argument in slot 3"), "{message}");
    assert!(y.iter().all(|&v| v == 0), "memory changed: {y:?}");
}

#[test]
fn a_read_past_the_argument_through_the_hook_is_an_access_out_of_bounds() {
    let (fault, _) = run("read_far", READ_FAR.entry());
    assert!(matches!(fault, Some(Fault::OutOfBounds { len: 8, .. })), "{fault:?}");
}

#[test]
fn an_atomic_on_an_address_that_is_not_its_element_is_a_fault_and_changes_nothing() {
    let (fault, y) = run("atomic_elsewhere", ATOMIC_ELSEWHERE.entry());
    let message = fault.as_ref().map(|f| f.to_string()).unwrap_or_default();
    assert!(message.contains("not a 4- or 8-byte element of this launch's Out arguments"), "{message}");
    assert!(y.iter().all(|&v| v == 0), "memory changed: {y:?}");
    let (fault, y) = run("atomic_here", ATOMIC_HERE.entry());
    assert!(fault.is_none(), "{fault:?}");
    assert_eq!(y[8], 32, "one add per thread");
}

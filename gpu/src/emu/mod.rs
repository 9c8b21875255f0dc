//! An emulated GPU on the CPU, for running the same kernel source without a
//! GPU: every GPU thread is an OS thread, a block's threads run together with
//! a real barrier, a warp's lanes meet for each shuffle and vote, and a
//! cooperative launch gets a real grid workspace, so `grid.sync()` runs the
//! driver's barrier algorithm on real atomics.
//!
//! Like a GPU, the device has a number of SMs and per-SM limits, so occupancy,
//! the cooperative maximum and the refusal of a grid over it behave as they
//! do on hardware. An ordinary launch runs only as many blocks at once as fit
//! and starts the rest as blocks finish.

pub(crate) mod block;
pub(crate) mod thread;
pub(crate) mod warp;

use block::Block;
use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Once};
use thread::{Aborted, ThreadCtx, Trap};
use warp::{Status, Warp};

/// An emulated device: SMs and what each SM holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Device {
    pub sms: u32,
    pub max_threads_per_sm: u32,
    pub max_blocks_per_sm: u32,
    pub shared_bytes_per_sm: u32,
    pub max_threads_per_block: u32,
}

/// Why an emulated launch failed, named as the CUDA driver names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// `CUDA_ERROR_INVALID_VALUE`: an empty grid or a block the device cannot run.
    InvalidValue(&'static str),
    /// `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`.
    CooperativeLaunchTooLarge { requested: u32, max: u32 },
    /// A thread executed `trap` (on a GPU: `CUDA_ERROR_LAUNCH_FAILED` or similar).
    Trap { block: u32, thread: u32 },
    /// A thread panicked for another reason (a bug in the emulated kernel).
    Panic(String),
}

impl Fault {
    /// The CUDA driver's name for the same failure.
    pub fn driver_name(&self) -> &'static str {
        match self {
            Fault::InvalidValue(_) => "CUDA_ERROR_INVALID_VALUE",
            Fault::CooperativeLaunchTooLarge { .. } => "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
            Fault::Trap { .. } | Fault::Panic(_) => "CUDA_ERROR_LAUNCH_FAILED",
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::InvalidValue(why) => write!(f, "{}: {why}", self.driver_name()),
            Fault::CooperativeLaunchTooLarge { requested, max } => {
                write!(f, "{}: {requested} blocks requested, {max} fit", self.driver_name())
            }
            Fault::Trap { block, thread } => write!(f, "{}: trap in block {block}, thread {thread}", self.driver_name()),
            Fault::Panic(msg) => write!(f, "{}: the emulated kernel panicked: {msg}", self.driver_name()),
        }
    }
}

/// A value a kernel closure may share across the emulated threads: raw
/// device pointers, which the kernel, not Rust, keeps race-free. Read it with
/// [`get`](Self::get) inside the closure (a closure that names the field
/// captures the bare pointer, which is not `Sync`).
#[derive(Clone, Copy)]
pub struct Shared<T>(pub T);

impl<T: Copy> Shared<T> {
    /// The wrapped value.
    pub fn get(&self) -> T {
        self.0
    }
}
// SAFETY: see the type's documentation; kernels order their accesses with
// barriers exactly as they must on a GPU.
unsafe impl<T> Sync for Shared<T> {}
unsafe impl<T> Send for Shared<T> {}

/// The stack each emulated GPU thread gets.
const STACK_BYTES: usize = 256 * 1024;

impl Device {
    /// A T4's SM (1024 threads, 16 blocks, 64 KiB of shared memory) times 4:
    /// 4 blocks of 256 threads per SM, 16 in a cooperative grid.
    pub const T4_LIKE: Device =
        Device { sms: 4, max_threads_per_sm: 1024, max_blocks_per_sm: 16, shared_bytes_per_sm: 64 * 1024, max_threads_per_block: 1024 };

    /// Blocks of `threads` threads and `shared_bytes` of dynamic shared memory
    /// one SM holds at once (the occupancy API's answer).
    pub fn blocks_per_sm(&self, threads: u32, shared_bytes: u32) -> u32 {
        let by_threads = self.max_threads_per_sm / threads.div_ceil(32).max(1) / 32;
        let by_shared = if shared_bytes == 0 { u32::MAX } else { self.shared_bytes_per_sm / shared_bytes };
        by_threads.min(self.max_blocks_per_sm).min(by_shared)
    }

    /// The most blocks a cooperative launch may use.
    pub fn cooperative_capacity(&self, threads: u32, shared_bytes: u32) -> u32 {
        self.blocks_per_sm(threads, shared_bytes) * self.sms
    }

    /// Runs `kernel` on `grid` blocks of `threads` threads, each block with
    /// `shared_bytes` of dynamic shared memory; `cooperative` as with
    /// `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`. Returns when every thread has.
    pub fn launch(&self, grid: u32, threads: u32, shared_bytes: u32, cooperative: bool, kernel: &(dyn Fn() + Sync)) -> Result<(), Fault> {
        if grid == 0 {
            return Err(Fault::InvalidValue("a grid of 0 blocks"));
        }
        if threads == 0 || threads > self.max_threads_per_block {
            return Err(Fault::InvalidValue("threads per block out of range"));
        }
        let fit = self.cooperative_capacity(threads, shared_bytes);
        if fit == 0 {
            return Err(Fault::InvalidValue("one block does not fit on an SM"));
        }
        if cooperative && grid > fit {
            return Err(Fault::CooperativeLaunchTooLarge { requested: grid, max: fit });
        }
        quiet_traps();
        let resident = if cooperative { grid } else { grid.min(fit) };
        let workspace = cooperative.then(|| Box::new([AtomicU32::new(grid), AtomicU32::new(0)]));
        let workspace_ptr = Shared(workspace.as_ref().map_or(std::ptr::null_mut(), |w| w.as_ptr() as *mut u32));
        let abort = Arc::new(AtomicBool::new(false));
        let fault = Faults::default();
        let next = AtomicU32::new(0);
        std::thread::scope(|s| {
            for _ in 0..resident {
                s.spawn(|| {
                    loop {
                        let b = next.fetch_add(1, Ordering::Relaxed);
                        if b >= grid || abort.load(Ordering::Acquire) {
                            break;
                        }
                        self.run_block(b, grid, threads, shared_bytes, workspace_ptr, &abort, &fault, kernel);
                    }
                });
            }
        });
        drop(workspace);
        match fault.first.into_inner().unwrap() {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn run_block(
        &self,
        b: u32,
        grid: u32,
        threads: u32,
        shared_bytes: u32,
        workspace: Shared<*mut u32>,
        abort: &Arc<AtomicBool>,
        fault: &Faults,
        kernel: &(dyn Fn() + Sync),
    ) {
        let block = Arc::new(Block::new(threads, shared_bytes));
        let warps: Vec<Arc<Warp>> = (0..threads.div_ceil(32)).map(|w| Arc::new(Warp::new((threads - 32 * w).min(32)))).collect();
        fault.waiters.lock().unwrap().push((block.clone(), warps.clone()));
        std::thread::scope(|s| {
            for t in 0..threads {
                let ctx = ThreadCtx {
                    tid: [t, 0, 0],
                    bid: [b, 0, 0],
                    bdim: [threads, 1, 1],
                    gdim: [grid, 1, 1],
                    lane: t % 32,
                    warp: warps[(t / 32) as usize].clone(),
                    block: block.clone(),
                    workspace: workspace.0,
                    abort: abort.clone(),
                };
                let spawned = std::thread::Builder::new().stack_size(STACK_BYTES).spawn_scoped(s, move || {
                    thread::enter(ctx);
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(kernel));
                    let ctx = thread::leave().expect("entered above");
                    ctx.warp.set(ctx.lane, Status::Exited);
                    ctx.block.exit();
                    if let Err(payload) = result {
                        record(fault, abort, payload, b, t);
                    }
                });
                if let Err(e) = spawned {
                    record(fault, abort, Box::new(format!("could not start an emulated thread: {e}")), b, t);
                }
            }
        });
    }
}

/// A launch's first fault, and every block and warp whose waiters an abort must wake.
#[derive(Default)]
struct Faults {
    first: Mutex<Option<Fault>>,
    waiters: Mutex<Vec<(Arc<Block>, Vec<Arc<Warp>>)>>,
}

/// Keeps the first fault of a launch and stops the other threads.
fn record(fault: &Faults, abort: &AtomicBool, payload: Box<dyn Any + Send>, block: u32, thread: u32) {
    if payload.is::<Aborted>() {
        return;
    }
    let f = if payload.is::<Trap>() {
        Fault::Trap { block, thread }
    } else if let Some(s) = payload.downcast_ref::<String>() {
        Fault::Panic(s.clone())
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        Fault::Panic(s.to_string())
    } else {
        Fault::Panic("unknown panic".into())
    };
    fault.first.lock().unwrap().get_or_insert(f);
    abort.store(true, Ordering::Release);
    for (block, warps) in fault.waiters.lock().unwrap().iter() {
        block.wake_all();
        warps.iter().for_each(|w| w.wake_all());
    }
}

/// A `trap` unwinds its thread with a [`Trap`] payload; keep the panic hook
/// from printing those (and the [`Aborted`] unwinds that follow).
fn quiet_traps() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let p = info.payload();
            if !p.is::<Trap>() && !p.is::<Aborted>() {
                previous(info);
            }
        }));
    });
}

/// An input whose float sum depends on the order of the additions (values
/// of both signs over 15 binary orders of magnitude), for checking that the
/// emulator adds in exactly the GPU's order: same input, grid and block size,
/// same bits.
pub fn order_sensitive_input(n: usize) -> Vec<f32> {
    (0..n as u64)
        .map(|i| {
            let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            let unit = (z >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            unit * (1u32 << ((z >> 8) % 15)) as f32
        })
        .collect()
}

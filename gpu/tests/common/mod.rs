//! What the emulator's test files share: a small device, arguments over
//! host vectors, and a launch of a `#[kernel]`'s definition on the emulator.
#![allow(dead_code)] // each test file uses its own part

use gpu::emu::{Arg, ClusterShape, Device, Fault, Launch, LaunchStats, Options};
use gpu::kernels::{Contract, KernelDef, Params};

/// A small device: 2 SMs of 256 threads and 4 blocks each, so 4 blocks of
/// 64 threads per SM and 8 in a cooperative grid.
pub const DEV: Device = Device {
    sms: 2,
    threads_per_sm: 256,
    blocks_per_sm: 4,
    shared_bytes_per_sm: 48 * 1024,
    max_shared_per_block: 48 * 1024,
    max_threads_per_block: 1024,
    registers_per_sm: 65536,
    clusters: None,
};

/// Threads per block, where a test does not say otherwise.
pub const THREADS: u32 = 64;

/// A kernel's input, over a host vector.
pub fn input<T>(name: &'static str, v: &[T]) -> Arg {
    Arg::In { name, address: v.as_ptr() as usize, len: v.len(), elem: size_of::<T>() }
}

/// A kernel's output, over a host vector.
pub fn output<T>(name: &'static str, v: &mut [T], slot: u32) -> Arg {
    Arg::Out { name, address: v.as_mut_ptr() as usize, len: v.len(), elem: size_of::<T>(), slot }
}

/// How a launch is shaped: blocks, threads per block, whether it is
/// cooperative, and its clusters.
#[derive(Clone, Copy)]
pub struct Shape {
    pub grid: u32,
    pub threads: u32,
    pub cooperative: bool,
    pub cluster: Option<ClusterShape>,
}

impl Shape {
    /// `grid` blocks of `threads`, no clusters.
    pub fn new(grid: u32, threads: u32, cooperative: bool) -> Shape {
        Shape { grid, threads, cooperative, cluster: None }
    }
}

/// Launches `def` on `dev`, shaped as `shape`, with `args`.
pub fn launch_shaped<P: Params, C: Contract>(dev: &Device, def: &KernelDef<P, C>, shape: Shape, args: &[Arg], options: Options) -> Result<LaunchStats, Fault> {
    let entry = def.entry();
    // SAFETY: each test passes one argument per parameter, of its kind, over live vectors.
    let f = move |a: &[Arg]| unsafe { P::call(entry, a) };
    let launch = Launch {
        kernel: def.name(),
        grid: shape.grid,
        threads: shape.threads,
        shared_bytes: def.shared_bytes(shape.threads),
        shared_tail: 0,
        registers_per_thread: None,
        cooperative: shape.cooperative,
        grid_sync: def.grid_sync(),
        cluster: shape.cluster,
        cluster_kernel: def.cluster(),
        args,
        entry: &f,
        trace: None,
    };
    // SAFETY: each test passes arguments over live vectors of the lengths its kernel reads and writes.
    unsafe { dev.launch(&launch, &options) }
}

/// Launches `def` on `dev`: `grid` blocks of `threads`, no clusters.
pub fn launch_with<P: Params, C: Contract>(
    dev: &Device,
    def: &KernelDef<P, C>,
    grid: u32,
    threads: u32,
    cooperative: bool,
    args: &[Arg],
    options: Options,
) -> Result<LaunchStats, Fault> {
    launch_shaped(dev, def, Shape::new(grid, threads, cooperative), args, options)
}

//! The lesson's kernels, in Rust, compiled to PTX by rustc (`build.rs`) and,
//! on the host, to functions the emulated GPU runs.
//!
//! This crate is what a learner edits: [`kernels`]. Everything the kernels
//! are written in (the cooperative-groups API [`cg`], [`mem`], the emulator
//! [`emu`]) lives in `gpu-core` and is re-exported here under the same
//! names, so that a kernel edit rebuilds only this crate and the program.
//! Each `#[kernel]` registers itself, and the crate its PTX, in lists the
//! linker gathers (`gpu_core::kernels::registered`): the host finds them by
//! name, and no file lists the kernels by hand.
#![cfg_attr(target_arch = "nvptx64", no_std)]
// A kernel is an `unsafe fn`, but each access inside it still says why it is
// in bounds: a read or write outside `unsafe { }` is an error, not a warning.
#![deny(unsafe_op_in_unsafe_fn)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel))]

// `#[kernel]` names this crate `::gpu`, inside it as outside.
extern crate self as gpu;

use gpu_core::arch;
#[cfg(not(target_arch = "nvptx64"))]
pub use gpu_core::emu;
pub use gpu_core::{cg, mem, trace};

pub mod kernels;
pub mod lesson;

/// Declares a GPU kernel: the C++ `__global__`, plus what the host needs to
/// launch it correctly.
///
/// Write the kernel once, as an `unsafe fn` whose parameters are buffers
/// ([`mem::In`], [`mem::Out`]) and numbers. The attribute makes of it:
/// - the PTX entry of the same name (the GPU build, `gpu/build.rs`);
/// - the same function on the host, which the emulator runs;
/// - a constant in SCREAMING_CASE (`SCALE` for `scale`), a
///   [`KernelDef`](kernels::KernelDef) the host loads and launches it
///   through: its name, parameters, launch contract and shared memory.
///
/// Options, comma-separated:
/// - `cooperative`: the kernel calls `grid.sync()`. Its contract is then
///   `GridSync`, so the host launches it only cooperatively and only on a
///   grid that fits (`#[kernel]` alone gives `NoGridSync`: any grid, ordinary
///   launches). In its body `this_grid()` and `cg::this_grid()` return the grid
///   that may `sync()` (`GridGroup<Cooperative>`) although the import names
///   the one that may not: the attribute swaps it in. Without `cooperative`,
///   `grid.sync()` is a compile error that names this option.
/// - `cluster`: the kernel calls `this_cluster()` (compute capability 9.0+).
///   Its contract is then `Cluster<GridSync>` or `Cluster<NoGridSync>`: the
///   host loads it only through `cluster_kernel`, from the sm_90 module, and
///   launches it only with a cluster dimension (cooperatively as well when
///   it is also `cooperative`). In its body `this_cluster()` is the cluster
///   that has methods; elsewhere `this_cluster().sync()` is a compile error
///   that names this option. Its GPU entry is built only into the sm_90 module.
/// - `shared_memory = f`: the bytes of dynamic shared memory each block gets,
///   `const fn f(threads_per_block: u32, tile: u32) -> u32`; the launch and
///   the occupancy query both use it. Needs a `<const TILE: u32 = N>`
///   parameter.
/// - `emulator`: no GPU entry is built; the kernel runs only on the
///   emulator, and a GPU refuses to load it by name. For a mistake kept for
///   the emulator to name that would hang or silently mislead on a GPU.
/// - `overread = f`: `const fn f(threads_per_block: u32) -> usize`, elements
///   the kernel may read past its input (only for a kernel that shows the
///   bounds bug; the host pads the buffer so the GPU stays in bounds).
///
/// `<const TILE: u32 = 32>` (a const generic with a default) is syntax only
/// this attribute accepts: the PTX holds the default tile, and the emulator
/// can run others.
///
/// ```
/// use gpu::cg::{self, Plus, this_grid, this_thread_block, tiled_partition};
/// use gpu::kernel;
/// use gpu::mem::{In, Out};
///
/// const fn one_f32_per_tile(threads_per_block: u32, tile: u32) -> u32 {
///     threads_per_block.div_ceil(tile) * 4
/// }
///
/// /// Each tile's sum of `x`, one per tile, then a grid barrier.
/// ///
/// /// # Safety
/// /// `x` holds `n` floats; `sums` one per tile of the grid.
/// #[kernel(cooperative, shared_memory = one_f32_per_tile)]
/// pub unsafe fn tile_sums<const TILE: u32 = 32>(x: In<f32>, sums: Out<f32>, n: usize) {
///     let grid = this_grid(); // the grid that may sync(): the attribute says cooperative
///     let block = this_thread_block();
///     let tile = tiled_partition::<TILE>(&block);
///     let i = grid.thread_rank();
///     // SAFETY: i < n.
///     let v = if i < n { unsafe { x.read(i) } } else { 0.0 };
///     let total = cg::reduce(&tile, v, Plus);
///     if tile.thread_rank() == 0 {
///         // SAFETY: one slot per tile of the grid.
///         unsafe { sums.write(i / TILE as usize, total) };
///     }
///     grid.sync();
/// }
///
/// assert_eq!(TILE_SUMS.name(), "tile_sums");
/// assert_eq!(TILE_SUMS.param_names(), ["x", "sums", "n"]);
/// assert_eq!(TILE_SUMS.tile(), Some(32));
/// assert_eq!(TILE_SUMS.shared_bytes(256), 32, "8 tiles of 32, 4 bytes each");
/// ```
#[doc(inline)]
pub use gpu_macros::kernel;

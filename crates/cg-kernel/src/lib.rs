//! CUDA cooperative groups for GPU kernels written in Rust, compiled by
//! rustc's own `nvptx64-nvidia-cuda` target: what `<cooperative_groups.h>`
//! is to a `.cu` file.
//!
//! - [`cg`]: thread blocks, warp tiles (`tiled_partition`, shuffles,
//!   [`cg::reduce`]), `coalesced_threads()`, the grid and its `sync()`,
//!   clusters (sm_90), with the C++ names and semantics;
//! - [`mem`]: kernel parameters ([`mem::In`], [`mem::Out`]) and shared memory;
//! - [`macro@kernel`]: `#[kernel]`, the `__global__` that also gives the host
//!   a typed definition to launch through, whose contract says whether it may
//!   call `grid.sync()` (then only a cooperative launch of a grid that fits
//!   can run it);
//! - [`kernels`]: the definitions, and the registry the linker fills, where
//!   a host launcher finds each kernel and the crate's PTX by name;
//! - [`trace`] (feature `trace`): per-block SM and timings.
//!
//! A kernel crate depends on this crate, compiles itself to PTX with
//! `cg-builder` in its `build.rs`, and says [`ptx!`] once; a host program
//! launches its kernels with `cg-launcher`, on a GPU or on the emulated GPU
//! of `cg-emulator` (host builds of this crate run each instruction, memory
//! access and collective there, and it names the mistakes a GPU would hang
//! on or silently mislead with). `docs/your-own-kernel.md` in the
//! repository walks from `cargo new` to a grid-synchronized kernel running.
//!
//! ```
//! use cg_kernel::cg::{self, Plus, this_grid, this_thread_block, tiled_partition};
//! use cg_kernel::kernel;
//! use cg_kernel::mem::{In, Out};
//!
//! /// Each warp's sum of `x`, then a barrier across the whole grid.
//! ///
//! /// # Safety
//! /// `x` holds `n` floats; `sums` one per warp of the grid.
//! #[kernel(cooperative)]
//! pub unsafe fn warp_sums(x: In<f32>, sums: Out<f32>, n: usize) {
//!     let grid = this_grid();
//!     let block = this_thread_block();
//!     let warp = tiled_partition::<32>(&block);
//!     let i = grid.thread_rank();
//!     // SAFETY: i < n.
//!     let v = if i < n { unsafe { x.read(i) } } else { 0.0 };
//!     let total = cg::reduce(&warp, v, Plus);
//!     if warp.thread_rank() == 0 {
//!         // SAFETY: one slot per warp of the grid.
//!         unsafe { sums.write(i / 32, total) };
//!     }
//!     grid.sync();
//! }
//!
//! // The host's view: a definition whose contract is a grid barrier.
//! assert_eq!(WARP_SUMS.name(), "warp_sums");
//! assert!(WARP_SUMS.grid_sync());
//! ```
//!
//! Layers: `arch` holds one small function per PTX instruction (LLVM's
//! convergent intrinsics for the collectives, inline assembly for the rest)
//! and, on the host, the emulator's version of each (calls into
//! `cg_emulator::thread`); [`cg`] and [`mem`] are
//! the safe surface built on them; kernels call only those. The toolchain is
//! nightly (the target's intrinsics, the `gpu-kernel` ABI): the repository's
//! `rust-toolchain.toml` names the one it is tested with.
#![cfg_attr(target_arch = "nvptx64", no_std)]
// Operators are `const trait`s (`cg::ReduceOp`): a `const fn` cannot call a
// barrier or a collective.
#![feature(const_trait_impl)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(missing_docs)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(stdarch_nvptx, asm_experimental_arch, link_llvm_intrinsics, abi_unadjusted, core_intrinsics, gpu_intrinsics, gpu_launch_sized_workgroup_mem)
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

// The instructions, one small function each: private, since several trust
// their arguments; `cg`, `mem` and `clock` are the surface built on them.
pub(crate) mod arch;
pub mod cg;
pub mod clock;
pub mod kernels;
pub mod mem;
pub mod trace;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    arch::trap()
}

/// Declares a GPU kernel: the C++ `__global__`, plus what the host needs to
/// launch it correctly.
///
/// Write the kernel once, as an `unsafe fn` whose parameters are buffers
/// ([`mem::In`], [`mem::Out`]) and numbers, at most
/// [`MAX_PARAMS`](kernels::MAX_PARAMS) (16) of them: a 17th is a compile
/// error there. The attribute makes of it:
/// - the PTX entry of the same name (the GPU build, by `cg-builder`);
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
///   `fn f(threads_per_block: u32) -> u32`, or for a kernel with a
///   `<const TILE: u32 = N>` parameter `fn f(threads_per_block: u32, tile:
///   u32) -> u32`; the launch and the occupancy query both use it. Several
///   arrays share it ([`mem::DynamicShared::after`]).
/// - `emulator`: no GPU entry is built; the kernel runs only on the
///   emulator, and a GPU refuses to load it by name. For a mistake kept for
///   the emulator to name that would hang or silently mislead on a GPU.
/// - `overread = f`: `const fn f(threads_per_block: u32) -> usize`, elements
///   the kernel may read past its input (only for a kernel that shows the
///   bounds bug; the host pads the buffer so the GPU stays in bounds).
/// - `launch_bounds(max_threads, min_blocks)`: C++'s `__launch_bounds__`
///   (`min_blocks` may be left out). Every entry of the kernel gets
///   `.maxntid max_threads` and `.minnctapersm min_blocks` (`cg-builder`
///   writes them), and the host refuses a block larger than `max_threads`.
/// - `crate = path`: the path the emitted code names this crate by,
///   `::cg_kernel` unless given. For a crate that depends on cg-kernel under
///   another name (`cgk = { package = "cg-kernel", ... }` in its
///   `Cargo.toml`: `crate = cgk`), or a library that re-exports it for its
///   users' kernels (`crate = ::my_lib::cg_kernel`). serde's spelling,
///   `crate = "path"`, is accepted too. In the kernel's body,
///   `path::cg::this_grid()` is then one of the spellings of `this_grid()`
///   that `cooperative` swaps (as is `cg_kernel::cg::this_grid()`).
///
/// `<const TILE: u32 = 32>` (a const generic with a default) is syntax only
/// this attribute accepts: the PTX holds the default tile, and the emulator
/// can run others.
///
/// ```
/// use cg_kernel::cg::{self, Plus, this_grid, this_thread_block, tiled_partition};
/// use cg_kernel::kernel;
/// use cg_kernel::mem::{In, Out};
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
/// // 8 tiles of 32, 4 bytes each; then, as in every cooperative kernel, the
/// // grid collectives' bytes (`grid.reduce` and the rest).
/// assert_eq!(TILE_SUMS.shared_bytes(256), 32 + cg::GRID_SHARED_BYTES);
/// ```
pub use cg_kernel_macros::kernel;

/// Registers the PTX that `cg-builder` compiled this crate into, so that
/// the host launcher finds it in the program: write `cg_kernel::ptx!();`
/// once in a kernel crate's `lib.rs`. The builder writes the whole
/// [`Ptx`](kernels::Ptx) value as a Rust file in `OUT_DIR` and names it in
/// `CG_KERNEL_PTX`; this includes that file, so only the builder knows the
/// files' names.
#[macro_export]
macro_rules! ptx {
    () => {
        #[cfg(not(target_arch = "nvptx64"))]
        #[$crate::kernels::linkme::distributed_slice($crate::kernels::PTX_MODULES)]
        #[linkme(crate = $crate::kernels::linkme)]
        static __CG_KERNEL_PTX: $crate::kernels::Ptx = {
            // The file says `Ptx { ... }`: the name, by this crate's path.
            use $crate::kernels::Ptx;
            include!(env!("CG_KERNEL_PTX", "cg_kernel::ptx!() needs the crate's build.rs to run cg_builder::Builder::new().build()"))
        };
    };
}

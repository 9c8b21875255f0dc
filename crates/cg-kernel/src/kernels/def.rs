//! A kernel's definition as the host sees it (host builds only).

#[allow(unused_imports)] // GridSync and NoGridSync are named in the docs
use super::{Contract, GridSync, NoGridSync};
use crate::mem::{In, Out};
use cg_emulator::Arg;
use core::marker::PhantomData;

/// A kernel's tile size, and how its launch needs change with it.
pub struct TileInfo<P: Params> {
    /// The tile this definition's entry was built with.
    pub tile: u32,
    /// The tile the kernel's source names (the one in the PTX).
    pub default_tile: u32,
    /// Dynamic shared memory, `(threads_per_block, tile) -> bytes`.
    pub shared_memory: Option<fn(u32, u32) -> u32>,
    /// The entry built with another tile (1, 2, 4, 8, 16 or 32).
    pub instantiate: fn(u32) -> Option<P::Entry>,
}

impl<P: Params> Clone for TileInfo<P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: Params> Copy for TileInfo<P> {}

/// A kernel as the host sees it. `P` is the parameter list as a tuple of
/// [`In`], [`Out`] and plain values; `C` is [`GridSync`] or [`NoGridSync`].
pub struct KernelDef<P: Params, C> {
    name: &'static str,
    params: &'static [&'static str],
    entry: P::Entry,
    tile: Option<TileInfo<P>>,
    overread: fn(u32) -> usize,
    in_ptx: bool,
    /// Declared `#[kernel(emulator)]`: no GPU entry at any tile.
    emulator_only: bool,
    /// Dynamic shared memory asked for on top of the kernel's own.
    extra_shared: u32,
    /// Bytes at the end of the shared memory, after the dynamic part and
    /// the extra rounded up to 16: the kernel's `shared_array!`s and, in a
    /// cooperative kernel, the grid collectives' (`cg::GRID_SHARED_BYTES`),
    /// which the kernel finds from the launch's size (`%dynamic_smem_size`).
    tail_shared: u32,
    /// `#[kernel(launch_bounds(max_threads, min_blocks))]`, or `(0, 0)`.
    launch_bounds: (u32, u32),
    /// `#[kernel(block_size = N)]`, or 0.
    block_size: u32,
    /// The kernel crate that defines it (`CARGO_CRATE_NAME`), whose PTX holds it.
    crate_name: &'static str,
    /// Dynamic shared memory by block size, for a kernel without a tile
    /// (one with a tile has it in its `TileInfo`).
    block_shared: Option<fn(u32) -> u32>,
    _contract: PhantomData<fn(P, C)>,
}

impl<P: Params, C> Clone for KernelDef<P, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P: Params, C> Copy for KernelDef<P, C> {}

impl<P: Params, C> KernelDef<P, C> {
    /// A definition, as `#[kernel]` emits it.
    ///
    /// # Safety
    /// `name` is the PTX entry of `entry`, whose parameters are `P`, and `C`
    /// is [`GridSync`] if the kernel calls `grid.sync()`: a wrong definition
    /// launches a different kernel, or a grid barrier the ordinary way.
    #[doc(hidden)]
    pub const unsafe fn new(
        name: &'static str,
        params: &'static [&'static str],
        entry: P::Entry,
        tile: Option<TileInfo<P>>,
        overread: fn(u32) -> usize,
    ) -> Self {
        KernelDef {
            name,
            params,
            entry,
            tile,
            overread,
            in_ptx: true,
            emulator_only: false,
            extra_shared: 0,
            tail_shared: 0,
            launch_bounds: (0, 0),
            block_size: 0,
            crate_name: "",
            block_shared: None,
            _contract: PhantomData,
        }
    }

    /// The same definition without a GPU entry, as `#[kernel(emulator)]` emits it.
    #[doc(hidden)]
    pub const fn emulator_only(self) -> Self {
        KernelDef { in_ptx: false, emulator_only: true, ..self }
    }

    /// The same definition with `bytes` at the end of its shared memory: its
    /// `shared_array!`s and the grid collectives' (a multiple of 16), as
    /// `#[kernel]` emits it.
    ///
    /// # Safety
    /// `bytes` is at least what the kernel's body addresses at the end of its
    /// shared memory, counted back from the launch's size.
    #[doc(hidden)]
    pub const unsafe fn with_tail_shared(self, bytes: usize) -> Self {
        // A tail too large for any launch saturates, as `shared_bytes` does.
        let tail_shared = if bytes > u32::MAX as usize { u32::MAX } else { bytes as u32 };
        KernelDef { tail_shared, ..self }
    }

    /// The same definition with dynamic shared memory of `bytes(threads_per_block)`,
    /// as `#[kernel(shared_memory = bytes)]` emits it for a kernel without a tile.
    ///
    /// # Safety
    /// `bytes` is the kernel's own function: at least the dynamic shared
    /// memory its body addresses at that block size. A launch passes what
    /// it returns, and a kernel given less writes past its allocation.
    #[doc(hidden)]
    pub const unsafe fn with_shared_memory(self, bytes: fn(u32) -> u32) -> Self {
        KernelDef { block_shared: Some(bytes), ..self }
    }

    /// The same definition, of kernel crate `crate_name` (its
    /// `CARGO_CRATE_NAME`), as `#[kernel]` emits it.
    ///
    /// # Safety
    /// `crate_name` is the crate that defines the kernel: the launcher loads
    /// the entry of this name from that crate's PTX, and another crate's
    /// kernel of the same name would run with these parameters.
    #[doc(hidden)]
    pub const unsafe fn in_crate(self, crate_name: &'static str) -> Self {
        KernelDef { crate_name, ..self }
    }

    /// The kernel crate that defines it (`CARGO_CRATE_NAME`: `my_kernels` for
    /// the package `my-kernels`), whose PTX the launcher loads it from.
    pub const fn crate_name(&self) -> &'static str {
        self.crate_name
    }

    /// The same definition with the launch bounds its PTX entries carry, as
    /// `#[kernel(launch_bounds(max_threads, min_blocks))]` emits it.
    #[doc(hidden)]
    pub const fn with_launch_bounds(self, max_threads: u32, min_blocks: u32) -> Self {
        KernelDef { launch_bounds: (max_threads, min_blocks), ..self }
    }

    /// The same definition with `block_size` the only block size it runs,
    /// as `#[kernel(block_size = N)]` emits it.
    #[doc(hidden)]
    pub const fn with_block_size(self, block_size: u32) -> Self {
        KernelDef { block_size, ..self }
    }

    /// `#[kernel(block_size = N)]`: the one block size the kernel's body is
    /// written for, which a launch of another is refused for, by name.
    pub const fn block_size(&self) -> Option<u32> {
        if self.block_size == 0 { None } else { Some(self.block_size) }
    }

    /// `__launch_bounds__(max_threads, min_blocks)`: the most threads a block
    /// of this kernel may have (its PTX entries say `.maxntid`, and CUDA
    /// refuses a larger block), and the blocks per SM the compiler was asked
    /// to fit (`.minnctapersm`, which caps its registers). `None` if the
    /// kernel declares no bounds.
    pub const fn launch_bounds(&self) -> Option<(u32, u32)> {
        if self.launch_bounds.0 == 0 { None } else { Some(self.launch_bounds) }
    }

    /// Whether it is declared `#[kernel(emulator)]`, so runs only on the emulator.
    pub const fn is_emulator_only(&self) -> bool {
        self.emulator_only
    }

    /// The PTX entry name: the kernel function's own name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The kernel's parameter names, in order.
    pub fn param_names(&self) -> &'static [&'static str] {
        self.params
    }

    /// The kernel function the emulator runs.
    pub fn entry(&self) -> P::Entry {
        self.entry
    }

    /// The tile size this definition's entry uses, for a kernel with a tile.
    pub fn tile(&self) -> Option<u32> {
        self.tile.map(|t| t.tile)
    }

    /// Bytes of dynamic shared memory per block of `threads_per_block`: what
    /// the launch passes and the occupancy query is asked about. The
    /// kernel's own, then any [extra](Self::with_extra_shared), then, from
    /// the next 16-byte boundary, its `shared_array!`s and in a cooperative
    /// kernel the grid collectives' [`GRID_SHARED_BYTES`](crate::cg::GRID_SHARED_BYTES).
    /// The sum saturates at
    /// `u32::MAX`, more than any GPU holds, so that a launcher refuses it as a
    /// block that does not fit rather than launch a size that wrapped.
    pub fn shared_bytes(&self, threads_per_block: u32) -> u32 {
        let front = self.dynamic_shared_bytes(threads_per_block);
        match self.tail_shared {
            0 => front,
            // The tail starts on a 16-byte boundary; u32::MAX stays the
            // saturated size, which no launch accepts.
            tail => front.checked_next_multiple_of(16).unwrap_or(u32::MAX).saturating_add(tail),
        }
    }

    /// Bytes at the end of the kernel's shared memory that its
    /// `dynamic_shared()` does not address: its `shared_array!`s and, in a
    /// cooperative kernel, the grid collectives' (each launch gives them
    /// after the dynamic part; see [`shared_bytes`](Self::shared_bytes)).
    pub const fn tail_shared_bytes(&self) -> u32 {
        self.tail_shared
    }

    /// Bytes of dynamic shared memory the kernel's own `dynamic_shared()`
    /// may address per block of `threads_per_block`: its own part and any
    /// [extra](Self::with_extra_shared). A launch gives
    /// [`shared_bytes`](Self::shared_bytes), which adds the fixed regions at
    /// the end (`shared_array!`s, the grid collectives') that the kernel
    /// finds for itself; a safe launcher checks what its kernel's body
    /// carves from `dynamic_shared()` against this, not against that.
    pub fn dynamic_shared_bytes(&self, threads_per_block: u32) -> u32 {
        self.dynamic_sizing().bytes(threads_per_block)
    }

    /// [`dynamic_shared_bytes`](Self::dynamic_shared_bytes) as a value of
    /// its own, without the kernel's parameter types: for a launcher that
    /// keeps it beside the loaded kernel.
    #[doc(hidden)]
    pub fn dynamic_sizing(&self) -> DynamicSizing {
        let own = match (self.tile, self.block_shared) {
            (Some(t), _) => t.shared_memory.map(|f| Sizing::Tile(f, t.tile)),
            (None, Some(f)) => Some(Sizing::Block(f)),
            (None, None) => None,
        };
        DynamicSizing { own, extra: self.extra_shared }
    }

    /// The same kernel asking for `bytes` more dynamic shared memory per
    /// block, which it does not use: what adding shared memory does to how
    /// many blocks fit (the ceiling is the kernel's, not the card's). `None`
    /// if the extra bytes no longer fit in the `u32` a launch describes them with.
    pub const fn with_extra_shared(&self, bytes: u32) -> Option<Self> {
        match self.extra_shared.checked_add(bytes) {
            Some(extra_shared) => Some(KernelDef { extra_shared, ..*self }),
            None => None,
        }
    }

    /// Elements the kernel may read past its input, for blocks of `threads_per_block`.
    pub fn overread(&self, threads_per_block: u32) -> usize {
        (self.overread)(threads_per_block)
    }

    /// Whether the PTX module holds this kernel as defined. A definition made
    /// by [`with_tile`](Self::with_tile) with another tile exists only on the emulator.
    pub const fn in_ptx(&self) -> bool {
        self.in_ptx
    }

    /// The same kernel built with tiles of `tile` threads (1, 2, 4, 8, 16 or
    /// 32), for the emulator; `None` for another size or a kernel without a tile.
    pub fn with_tile(&self, tile: u32) -> Option<Self> {
        let info = self.tile?;
        let entry = (info.instantiate)(tile)?;
        Some(KernelDef { entry, tile: Some(TileInfo { tile, ..info }), in_ptx: self.in_ptx && tile == info.default_tile, ..*self })
    }

    /// The kernel named `name` in another module (built by nvcc, say), taken to
    /// have this kernel's parameters and contract.
    ///
    /// # Safety
    /// That kernel has exactly this definition's parameters, shared memory and
    /// launch contract (it calls `grid.sync()` only if `C` is [`GridSync`]).
    pub unsafe fn renamed(&self, name: &'static str) -> Self {
        KernelDef { name, ..*self }
    }
}

impl<P: Params, C: Contract> KernelDef<P, C> {
    /// Whether the kernel is declared `#[kernel(cooperative)]`, so may call `grid.sync()`.
    pub const fn grid_sync(&self) -> bool {
        C::GRID_SYNC
    }

    /// Whether the kernel is declared `#[kernel(cluster)]`, so may call
    /// `this_cluster()` (and is only in the sm_90 PTX module).
    pub const fn cluster(&self) -> bool {
        C::CLUSTER
    }
}

/// A kernel's dynamic shared memory by block size ([`KernelDef::dynamic_sizing`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct DynamicSizing {
    own: Option<Sizing>,
    extra: u32,
}

#[derive(Clone, Copy, Debug)]
enum Sizing {
    Tile(fn(u32, u32) -> u32, u32),
    Block(fn(u32) -> u32),
}

impl DynamicSizing {
    /// The bytes at blocks of `threads_per_block` (saturating at `u32::MAX`).
    pub fn bytes(&self, threads_per_block: u32) -> u32 {
        let own = match self.own {
            Some(Sizing::Tile(f, tile)) => f(threads_per_block, tile),
            Some(Sizing::Block(f)) => f(threads_per_block),
            None => 0,
        };
        own.saturating_add(self.extra)
    }
}

/// Reads nothing past the input.
pub const fn no_overread(_threads_per_block: u32) -> usize {
    0
}

/// One kernel parameter's type, as the emulator passes it: a buffer
/// ([`In`], [`Out`]) or a number (`u8`, `i8`, `u16`, `i16`, `u32`, `i32`,
/// `u64`, `i64`, `usize`, `f32`, `f64`), as in C++, where a kernel's
/// parameters are pointers and scalars.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a kernel parameter",
    label = "a kernel parameter is a buffer or a number",
    note = "a kernel's parameters are buffers, `In<T>` or `Out<T>` (T one of u8, i8, u16, i16, u32, i32, u64, i64, f32, f64), and numbers: u8, i8, u16, i16, u32, i32, u64, i64, usize, f32, f64",
    note = "anything else goes through a buffer: upload it with `gpu.upload(&[...])` and pass an `In<T>`"
)]
pub trait Param {
    /// The parameter from the launch's argument.
    ///
    /// # Safety
    /// `arg` is of this parameter's kind and addresses what the kernel's contract says.
    unsafe fn from_arg(arg: &Arg) -> Self;
}

impl<T> Param for In<T> {
    unsafe fn from_arg(arg: &Arg) -> Self {
        match *arg {
            // SAFETY: the caller's contract.
            Arg::In { name, address, len, .. } => unsafe { In::emulated(address as *const T, len, name) },
            _ => panic!("an In parameter got {arg:?}"),
        }
    }
}

impl<T> Param for Out<T> {
    unsafe fn from_arg(arg: &Arg) -> Self {
        match *arg {
            // SAFETY: the caller's contract.
            Arg::Out { name, address, len, slot, .. } => unsafe { Out::emulated(address as *mut T, len, name, slot) },
            _ => panic!("an Out parameter got {arg:?}"),
        }
    }
}

/// A number parameter: the launch passes its bits, zero- or sign-extended
/// to 64 (a float's as `to_bits()`), and the parameter takes the low ones.
macro_rules! value_param {
    ($($t:ty),*) => {$(
        impl Param for $t {
            unsafe fn from_arg(arg: &Arg) -> Self {
                match *arg {
                    Arg::Value(bits) => crate::mem::Word::from_bits64(bits),
                    _ => panic!("a value parameter got {arg:?}"),
                }
            }
        }
    )*};
}
value_param!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

impl Param for usize {
    unsafe fn from_arg(arg: &Arg) -> Self {
        match *arg {
            Arg::Value(bits) => bits as usize,
            _ => panic!("a value parameter got {arg:?}"),
        }
    }
}

/// The most parameters a kernel may take: [`Params`] is implemented for
/// tuples of up to this many, and `#[kernel]` refuses one more, by name.
pub const MAX_PARAMS: usize = 16;

/// A kernel's parameter list, and the signature of its entry: implemented
/// for `()` and tuples of up to [`MAX_PARAMS`] [`Param`]s.
pub trait Params {
    /// `unsafe fn(...)` of the parameter types: the kernel the emulator calls.
    type Entry: Copy + Send + Sync + 'static;

    /// Calls `entry` with the launch's arguments.
    ///
    /// # Safety
    /// `args` holds one argument per parameter, each of its kind, satisfying
    /// the kernel's contract.
    unsafe fn call(entry: Self::Entry, args: &[Arg]);
}

macro_rules! params {
    ($($p:ident $i:tt),+) => {
        impl<$($p: Param + 'static),+> Params for ($($p,)+) {
            type Entry = unsafe fn($($p),+);

            unsafe fn call(entry: Self::Entry, args: &[Arg]) {
                // SAFETY: the caller's contract.
                unsafe { entry($($p::from_arg(&args[$i])),+) }
            }
        }
    };
}
impl Params for () {
    type Entry = unsafe fn();

    unsafe fn call(entry: Self::Entry, _args: &[Arg]) {
        // SAFETY: the caller's contract.
        unsafe { entry() }
    }
}
params!(A 0);
params!(A 0, B 1);
params!(A 0, B 1, C 2);
params!(A 0, B 1, C 2, D 3);
params!(A 0, B 1, C 2, D 3, E 4);
params!(A 0, B 1, C 2, D 3, E 4, F 5);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14);
params!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11, M 12, N 13, O 14, P 15);

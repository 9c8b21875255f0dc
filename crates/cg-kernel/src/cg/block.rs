use super::lanes::linear_rank;
use crate::arch;

/// A 3-component index or size (`dim3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    /// Along x.
    pub x: u32,
    /// Along y.
    pub y: u32,
    /// Along z.
    pub z: u32,
}

impl From<[u32; 3]> for Dim3 {
    #[inline(always)]
    fn from([x, y, z]: [u32; 3]) -> Self {
        Dim3 { x, y, z }
    }
}

/// The most threads a block has on any CUDA GPU.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

/// The threads of this block (`cg::thread_block`).
///
/// Holding one says a function may use a block-wide barrier: every thread of
/// the block must call [`sync`](Self::sync) together.
///
/// Its ranks, counts and indices are `u32`, as C++'s are `unsigned int`: a
/// block holds at most 1024 threads, and 32-bit arithmetic keeps a kernel's
/// registers down. The grid's are `usize` ([`GridGroup`](super::GridGroup)
/// says why). Where a block's number indexes memory, widen it with
/// `as usize`, which never loses anything: `partials.write(block.group_index().x as usize, ..)`.
///
/// ```no_run
/// use cg_kernel::cg::ThreadBlock;
/// use cg_kernel::mem::Out;
///
/// /// C++: `if (block.thread_rank() == 0) out[block.group_index().x] = block.num_threads(); block.sync();`
/// fn mark(block: &ThreadBlock, out: Out<u32>) {
///     if block.thread_rank() == 0 {
///         // SAFETY: `out` holds one u32 per block.
///         unsafe { out.write(block.group_index().x as usize, block.num_threads()) };
///     }
///     block.sync(); // every thread of the block, or none
/// }
/// ```
pub struct ThreadBlock {
    _private: (),
}

/// The current block (`cg::this_thread_block()`).
#[inline(always)]
pub fn this_thread_block() -> ThreadBlock {
    ThreadBlock { _private: () }
}

impl ThreadBlock {
    /// Waits for every thread of the block; writes before it are visible to the
    /// block after it (`block.sync()`, the same as `__syncthreads()`).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub fn sync(&self) {
        emu_call!("block.sync()");
        // SAFETY: a block-wide barrier touches no memory. A call some thread
        // never reaches is the logic error this layer's documentation names.
        unsafe { arch::sync_threads() }
    }

    /// The block barrier as nvcc compiles `__syncthreads()` and C++'s
    /// `block.sync()`: the aligned `bar.sync 0`, which costs less than
    /// [`sync`](Self::sync)'s `barrier.sync 0` (about 4% of the
    /// conjugate-gradient solve at small N on an H200, `docs/conjugate-gradient.md`).
    ///
    /// # Safety
    /// Every thread of the block reaches this call, and each warp reaches it
    /// as one: PTX leaves the aligned barrier undefined when a warp's
    /// threads reach it apart. Reaching it after a branch or loop that has
    /// closed is what `__syncthreads()` does in C++; the barrier is LLVM's
    /// convergent intrinsic, so the compiler keeps it after the branch, one
    /// instruction (`host/tests/ptx.rs`). Inside a branch that splits a
    /// warp it is undefined: synccheck reports it on an H200
    /// (`records/2026-12-03-h200-convergent/sanitizers.txt`). The emulator
    /// names threads that arrive from different calls, as it does for
    /// `sync`; it cannot see a warp that arrives split, which is what makes
    /// this `unsafe`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn sync_aligned(&self) {
        emu_call!("block.sync_aligned()");
        // SAFETY: the caller's contract.
        unsafe { arch::sync_threads_aligned() }
    }

    /// This thread's rank in the block, x fastest (`block.thread_rank()`).
    #[inline(always)]
    pub fn thread_rank(&self) -> u32 {
        let rank = linear_rank(arch::thread_idx(), arch::block_dim()) as u32;
        // SAFETY: a rank is below the block's size, at most 1024 threads.
        unsafe { arch::assume(rank < MAX_THREADS_PER_BLOCK) };
        rank
    }

    /// The number of threads in the block (`block.num_threads()`).
    #[inline(always)]
    pub fn num_threads(&self) -> u32 {
        let [x, y, z] = arch::block_dim();
        let threads = x * y * z;
        // SAFETY: every CUDA GPU runs blocks of 1 to 1024 threads.
        unsafe { arch::assume((1..=MAX_THREADS_PER_BLOCK).contains(&threads)) };
        threads
    }

    /// The number of threads in the block (`block.size()`, the older C++ name
    /// of [`num_threads`](Self::num_threads)).
    #[inline(always)]
    pub fn size(&self) -> u32 {
        self.num_threads()
    }

    /// This block's index in the grid (`block.group_index()`, `blockIdx`).
    #[inline(always)]
    pub fn group_index(&self) -> Dim3 {
        arch::block_idx().into()
    }

    /// This thread's index in the block (`block.thread_index()`, `threadIdx`).
    #[inline(always)]
    pub fn thread_index(&self) -> Dim3 {
        arch::thread_idx().into()
    }

    /// The block's dimensions in threads (`block.dim_threads()`, `blockDim`).
    #[inline(always)]
    pub fn dim_threads(&self) -> Dim3 {
        arch::block_dim().into()
    }
}

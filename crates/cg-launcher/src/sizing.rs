//! Grid sizing: pure arithmetic, no CUDA calls and no imports from this crate.
//!
//! A cooperative grid can be no larger than the blocks that fit on the device
//! at once: the occupancy API's blocks per SM for that kernel, at that block
//! size and dynamic shared memory, times the SM count. Everything here is
//! tested on the CPU with the lesson's T4 figures and the H200's.

use serde::Serialize;
use std::fmt::Write;

/// What one SM offers (device attributes).
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct SmResources {
    /// The most threads one SM holds.
    pub max_threads: u32,
    /// The most blocks one SM holds.
    pub max_blocks: u32,
    /// `None` where unknown (on the emulator: no ptxas count for the kernel).
    pub registers: Option<u32>,
    /// Shared memory per SM, in bytes.
    pub shared_bytes: u32,
    /// Shared memory the system reserves for each resident block.
    pub reserved_shared_per_block: u32,
    /// The most shared memory one block may have, static and dynamic, once
    /// the kernel opts in above 48 KiB
    /// (`cudaDevAttrMaxSharedMemoryPerBlockOptin`; the launcher opts a
    /// kernel in when its launch asks for more than 48 KiB).
    pub max_shared_per_block: u32,
}

/// What one block of a kernel takes (function attributes and the launch).
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct BlockResources {
    /// Threads per block.
    pub threads_per_block: u32,
    /// `None` where unknown (on the emulator: no ptxas count for the kernel).
    pub registers_per_thread: Option<u32>,
    /// Static plus dynamic shared memory.
    pub shared_bytes: u32,
}

/// The per-SM resources that can limit how many blocks are resident.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// Threads per SM.
    Threads,
    /// Blocks per SM.
    Blocks,
    /// Registers per SM.
    Registers,
    /// Shared memory per SM.
    SharedMemory,
}

/// Registers are handed to warps in units of this many.
const REGISTER_UNIT_PER_WARP: u32 = 256;

/// How many blocks of this shape each resource alone would let an SM hold.
pub fn blocks_per_sm_by_resource(sm: &SmResources, block: &BlockResources) -> Vec<(Resource, u32)> {
    // Products in 64 bits: no field's value overflows them.
    let warps = (block.threads_per_block as u64).div_ceil(32).max(1);
    let mut by = vec![(Resource::Threads, (sm.max_threads as u64 / (warps * 32)) as u32), (Resource::Blocks, sm.max_blocks)];
    if let (Some(registers), Some(per_thread)) = (sm.registers, block.registers_per_thread) {
        let unit = REGISTER_UNIT_PER_WARP as u64;
        let per_warp = (per_thread as u64 * 32).div_ceil(unit) * unit;
        by.push((Resource::Registers, (registers as u64).checked_div(per_warp.saturating_mul(warps)).map_or(u32::MAX, |n| n as u32)));
    }
    let shared_per_block = block.shared_bytes.saturating_add(sm.reserved_shared_per_block);
    let by_shared = if block.shared_bytes > sm.max_shared_per_block { 0 } else { sm.shared_bytes.checked_div(shared_per_block).unwrap_or(u32::MAX) };
    by.push((Resource::SharedMemory, by_shared));
    by
}

/// A kernel's cooperative limit on one device, with what it is made of.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct Limits {
    /// The occupancy API's answer for this kernel, block size and shared memory.
    pub blocks_per_sm: u32,
    /// SMs on the device.
    pub sms: u32,
    /// What one block takes.
    pub block: BlockResources,
    /// What one SM offers.
    pub sm: SmResources,
}

impl Limits {
    /// The most blocks a cooperative launch of this kernel may use.
    pub fn capacity(&self) -> u32 {
        self.blocks_per_sm.saturating_mul(self.sms)
    }

    /// The resources whose limit equals the occupancy API's answer.
    pub fn limiting(&self) -> Vec<Resource> {
        blocks_per_sm_by_resource(&self.sm, &self.block).into_iter().filter(|&(_, n)| n == self.blocks_per_sm).map(|(r, _)| r).collect()
    }

    /// One phrase naming what limits blocks per SM, with the arithmetic.
    pub fn explain(&self) -> String {
        let b = &self.block;
        let sm = &self.sm;
        let all = blocks_per_sm_by_resource(sm, b);
        let limiting: Vec<_> = all.iter().filter(|(_, n)| *n == self.blocks_per_sm).collect();
        let shown = if limiting.is_empty() { all.iter().collect() } else { limiting };
        let mut out = String::new();
        for (i, (resource, n)) in shown.into_iter().enumerate() {
            if i > 0 {
                out.push_str(" and ");
            }
            let _ = match resource {
                Resource::Threads => write!(out, "threads per SM ({} / {} = {n})", sm.max_threads, (b.threads_per_block as u64).div_ceil(32) * 32),
                Resource::Blocks => write!(out, "blocks per SM (the hardware's {n})"),
                Resource::Registers => {
                    write!(out, "registers ({} per thread; {} per SM allow {n})", b.registers_per_thread.unwrap_or(0), sm.registers.unwrap_or(0))
                }
                Resource::SharedMemory => write!(
                    out,
                    "shared memory ({} B per block + {} B reserved; {} B per SM allow {n})",
                    b.shared_bytes, sm.reserved_shared_per_block, sm.shared_bytes
                ),
            };
        }
        if all.iter().all(|(_, n)| *n != self.blocks_per_sm) {
            out.insert_str(0, "a limit the estimate does not model; by resource: ");
        }
        out
    }
}

/// Blocks an ordinary launch of one thread per element would use; blocks
/// of no threads never cover an element, so for `threads_per_block = 0`
/// that is `u64::MAX` (and 0 for `n = 0`).
pub fn ordinary_blocks(n: usize, threads_per_block: u32) -> u64 {
    match (n, threads_per_block) {
        (0, _) => 0,
        (_, 0) => u64::MAX,
        _ => (n as u64).div_ceil(threads_per_block as u64),
    }
}

/// The grid for a cooperative sum of `n` elements: `min(ceil(n / threads_per_block),
/// capacity)`, and 0 (launch nothing) for `n = 0`.
pub fn cooperative_grid(n: usize, threads_per_block: u32, capacity: u32) -> u32 {
    ordinary_blocks(n, threads_per_block).min(capacity as u64) as u32
}

/// Why a block size cannot be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BadBlock {
    /// No threads at all.
    Empty,
    /// Not a multiple of 32.
    NotWarps,
    /// More threads than the device allows per block.
    OverDeviceMax(u32),
}

/// Checks threads per block: a multiple of 32 from 32 to the device's maximum.
pub fn check_threads_per_block(threads_per_block: u32, max_threads_per_block: u32) -> Result<(), BadBlock> {
    if threads_per_block == 0 {
        return Err(BadBlock::Empty);
    }
    if !threads_per_block.is_multiple_of(32) {
        return Err(BadBlock::NotWarps);
    }
    if threads_per_block > max_threads_per_block {
        return Err(BadBlock::OverDeviceMax(max_threads_per_block));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tesla T4 (compute capability 7.5), as the lesson measured it.
    const T4: SmResources = SmResources {
        max_threads: 1024,
        max_blocks: 16,
        registers: Some(65536),
        shared_bytes: 65536,
        reserved_shared_per_block: 0,
        max_shared_per_block: 65536,
    };
    /// NVIDIA H200 (compute capability 9.0).
    const H200: SmResources = SmResources {
        max_threads: 2048,
        max_blocks: 32,
        registers: Some(65536),
        shared_bytes: 233472,
        reserved_shared_per_block: 1024,
        max_shared_per_block: 232448,
    };

    fn lesson_block(threads_per_block: u32, registers_per_thread: u32) -> BlockResources {
        BlockResources { threads_per_block, registers_per_thread: Some(registers_per_thread), shared_bytes: threads_per_block / 32 * 4 }
    }

    /// What the occupancy API answers, derived here the way the driver does:
    /// the smallest of the per-resource limits.
    fn occupancy(sm: &SmResources, block: &BlockResources) -> u32 {
        blocks_per_sm_by_resource(sm, block).into_iter().map(|(_, n)| n).min().unwrap()
    }

    fn limits(sm: SmResources, sms: u32, block: BlockResources) -> Limits {
        Limits { blocks_per_sm: occupancy(&sm, &block), sms, block, sm }
    }

    #[test]
    fn t4_fits_160_cooperative_blocks_of_256_threads() {
        let l = limits(T4, 40, lesson_block(256, 22));
        assert_eq!((l.blocks_per_sm, l.capacity()), (4, 160));
        assert_eq!(l.limiting(), vec![Resource::Threads]);
        assert_eq!(l.explain(), "threads per SM (1024 / 256 = 4)");
    }

    #[test]
    fn an_ordinary_launch_sized_to_the_lesson_input_uses_16387_blocks() {
        assert_eq!(ordinary_blocks(4_194_915, 256), 16_387);
    }

    /// Each of these panicked before 2026-12-04 (a division by zero or an
    /// overflowing product): sizing answers every input.
    #[test]
    fn absurd_shapes_get_answers_not_panics() {
        assert_eq!(ordinary_blocks(10, 0), u64::MAX);
        assert_eq!(ordinary_blocks(0, 0), 0);
        assert_eq!(cooperative_grid(10, 0, 160), 160);
        let huge = BlockResources { threads_per_block: u32::MAX, registers_per_thread: Some(u32::MAX), shared_bytes: u32::MAX };
        let by = blocks_per_sm_by_resource(&H200, &huge);
        assert!(by.iter().all(|&(r, n)| n == 0 || r == Resource::Blocks), "{by:?}");
        let l = Limits { blocks_per_sm: u32::MAX, sms: u32::MAX, block: huge, sm: H200 };
        assert_eq!(l.capacity(), u32::MAX);
        assert!(l.explain().contains("a limit the estimate does not model"), "{}", l.explain());
    }

    #[test]
    fn t4_block_limit_applies_only_at_64_threads_or_fewer() {
        for (threads, per_sm) in [(48, 16), (64, 16), (96, 10), (256, 4)] {
            assert_eq!(occupancy(&T4, &lesson_block(threads, 16)), per_sm, "{threads} threads");
        }
        assert_eq!(limits(T4, 40, lesson_block(64, 16)).limiting(), vec![Resource::Threads, Resource::Blocks]);
    }

    #[test]
    fn h200_fits_1056_cooperative_blocks_of_256_threads() {
        let l = limits(H200, 132, lesson_block(256, 22));
        assert_eq!((l.blocks_per_sm, l.capacity()), (8, 1056));
        assert_eq!(cooperative_grid(4_194_915, 256, l.capacity()), 1056);
        assert_eq!(l.limiting(), vec![Resource::Threads]);
    }

    #[test]
    fn a_register_heavy_kernel_is_limited_by_registers() {
        let l = limits(H200, 132, lesson_block(256, 128));
        assert_eq!(l.blocks_per_sm, 2);
        assert_eq!(l.limiting(), vec![Resource::Registers]);
        assert_eq!(l.explain(), "registers (128 per thread; 65536 per SM allow 2)");
        // 40 registers (the unrolled grid-stride loop) cost the H200 two blocks per SM.
        assert_eq!(limits(H200, 132, lesson_block(256, 40)).blocks_per_sm, 6);
    }

    #[test]
    fn ties_name_every_limiting_resource() {
        let l = limits(H200, 132, lesson_block(256, 32));
        assert_eq!(l.limiting(), vec![Resource::Threads, Resource::Registers]);
        assert!(l.explain().contains(" and registers"));
    }

    #[test]
    fn shared_memory_limit_counts_the_reserved_bytes() {
        let block = BlockResources { threads_per_block: 128, registers_per_thread: Some(16), shared_bytes: 48 * 1024 };
        let l = limits(H200, 132, block);
        assert_eq!(l.blocks_per_sm, 4);
        assert_eq!(l.limiting(), vec![Resource::SharedMemory]);
    }

    #[test]
    fn a_device_without_registers_is_limited_by_what_it_has() {
        let emulated = SmResources { registers: None, ..T4 };
        let block = BlockResources { registers_per_thread: None, ..lesson_block(256, 0) };
        let l = limits(emulated, 40, block);
        assert_eq!((l.blocks_per_sm, l.limiting()), (4, vec![Resource::Threads]));
        assert!(!l.explain().contains("registers"));
    }

    #[test]
    fn a_block_above_the_opt_in_maximum_fits_nowhere_and_one_below_it_counts_against_the_sm() {
        // 100 KiB on an H200: two blocks per SM, (228 KiB - 2 x 1 KiB reserved) / 100 KiB.
        let big = |kib: u32| BlockResources { threads_per_block: 256, registers_per_thread: Some(32), shared_bytes: kib * 1024 };
        let l = limits(H200, 132, big(100));
        assert_eq!((l.blocks_per_sm, l.limiting()), (2, vec![Resource::SharedMemory]));
        assert_eq!(limits(H200, 132, big(227)).blocks_per_sm, 1);
        assert_eq!(limits(H200, 132, big(228)).blocks_per_sm, 0, "past the opt-in maximum of 227 KiB");
        assert_eq!(limits(T4, 40, big(64)).blocks_per_sm, 1);
        assert_eq!(limits(T4, 40, big(65)).blocks_per_sm, 0);
    }

    #[test]
    fn an_unmodelled_limit_says_so() {
        let l = Limits { blocks_per_sm: 3, sms: 132, block: lesson_block(256, 22), sm: H200 };
        assert!(l.explain().starts_with("a limit the estimate does not model"));
    }

    #[test]
    fn empty_input_means_no_launch() {
        assert_eq!(cooperative_grid(0, 256, 1056), 0);
        assert_eq!(cooperative_grid(1, 256, 1056), 1);
        assert_eq!(cooperative_grid(611, 256, 1056), 3);
        assert_eq!(cooperative_grid(usize::MAX, 32, 1056), 1056);
    }

    #[test]
    fn block_sizes_are_multiples_of_32_up_to_the_device_limit() {
        assert!(check_threads_per_block(32, 1024).is_ok());
        assert!(check_threads_per_block(1024, 1024).is_ok());
        assert_eq!(check_threads_per_block(0, 1024), Err(BadBlock::Empty));
        for bad in [31, 49, 100] {
            assert_eq!(check_threads_per_block(bad, 1024), Err(BadBlock::NotWarps), "{bad}");
        }
        assert_eq!(check_threads_per_block(2048, 1024), Err(BadBlock::OverDeviceMax(1024)));
    }
}

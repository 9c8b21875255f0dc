//! Grid sizing: pure arithmetic, no CUDA calls.
//!
//! A cooperative grid can be no larger than the blocks that fit on the device
//! at once: the occupancy API's blocks per SM for that kernel, at that block
//! size and dynamic shared memory, times the SM count. Everything here is
//! tested on the CPU with the lesson's T4 figures and the H200's.

use crate::error::{Error, Result};
use serde::Serialize;
use std::fmt::Write;

/// What one SM offers (device attributes).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct SmResources {
    pub max_threads: u32,
    pub max_blocks: u32,
    pub registers: u32,
    pub shared_bytes: u32,
    /// Shared memory the system reserves for each resident block.
    pub reserved_shared_per_block: u32,
}

/// What one block of a kernel takes (function attributes and the launch).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct BlockResources {
    pub threads: u32,
    pub registers_per_thread: u32,
    /// Static plus dynamic shared memory.
    pub shared_bytes: u32,
}

/// The per-SM resources that can limit how many blocks are resident.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    Threads,
    Blocks,
    Registers,
    SharedMemory,
}

/// Registers are handed to warps in units of this many.
const REGISTER_UNIT_PER_WARP: u32 = 256;

/// How many blocks of this shape each resource alone would let an SM hold.
pub fn blocks_per_sm_by_resource(sm: &SmResources, block: &BlockResources) -> [(Resource, u32); 4] {
    let warps = block.threads.div_ceil(32);
    let regs_per_warp = (block.registers_per_thread * 32).div_ceil(REGISTER_UNIT_PER_WARP) * REGISTER_UNIT_PER_WARP;
    let by_registers = if regs_per_warp == 0 { u32::MAX } else { sm.registers / (regs_per_warp * warps) };
    let shared_per_block = block.shared_bytes + sm.reserved_shared_per_block;
    let by_shared = if shared_per_block == 0 { u32::MAX } else { sm.shared_bytes / shared_per_block };
    [
        (Resource::Threads, sm.max_threads / (warps * 32)),
        (Resource::Blocks, sm.max_blocks),
        (Resource::Registers, by_registers),
        (Resource::SharedMemory, by_shared),
    ]
}

/// A kernel's cooperative limit on one device, with what it is made of.
#[derive(Clone, Debug, Serialize)]
pub struct Limits {
    /// The occupancy API's answer for this kernel, block size and shared memory.
    pub blocks_per_sm: u32,
    pub sms: u32,
    pub block: BlockResources,
    pub sm: SmResources,
}

impl Limits {
    /// The most blocks a cooperative launch of this kernel may use.
    pub fn capacity(&self) -> u64 {
        cooperative_capacity(self.blocks_per_sm, self.sms)
    }

    /// The resources whose limit equals the occupancy API's answer.
    pub fn limiting(&self) -> Vec<Resource> {
        blocks_per_sm_by_resource(&self.sm, &self.block)
            .into_iter()
            .filter(|&(_, n)| n == self.blocks_per_sm)
            .map(|(r, _)| r)
            .collect()
    }

    /// One phrase naming what limits blocks per SM, with the arithmetic.
    pub fn explain(&self) -> String {
        let b = &self.block;
        let sm = &self.sm;
        let mut out = String::new();
        let all = blocks_per_sm_by_resource(sm, b);
        let limiting: Vec<_> = all.iter().filter(|(_, n)| *n == self.blocks_per_sm).collect();
        let shown = if limiting.is_empty() { all.iter().collect() } else { limiting };
        for (i, (resource, n)) in shown.into_iter().enumerate() {
            if i > 0 {
                out.push_str(" and ");
            }
            let _ = match resource {
                Resource::Threads => write!(out, "threads per SM ({} / {} = {n})", sm.max_threads, b.threads.div_ceil(32) * 32),
                Resource::Blocks => write!(out, "blocks per SM (the hardware's {n})"),
                Resource::Registers => write!(out, "registers ({} per thread; {} per SM allow {n})", b.registers_per_thread, sm.registers),
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

/// Blocks per SM times SMs: the cooperative ceiling.
pub fn cooperative_capacity(blocks_per_sm: u32, sms: u32) -> u64 {
    blocks_per_sm as u64 * sms as u64
}

/// Blocks an ordinary launch of one thread per element would use.
pub fn ordinary_blocks(n: u64, threads: u32) -> u64 {
    n.div_ceil(threads as u64)
}

/// The grid for a cooperative sum of `n` elements: `min(ceil(n / threads),
/// capacity)`, and 0 (launch nothing) for `n = 0`.
pub fn cooperative_grid(n: u64, threads: u32, capacity: u64) -> u64 {
    ordinary_blocks(n, threads).min(capacity)
}

/// Checks threads per block: a multiple of 32 from 32 to the device's maximum.
pub fn check_block(block: u32, max_threads_per_block: u32) -> Result<()> {
    if block == 0 || block % 32 != 0 || block > max_threads_per_block {
        return Err(Error::BadBlockSize { block, max: max_threads_per_block });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tesla T4 (compute capability 7.5), as the lesson measured it.
    const T4: SmResources =
        SmResources { max_threads: 1024, max_blocks: 16, registers: 65536, shared_bytes: 65536, reserved_shared_per_block: 0 };
    /// NVIDIA H200 (compute capability 9.0).
    const H200: SmResources =
        SmResources { max_threads: 2048, max_blocks: 32, registers: 65536, shared_bytes: 233472, reserved_shared_per_block: 1024 };

    fn lesson_block(threads: u32, registers_per_thread: u32) -> BlockResources {
        BlockResources { threads, registers_per_thread, shared_bytes: threads / 32 * 4 }
    }

    #[test]
    fn t4_fits_160_cooperative_blocks_of_256_threads() {
        let limits = Limits { blocks_per_sm: 4, sms: 40, block: lesson_block(256, 28), sm: T4 };
        assert_eq!(limits.capacity(), 160);
        assert_eq!(limits.limiting(), vec![Resource::Threads]);
        assert_eq!(limits.explain(), "threads per SM (1024 / 256 = 4)");
    }

    #[test]
    fn an_ordinary_launch_sized_to_the_lesson_input_uses_16387_blocks() {
        assert_eq!(ordinary_blocks(4_194_915, 256), 16_387);
    }

    #[test]
    fn t4_block_limit_applies_only_at_64_threads_or_fewer() {
        let by = |threads| blocks_per_sm_by_resource(&T4, &lesson_block(threads, 16));
        assert_eq!(by(64)[0], (Resource::Threads, 16));
        assert_eq!(by(64)[1], (Resource::Blocks, 16));
        assert_eq!(by(48)[0], (Resource::Threads, 16));
        assert_eq!(by(256)[0], (Resource::Threads, 4));
    }

    #[test]
    fn h200_fits_1056_cooperative_blocks_of_256_threads() {
        let limits = Limits { blocks_per_sm: 8, sms: 132, block: lesson_block(256, 24), sm: H200 };
        assert_eq!(limits.capacity(), 1056);
        assert_eq!(cooperative_grid(4_194_915, 256, limits.capacity()), 1056);
        assert_eq!(limits.limiting(), vec![Resource::Threads]);
    }

    #[test]
    fn a_register_heavy_kernel_is_limited_by_registers() {
        let limits = Limits { blocks_per_sm: 2, sms: 132, block: lesson_block(256, 128), sm: H200 };
        assert_eq!(limits.limiting(), vec![Resource::Registers]);
        assert_eq!(limits.explain(), "registers (128 per thread; 65536 per SM allow 2)");
    }

    #[test]
    fn ties_name_every_limiting_resource() {
        let limits = Limits { blocks_per_sm: 8, sms: 132, block: lesson_block(256, 32), sm: H200 };
        assert_eq!(limits.limiting(), vec![Resource::Threads, Resource::Registers]);
        assert!(limits.explain().contains(" and registers"));
    }

    #[test]
    fn shared_memory_limit_counts_the_reserved_bytes() {
        let block = BlockResources { threads: 128, registers_per_thread: 16, shared_bytes: 48 * 1024 };
        let limits = Limits { blocks_per_sm: 4, sms: 132, block, sm: H200 };
        assert_eq!(limits.limiting(), vec![Resource::SharedMemory]);
    }

    #[test]
    fn an_unmodelled_limit_says_so() {
        let limits = Limits { blocks_per_sm: 3, sms: 132, block: lesson_block(256, 28), sm: H200 };
        assert!(limits.explain().starts_with("a limit the estimate does not model"));
    }

    #[test]
    fn empty_input_means_no_launch() {
        assert_eq!(cooperative_grid(0, 256, 1056), 0);
        assert_eq!(cooperative_grid(1, 256, 1056), 1);
        assert_eq!(cooperative_grid(611, 256, 1056), 3);
    }

    #[test]
    fn block_sizes_are_multiples_of_32_up_to_the_device_limit() {
        assert!(check_block(32, 1024).is_ok());
        assert!(check_block(1024, 1024).is_ok());
        for bad in [0, 31, 48 + 1, 100, 1056, 2048] {
            assert!(check_block(bad, 1024).is_err(), "{bad}");
        }
    }
}

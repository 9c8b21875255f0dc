//! The scans by blocks that loop (`cg_algorithms_kernels::scan`'s
//! `persistent_*` kernels), launched here beside cg-algorithms' one-tile
//! blocks so the two are timed against CUB in the same run: a grid of the
//! GPU's resident capacity, each block taking tiles by ticket and loading
//! its next tile while it waits on the look-back.

use cg_algorithms_kernels::lookback::EPOCHS;
use cg_algorithms_kernels::scan::{PERSISTENT_EXCLUSIVE_SUM_F32, PERSISTENT_INCLUSIVE_SUM_F32};
use cg_algorithms_kernels::{THREADS, TILE_LEN};
use cg_launcher::device::{Buffer, Gpu};
use cg_launcher::error::Result;
use cg_launcher::launch::ensure_len;

/// The look-back's storage for the persistent scans, kept between calls.
pub struct Persistent<'g> {
    gpu: &'g Gpu,
    status: Buffer<u64>,
    ticket: Buffer<u32>,
    epoch: u32,
}

impl<'g> Persistent<'g> {
    pub fn new(gpu: &'g Gpu) -> Result<Persistent<'g>> {
        Ok(Persistent { gpu, status: gpu.zeros(1)?, ticket: gpu.zeros(1)?, epoch: 0 })
    }

    /// `y` = the inclusive (or exclusive) sum of `x`; the blocks launched.
    pub fn sum(&mut self, x: &Buffer<f32>, y: &mut Buffer<f32>, inclusive: bool) -> Result<u32> {
        let n = x.len();
        let def = if inclusive { &PERSISTENT_INCLUSIVE_SUM_F32 } else { &PERSISTENT_EXCLUSIVE_SUM_F32 };
        ensure_len(def.name(), "y", n, y.len())?;
        if n == 0 {
            return Ok(0);
        }
        let tiles = n.div_ceil(TILE_LEN);
        if self.status.len() < tiles || self.epoch + 1 == EPOCHS {
            self.status = self.gpu.zeros(tiles)?;
            self.epoch = 0;
        }
        self.epoch += 1;
        let kernel = self.gpu.kernel(def)?;
        let blocks = kernel.occupancy(THREADS)?.capacity().min(tiles as u32).max(1);
        // SAFETY: x and y hold n floats (checked above) and are whole
        // buffers, 256-byte aligned; status holds a word per tile, none of
        // this epoch (a new one each call, the words cleared before the
        // epochs wrap); the ticket is 0 (zeroed, and each launch's last
        // ticket sets it back); the launch gives the kernel's own shared
        // memory; calls on this Persistent run one after another.
        let launched =
            unsafe { kernel.launch(blocks, THREADS, (&x.slice(..), y.slice_mut(..), self.status.slice_mut(..), self.ticket.slice_mut(..), self.epoch, n)) };
        if launched.is_err() {
            // The ticket may be where the failed launch left it.
            self.ticket = self.gpu.zeros(1)?;
        }
        launched.map(|()| blocks)
    }
}

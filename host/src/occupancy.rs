//! `cg-lesson occupancy`: the cooperative ceiling as a property of the
//! kernel, not the card. For each of the lesson's kernels, and for the
//! cooperative kernel asking for 40 KiB more shared memory per block, by
//! block size: registers per thread, shared memory, blocks per SM (the
//! occupancy API's answer for that kernel), what limits them, and the most
//! blocks a cooperative launch of it may use.

use crate::device::Gpu;
use crate::error::Result;
use crate::sizing::Limits;
use crate::text::plural;
use serde::Serialize;
use std::fmt::Write;

/// Block sizes the table covers: 48 (legal CUDA, though the lesson's tiled
/// reductions need whole warps) and the powers of two from 64 to 1024.
pub const BLOCK_SIZES: [u32; 6] = [48, 64, 128, 256, 512, 1024];

/// Dynamic shared memory the variant asks for on top of the lesson kernel's.
pub const EXTRA_SHARED: u32 = 40 * 1024;

/// One kernel at one block size.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub kernel: String,
    pub threads_per_block: u32,
    /// `None` where unknown: on the emulator, a kernel ptxas did not count.
    pub registers_per_thread: Option<u32>,
    pub shared_bytes: u32,
    pub blocks_per_sm: u32,
    pub limited_by: String,
    pub cooperative_max: u32,
}

impl Row {
    fn of(kernel: String, l: &Limits) -> Row {
        Row {
            kernel,
            threads_per_block: l.block.threads_per_block,
            registers_per_thread: l.block.registers_per_thread,
            shared_bytes: l.block.shared_bytes,
            blocks_per_sm: l.blocks_per_sm,
            limited_by: l.explain(),
            cooperative_max: l.capacity(),
        }
    }
}

/// Every row of the table, on `gpu`.
pub fn run(gpu: &Gpu) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let heavy = crate::kernels().reduce_cooperative_grid.with_extra_shared(EXTRA_SHARED).expect("16 KiB more than the kernel's own fits in a u32");
    let heavy_name = format!("{} + {} KiB shared", crate::kernels().reduce_cooperative_grid.name(), EXTRA_SHARED / 1024);
    for &t in &BLOCK_SIZES {
        rows.push(Row::of(crate::kernels().reduce_blocks_to_partials.name().into(), &gpu.kernel(&crate::kernels().reduce_blocks_to_partials)?.occupancy(t)?));
        rows.push(Row::of(crate::kernels().reduce_partials_to_total.name().into(), &gpu.kernel(&crate::kernels().reduce_partials_to_total)?.occupancy(t)?));
        rows.push(Row::of(
            crate::kernels().reduce_cooperative_grid.name().into(),
            &gpu.cooperative_kernel(&crate::kernels().reduce_cooperative_grid)?.occupancy(t)?,
        ));
        rows.push(Row::of(heavy_name.clone(), &gpu.cooperative_kernel(&heavy)?.occupancy(t)?));
        rows.push(Row::of(crate::kernels().probe_cooperative.name().into(), &gpu.kernel(&crate::kernels().probe_cooperative)?.occupancy(t)?));
    }
    Ok(rows)
}

/// The table as text, one section per kernel. `emulated`: where the
/// registers came from, on the emulator (ptxas at build time, or why none).
pub fn render(device: &str, rows: &[Row], emulated: Option<Result<(), &str>>) -> String {
    let mut o = format!("Occupancy on {device}: the cooperative ceiling by kernel and block size\n");
    match emulated {
        Some(Ok(())) => o += "registers: ptxas -arch=sm_75's count for each kernel, taken when the kernels were built\n",
        Some(Err(why)) => {
            let _ = writeln!(o, "registers: - (not counted, so they limit nothing here: {why})");
        }
        None => {}
    }
    let mut kernels: Vec<&str> = Vec::new();
    for r in rows {
        if !kernels.contains(&r.kernel.as_str()) {
            kernels.push(&r.kernel);
        }
    }
    for k in kernels {
        let _ = writeln!(o, "\n{k}");
        let _ = writeln!(o, "  {:>7}  {:>9}  {:>9}  {:>9}  {:>15}  limited by", "threads", "registers", "shared B", "blocks/SM", "cooperative max");
        for r in rows.iter().filter(|r| r.kernel == k) {
            let regs = r.registers_per_thread.map_or("-".to_string(), |x| x.to_string());
            let _ = writeln!(
                o,
                "  {:>7}  {:>9}  {:>9}  {:>9}  {:>15}  {}",
                r.threads_per_block, regs, r.shared_bytes, r.blocks_per_sm, r.cooperative_max, r.limited_by
            );
        }
    }
    let at = |k: &str, t: u32| rows.iter().find(|r| r.kernel.starts_with(k) && r.threads_per_block == t);
    if let (Some(lesson), Some(heavy)) =
        (at(crate::kernels().reduce_cooperative_grid.name(), 256), rows.iter().find(|r| r.kernel.contains("KiB") && r.threads_per_block == 256))
    {
        let _ = writeln!(
            o,
            "\nThe same card, the same block of 256: {} as written, {} with {} KiB more shared memory per block. The ceiling belongs to the kernel.",
            plural(lesson.cooperative_max, "cooperative block", "cooperative blocks"),
            heavy.cooperative_max,
            EXTRA_SHARED / 1024
        );
    }
    o
}

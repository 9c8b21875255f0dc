//! The sort's kernels launched by hand on the emulated GPU
//! (`cg_algorithms_kernels::sort`), for what a whole sort cannot show on
//! the emulator: that the histogram launch zeroes the counts and the
//! look-back words it is given whatever was there, and that a pass launch
//! zeroes the next launch's words. (A word left over from an earlier
//! launch is read only where a tile looks back before the tile it reads
//! has published, which the emulator's two workers seldom do; a GPU
//! would.)

use cg_algorithms_kernels::sort::{
    DESCENDING, HISTOGRAM_THREADS, PASS_THREADS, RADIX, SORT_HISTOGRAM_U32, SORT_PASS_KEYS_U32, Twiddle, histogram_control, pass_control, tile_len,
};
use cg_launcher::device::{EmulatedDevice, EmulatorOptions, Gpu};

fn keys(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) ^ i >> 3).collect()
}

/// The histogram of bits 4..30 (four passes, the last of two bits),
/// descending, over poisoned counts and words: each pass's count of each
/// digit, as the CPU counts them, and every word zeroed.
#[test]
fn the_histogram_counts_every_passs_digits_and_zeroes_the_words_it_is_given() -> cg_launcher::error::Result<()> {
    let gpu = Gpu::emulated(EmulatedDevice::T4, EmulatorOptions { seed: Some(3), ..Default::default() });
    let n = 20_011;
    let xs = keys(n);
    let x = gpu.upload(&xs)?;
    let mut hist = gpu.upload(&vec![u32::MAX; 8 * RADIX])?;
    let words = 3 * RADIX + 5;
    let mut clear = gpu.upload(&vec![u32::MAX; words])?;
    let kernel = gpu.cooperative_kernel(&SORT_HISTOGRAM_U32)?;
    let launch = kernel.configure(3, HISTOGRAM_THREADS)?;
    // SAFETY: x holds n keys, a whole buffer; hist holds 256 counts for
    // each of the 4 passes; clear holds `words`; 4 < 30 <= 32.
    unsafe { launch.launch((&x.slice(..), hist.slice_mut(..), clear.slice_mut(..), words, n, histogram_control(4, 30, DESCENDING)))? };
    let twiddle = Twiddle::<u32>::new(DESCENDING);
    let mut want = vec![0u32; 4 * RADIX];
    for &k in &xs {
        for p in 0..4 {
            let shift = 4 + 8 * p as u32;
            let width = (30 - shift).min(8);
            want[p * RADIX + twiddle.digit(twiddle.ordered(k), shift, (1 << width) - 1) as usize] += 1;
        }
    }
    assert_eq!(gpu.read(&hist)?[..4 * RADIX], want[..]);
    assert!(gpu.read(&clear)?.iter().all(|&w| w == 0), "a look-back word left as it was");
    Ok(())
}

/// A pass over three tiles, its own words zeroed and the next launch's
/// poisoned: the keys in order by the pass's digit, and every one of the
/// next launch's words zeroed.
#[test]
fn a_pass_sorts_by_its_digit_and_zeroes_the_next_launchs_words() -> cg_launcher::error::Result<()> {
    let gpu = Gpu::emulated(EmulatedDevice::T4, EmulatorOptions { seed: Some(5), ..Default::default() });
    let tile = tile_len(4, false);
    let n = 2 * tile + 99;
    let xs = keys(n);
    let x = gpu.upload(&xs)?;
    let mut y = gpu.zeros::<u32>(n)?;
    let mut counts = vec![0u32; RADIX];
    xs.iter().for_each(|&k| counts[(k >> 8 & 0xff) as usize] += 1);
    let hist = gpu.upload(&counts)?;
    let carry = gpu.zeros::<u32>(RADIX)?;
    let mut carry_out = gpu.zeros::<u32>(RADIX)?;
    let words = 5 * RADIX; // more than this launch's tiles, as the next launch may need
    let mut status = gpu.zeros::<u32>(words)?;
    let mut clear = gpu.upload(&vec![u32::MAX; words])?;
    let mut ticket = gpu.zeros::<u32>(1)?;
    // SAFETY: x holds n keys and y n; hist holds the pass's 256 counts over
    // all n keys, which are this launch's; a block of PASS_THREADS per tile;
    // status holds 256 zeroed words per tile, clear `words`; the ticket is 0.
    unsafe {
        gpu.kernel(&SORT_PASS_KEYS_U32)?.launch(
            3,
            PASS_THREADS,
            (
                &x.slice(..),
                y.slice_mut(..),
                &hist.slice(..),
                &carry.slice(..),
                carry_out.slice_mut(..),
                status.slice_mut(..),
                clear.slice_mut(..),
                ticket.slice_mut(..),
                n,
                words,
                pass_control(8, 8, 0),
            ),
        )?
    };
    let mut want = xs.clone();
    want.sort_by_key(|k| k >> 8 & 0xff);
    assert!(gpu.read(&y)? == want, "the pass's keys out of order");
    assert!(gpu.read(&clear)?.iter().all(|&w| w == 0), "a word of the next launch left as it was");
    assert_eq!(gpu.read(&ticket)?, [0], "the ticket after the launch");
    Ok(())
}

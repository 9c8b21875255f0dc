//! A buffer's bytes viewed as another element type (`View::cast`,
//! `ViewMut::cast`) on the emulated T4: bytes uploaded as `u8` read by a
//! kernel as `u32` words and written back as words into a buffer of `u16`;
//! a view that does not start on, or span, whole elements of the new type is
//! refused by name.

use cg_emulator::Options;
use cg_kernel::cg::this_grid;
use cg_kernel::kernel;
use cg_kernel::mem::{In, Out};
use cg_launcher::device::{EmulatedDevice, Gpu};
use cg_launcher::error::{Error, Result};

/// `out[i] = x[i].rotate_left(8)` for `i < n`.
///
/// # Safety
/// `x` and `out` hold `n` words.
#[kernel(emulator)]
pub unsafe fn rotate_words(x: In<u32>, out: Out<u32>, n: usize) {
    let i = this_grid().thread_rank();
    if i < n {
        // SAFETY: i < n, and this thread alone writes out[i].
        unsafe { out.write(i, x.read(i).rotate_left(8)) };
    }
}

#[test]
fn bytes_read_as_words_and_written_as_words_into_halves() -> Result<()> {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Options::default());
    let bytes: Vec<u8> = (0..64u32).map(|i| (i * 37 % 251) as u8).collect();
    let x = gpu.upload(&bytes)?;
    let mut out = gpu.zeros::<u16>(40)?;
    let kernel = gpu.kernel(&ROTATE_WORDS)?;
    // Bytes 8..56 are words 2..14 of x; halves 4..28 are words 2..14 of out.
    let words = x.slice(8..56).cast::<u32>()?;
    assert_eq!(words.len(), 12);
    let written = out.slice_mut(4..28).cast::<u32>()?;
    // SAFETY: 12 words each.
    unsafe { kernel.launch(1, 32, (&words, written, 12))? };
    let expected: Vec<u32> = bytes[8..56].chunks(4).map(|w| u32::from_ne_bytes(w.try_into().unwrap()).rotate_left(8)).collect();
    let halves = gpu.read(&out)?;
    let got: Vec<u32> = halves[4..28].chunks(2).map(|h| h[0] as u32 | (h[1] as u32) << 16).collect();
    assert_eq!(got, expected);
    assert!(halves[..4].iter().chain(&halves[28..]).all(|&h| h == 0), "nothing outside the view written");
    // The words read back through the cast view, as the host sees them.
    assert_eq!(gpu.read_view(&x.slice(..).cast::<u32>()?)?, bytemuck::cast_slice::<u8, u32>(&bytes).to_vec());
    Ok(())
}

#[test]
fn a_view_that_does_not_divide_into_the_new_type_is_refused_by_name() -> Result<()> {
    let gpu = Gpu::emulated(EmulatedDevice::T4, Options::default());
    let mut x = gpu.zeros::<u8>(64)?;
    // Starting at byte 2: not a multiple of 4.
    let err = x.slice(2..10).cast::<u32>().err().expect("a view from byte 2 as u32");
    assert!(matches!(err, Error::MisfitCast { from: "u8", to: "u32", to_size: 4, start_byte: 2, bytes: 8 }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "a view of u8 as u32 refused: it spans bytes 2..10 of its buffer, and a u32 view must start on a multiple of 4 bytes and span a whole number of 4-byte elements; slice it so that it does (`.slice(a..b)` with a and b in elements of u8), then cast"
    );
    // 6 bytes: not a whole number of words.
    assert!(matches!(x.slice_mut(0..6).cast::<f32>(), Err(Error::MisfitCast { start_byte: 0, bytes: 6, .. })));
    // Wider to narrower always divides; from halves to u64 it may not.
    let halves = gpu.zeros::<u16>(12)?;
    assert_eq!(halves.slice(..).cast::<u8>()?.len(), 24);
    let err = halves.slice(1..5).cast::<u64>().err().expect("a view from byte 2 as u64");
    assert!(matches!(err, Error::MisfitCast { to_size: 8, start_byte: 2, bytes: 8, .. }), "{err:?}");
    assert!(err.to_string().contains("must start on a multiple of 8 bytes"), "{err}");
    assert_eq!(halves.slice(4..12).cast::<u64>()?.len(), 2);
    Ok(())
}

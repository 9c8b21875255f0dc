//! Time as a kernel reads it.

/// Nanoseconds on the GPU's global timer (the `%globaltimer` register; in
/// C++, `asm("mov.u64 %0, %%globaltimer;" : "=l"(t))`): one clock for every
/// SM, coarse (it advances in steps of a microsecond or so on most GPUs),
/// for waiting a given time or timing a kernel's phases. On the emulator,
/// nanoseconds of the host's clock since the emulator first read it, each
/// read counting as a step of the kernel.
#[inline(always)]
pub fn global_timer() -> u64 {
    crate::arch::global_timer()
}

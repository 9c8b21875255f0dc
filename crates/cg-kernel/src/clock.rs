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

/// Lets the calling thread's warp sleep about `ns` nanoseconds
/// (`nanosleep.u32`; in C++, `__nanosleep(ns)`, sm_70 and later): for a
/// thread that polls memory another block writes, so that the polls leave
/// the memory system to the writers. The GPU may wake the warp anywhere
/// from 0 to about twice `ns`, and at most after a millisecond, so it is a
/// hint, never a way to order anything. On the emulator it does nothing:
/// there a poll that keeps returning the same value already gives way to
/// the other threads.
#[inline(always)]
pub fn nanosleep(ns: u32) {
    #[cfg(target_arch = "nvptx64")]
    crate::arch::nanosleep(ns);
    #[cfg(not(target_arch = "nvptx64"))]
    let _ = ns;
}

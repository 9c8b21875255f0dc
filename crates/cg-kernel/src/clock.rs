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

/// Lets this thread's warp sleep for about `ns` nanoseconds (`__nanosleep(ns)`,
/// PTX `nanosleep.u32`, sm_70+; the GPU may wake it earlier or later, up to
/// a millisecond): what a loop polling memory another block writes waits
/// with between polls, so that its loads leave the memory system to the
/// threads doing work. On the emulator, a step of the kernel, with no sleep.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn nanosleep(ns: u32) {
    #[cfg(target_arch = "nvptx64")]
    crate::arch::nanosleep(ns);
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = ns;
        crate::emu::thread::tick();
    }
}

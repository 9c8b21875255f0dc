//! The instructions the cooperative-groups layer is built on: PTX on the GPU
//! (`nvptx`, the only module with inline assembly), and the emulator's
//! implementation of the same functions on the CPU (`cpu`).

#[cfg(target_arch = "nvptx64")]
mod nvptx;
#[cfg(target_arch = "nvptx64")]
pub use nvptx::*;

#[cfg(not(target_arch = "nvptx64"))]
mod cpu;
#[cfg(not(target_arch = "nvptx64"))]
pub use cpu::*;

//! The thin layer over NCCL, through cudarc's `nccl` result layer, loaded at
//! run time (the build needs no NCCL): the library check, the unique id, a
//! communicator, the all-reduce of `f32` by sum.
//!
//! cudarc 0.19 loads the library as `libnccl.so` (or `libnccl.so.<CUDA
//! major>`), not as NCCL's own soname `libnccl.so.2`, and panics when none
//! loads; [`library`] checks first and says what to do.

use crate::error::{Error, Result};
use cudarc::nccl::{result, sys};
use std::ffi::CStr;

/// NCCL's own soname, which cudarc does not try.
const SONAME: &str = "libnccl.so.2";

/// The folder the library `name` was loaded from, read from this process's mappings.
fn loaded_from(name: &str) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let path = maps.lines().filter_map(|l| l.split_whitespace().nth(5)).find(|p| p.contains(name))?;
    Some(std::path::Path::new(path).parent()?.display().to_string())
}

/// Checks that cudarc can load NCCL, and if not, what the user can do.
pub fn library() -> Result<()> {
    // SAFETY: loads (and unloads) a library by name; NCCL's initializers have no preconditions.
    if unsafe { sys::is_culib_present() } {
        return Ok(());
    }
    // SAFETY: as above.
    let why = match unsafe { libloading::Library::new(SONAME) } {
        Ok(lib) => {
            let folder = loaded_from(SONAME).unwrap_or_else(|| "its folder".to_string());
            drop(lib);
            format!(
                "NCCL is installed as {SONAME} (in {folder}), but cudarc 0.19 loads it only as libnccl.so: `mkdir -p ~/.local/lib/nccl && ln -sf {folder}/{SONAME} ~/.local/lib/nccl/libnccl.so`, then run with LD_LIBRARY_PATH=$HOME/.local/lib/nccl:$LD_LIBRARY_PATH"
            )
        }
        Err(_) => "no NCCL library was found: install the distribution's libnccl2 and libnccl-dev (which has libnccl.so), or `pip install nvidia-nccl-cu13` (cu12 for CUDA 12) and link its nvidia/nccl/lib/libnccl.so.2 as libnccl.so in a folder on LD_LIBRARY_PATH".to_string(),
    };
    Err(Error::NoNccl { why })
}

/// The NCCL version, as `2.28.9`.
pub fn version() -> Result<String> {
    let v = result::get_nccl_version().map_err(nccl_error("ncclGetVersion"))?;
    // NCCL_VERSION(X, Y, Z) is X * 10000 + Y * 100 + Z from 2.9 on.
    Ok(format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100))
}

/// NCCL's words for a failed call.
fn nccl_error(call: &'static str) -> impl FnOnce(result::NcclError) -> Error {
    move |e| {
        // SAFETY: NCCL returns a static string for every result code.
        let text = unsafe { CStr::from_ptr(sys::ncclGetErrorString(e.0)) }.to_string_lossy().into_owned();
        Error::Nccl { call, error: format!("{:?}: {text}", e.0) }
    }
}

/// What every rank of one communicator is created from (`ncclUniqueId`):
/// made by rank 0 (whose process then listens for the others), handed to the
/// rest.
#[derive(Clone, Copy)]
pub struct UniqueId(sys::ncclUniqueId);

impl UniqueId {
    /// A fresh id (`ncclGetUniqueId`); [`library`] must have passed.
    pub fn new() -> Result<UniqueId> {
        Ok(UniqueId(result::get_uniqueid().map_err(nccl_error("ncclGetUniqueId"))?))
    }

    /// The id as hex, for a file another process reads.
    pub fn to_hex(&self) -> String {
        self.0.internal.iter().map(|&c| format!("{:02x}", c as u8)).collect()
    }

    /// An id written by [`to_hex`](Self::to_hex).
    pub fn from_hex(text: &str) -> Option<UniqueId> {
        let text = text.trim();
        let mut internal = [0 as std::ffi::c_char; 128];
        if text.len() != 2 * internal.len() || !text.is_ascii() {
            return None;
        }
        for (i, c) in internal.iter_mut().enumerate() {
            *c = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()? as std::ffi::c_char;
        }
        Some(UniqueId(sys::ncclUniqueId { internal }))
    }
}

/// One rank's communicator (`ncclComm_t`); aborted when dropped, so that a
/// rank whose peers failed never waits for them.
pub(crate) struct Comm(sys::ncclComm_t);

impl Comm {
    /// Joins rank `rank` of `ranks` (`ncclCommInitRank`): blocks until every
    /// rank has joined.
    ///
    /// # Safety
    /// The CUDA context of this rank's device is current on this thread.
    pub(crate) unsafe fn init_rank(id: &UniqueId, rank: u32, ranks: u32) -> Result<Comm> {
        let mut comm = std::ptr::null_mut();
        // SAFETY: `comm` receives the new communicator; the caller's contract.
        unsafe { result::comm_init_rank(&mut comm, ranks as i32, id.0, rank as i32) }.map_err(nccl_error("ncclCommInitRank"))?;
        Ok(Comm(comm))
    }

    /// Queues the sum across ranks of `count` floats at `src` into `dst`
    /// (`ncclAllReduce` with `ncclSum`) on `stream`.
    ///
    /// # Safety
    /// `src` and `dst` address `count` floats of this rank's device, and
    /// `stream` is its context's.
    pub(crate) unsafe fn all_reduce_sum(&self, src: u64, dst: u64, count: usize, stream: cudarc::driver::sys::CUstream) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe {
            result::all_reduce(
                src as *const _,
                dst as *mut _,
                count,
                sys::ncclDataType_t::ncclFloat32,
                sys::ncclRedOp_t::ncclSum,
                self.0,
                stream as sys::cudaStream_t,
            )
        }
        .map(|_| ())
        .map_err(nccl_error("ncclAllReduce"))
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // SAFETY: made by `init_rank`, dropped once.
        let _ = unsafe { result::comm_abort(self.0) };
    }
}

/// Sets `NCCL_NVLS_ENABLE=0` unless the user set it: NVLink multicast has no
/// use for a one-float all-reduce, and on shared machines it can take the
/// GPUs out of service.
///
/// # Safety
/// No other thread reads or writes the environment meanwhile (call it
/// before starting any).
pub unsafe fn keep_multicast_off() {
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        // SAFETY: the caller's contract.
        unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_survives_its_hex_and_bad_hex_is_refused() {
        let mut internal = [0 as std::ffi::c_char; 128];
        for (i, c) in internal.iter_mut().enumerate() {
            *c = (i * 37 % 256) as u8 as std::ffi::c_char;
        }
        let id = UniqueId(sys::ncclUniqueId { internal });
        let back = UniqueId::from_hex(&(id.to_hex() + "\n")).unwrap();
        assert_eq!(back.0.internal, internal);
        assert!(UniqueId::from_hex("00ff").is_none());
        assert!(UniqueId::from_hex(&"zz".repeat(128)).is_none());
    }

    #[test]
    fn without_nccl_the_check_says_how_to_get_it() {
        // CI has no NCCL: the check must answer with the way to get it, not panic.
        if let Err(e) = library() {
            let text = e.to_string();
            assert!(text.contains("libnccl"), "{text}");
        }
    }
}

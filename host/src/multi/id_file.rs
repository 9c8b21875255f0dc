//! The NCCL id of a run of one process per GPU, through a file: rank 0
//! makes the id (its process then answers the others' joining) and writes
//! it; every other rank waits for it. Rank 0 removes the file at the end,
//! so that a later run never reads a stale id.

use super::MultiConfig;
use crate::error::{Error, Result};
use crate::group::CommId;
use crate::nccl::{self, UniqueId};
use cg_launcher::error::Error as L;
use std::path::Path;
use std::time::{Duration, Instant};

/// This rank's id: made and written by rank 0, read by the others.
pub(super) fn exchange(cfg: &MultiConfig, rank: u32, path: &Path) -> Result<CommId> {
    if cfg.emulated {
        return Err(Error::Launch(L::NotOnEmulator("one process per GPU (--rank)")));
    }
    nccl::library()?;
    let io = |error| Error::Io { path: path.display().to_string(), error };
    if rank == 0 {
        let id = UniqueId::new()?;
        // Written whole, then renamed, so that no rank reads half an id.
        let part = path.with_extension("part");
        std::fs::write(&part, id.to_hex() + "\n").map_err(io)?;
        std::fs::rename(&part, path).map_err(io)?;
        return Ok(CommId::Nccl(id));
    }
    let start = Instant::now();
    loop {
        match std::fs::read_to_string(path) {
            Ok(text) => return UniqueId::from_hex(&text).map(CommId::Nccl).ok_or(Error::BadNcclId { path: path.display().to_string() }),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(e)),
            Err(_) if start.elapsed() > cfg.timeout => return Err(Error::NoNcclId { path: path.display().to_string(), seconds: cfg.timeout.as_secs_f64() }),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

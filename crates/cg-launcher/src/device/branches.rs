//! Where memory was made and which branch of `Gpu::in_parallel` uses it:
//! the checks that refuse memory of another device, memory of another
//! branch, and a use that races another branch's; and `in_parallel` itself.

use super::*;

/// Where memory was made: which device, which branch of which
/// [`Gpu::in_parallel`] call, and which allocation (its base address). A
/// launch or copy on another device is refused ([`Error::OtherDevice`]),
/// and so is a launch in another branch of the same call
/// ([`Error::OtherBranch`]), whose stream is not ordered after the
/// allocation's. `device` is `None` for memory every device reaches
/// ([`Shared`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Origin {
    pub device: Option<DeviceKey>,
    pub branch: Option<Branch>,
    pub allocation: u64,
}

/// Branch `index` of the `fork`-th [`Gpu::in_parallel`] call of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Branch {
    pub(super) fork: u64,
    pub(super) index: usize,
}

/// Bytes `.0 .. .1` of an allocation.
pub(crate) type Span = (usize, usize);

/// How a launch or a copy uses a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Use {
    Read,
    Write,
}

/// One use of part of an allocation by a branch of the running
/// [`Gpu::in_parallel`] call: the bytes, the branch, and whether it wrote.
#[derive(Clone, Debug)]
pub(super) struct BranchUse {
    bytes: Span,
    branch: usize,
    access: Use,
    /// The use, for the error: `gpu.write`, or a kernel's parameter.
    what: String,
}

impl Gpu {
    /// Where allocation `allocation`, made now, comes from: this device, and the branch running.
    pub(crate) fn origin(&self, allocation: u64) -> Origin {
        Origin { device: Some(self.key), branch: self.branch.get(), allocation }
    }

    /// Refuses memory another device made, memory another branch of the
    /// running `in_parallel` call made, and a use of memory made before it
    /// that races another branch's: a write of bytes another branch reads
    /// or writes, or a read of bytes another branch writes
    /// ([`Error::RaceBetweenBranches`]). Branches run on streams that are
    /// not ordered against each other, so no branch may use what another
    /// one writes; reads of the same bytes in several branches are fine.
    ///
    /// `what` names the use in the error: `gpu.write`, or a kernel's parameter.
    pub(crate) fn check_use(&self, origin: Origin, bytes: Span, access: Use, what: &dyn Fn() -> String) -> Result<()> {
        if origin.device.is_some_and(|d| d != self.key) {
            return Err(Error::OtherDevice { what: "a buffer" });
        }
        let Some(now) = self.branch.get() else { return Ok(()) };
        if let Some(made) = origin.branch
            && made.fork == now.fork
        {
            if made.index != now.index {
                return Err(Error::OtherBranch { made_in: made.index, used_in: now.index });
            }
            // Made in this branch: no other branch may use it.
            return Ok(());
        }
        if bytes.0 == bytes.1 {
            return Ok(());
        }
        let mut uses = self.branch_uses.borrow_mut();
        let earlier = uses.entry(origin.allocation).or_default();
        let clash =
            earlier.iter().find(|u| u.branch != now.index && u.bytes.0 < bytes.1 && bytes.0 < u.bytes.1 && (u.access == Use::Write || access == Use::Write));
        if let Some(u) = clash {
            return Err(Error::RaceBetweenBranches {
                first: u.branch,
                first_wrote: u.access == Use::Write,
                first_use: u.what.clone(),
                second: now.index,
                second_writes: access == Use::Write,
                second_use: what(),
            });
        }
        earlier.push(BranchUse { bytes, branch: now.index, access, what: what() });
        Ok(())
    }

    /// Queues the launches `work(b)` makes for each branch `b` of `branches`
    /// on a stream of the branch's own, so that the branches may run at once:
    /// every branch starts after everything queued before this call, and
    /// everything queued after it waits for every branch
    /// (fork and join, with events). Inside [`capture`](Self::capture) the
    /// branches become parallel branches of the graph. Branches do not nest.
    ///
    /// Whether they overlap is the GPU's choice: two grids that each fill
    /// the GPU run one after the other. Each cooperative launch has barrier
    /// memory of its own, as NVIDIA's has its own workspace, so two that do
    /// run together never count each other's arrivals (`docs/abi.md`).
    ///
    /// The streams are made on first use and kept for the `Gpu`'s life, to
    /// be used again by the next call: as many streams as the most branches
    /// any call asked for (CUDA's non-blocking streams, a little driver
    /// memory each) stay until the `Gpu` is dropped.
    ///
    /// What is ordered, and what is refused:
    /// - each branch's own work is in its order: a buffer allocated, written,
    ///   read or copied in a branch is so after that branch's launches so
    ///   far and before its later ones;
    /// - the branches are ordered against nothing but the fork and the join,
    ///   so a buffer made before the call may be read by several branches,
    ///   and written by one branch only where no other branch reads or
    ///   writes the same bytes: a use that could race another branch's is
    ///   refused by name before it is queued ([`Error::RaceBetweenBranches`];
    ///   disjoint ranges of one buffer are fine);
    /// - a buffer allocated in a branch is that branch's: refused by name in
    ///   another branch of the same call ([`Error::OtherBranch`]), usable
    ///   anywhere after the join;
    /// - a buffer dropped in a branch is freed after the join, once every
    ///   branch is done with it;
    /// - in a capture, where nothing runs, memory cannot be touched at all
    ///   ([`Error::MemoryInCapture`]).
    ///
    /// The emulator runs the branches one after another. That is what the
    /// GPU may do too (the branches are independent), and no branch waits
    /// on another, so nothing that hangs on a GPU runs on the emulator.
    pub fn in_parallel(&self, branches: usize, work: &mut dyn FnMut(usize) -> Result<()>) -> Result<()> {
        if self.branch.get().is_some() {
            return Err(Error::NestedStreams { what: "a branch of in_parallel" });
        }
        let fork = self.forks.get();
        self.forks.set(fork + 1);
        self.branch_uses.borrow_mut().clear();
        // A branch that panics still leaves the device out of the branch
        // (the backends join what ran first), so that a caller who catches
        // the panic finds the device in order, not in a branch for ever.
        let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.backend.in_parallel(branches, &mut |index| {
                self.branch.set(Some(Branch { fork, index }));
                let made = work(index);
                self.branch.set(None);
                made
            })
        }));
        self.branch.set(None);
        made.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

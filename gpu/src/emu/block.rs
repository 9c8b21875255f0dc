//! An emulated block: its barrier and its dynamic shared memory.

use super::thread::{ThreadCtx, unwind_aborted};
use super::warp::Status;
use std::sync::{Condvar, Mutex};

struct BarrierState {
    arrived: u32,
    live: u32,
    generation: u64,
}

pub(crate) struct Block {
    barrier: Mutex<BarrierState>,
    cv: Condvar,
    shared: Box<[u64]>,
}

// SAFETY: the shared-memory words are touched only through raw pointers by
// kernel code, which orders its accesses with the block barrier, as on a GPU.
unsafe impl Sync for Block {}
unsafe impl Send for Block {}

impl Block {
    pub fn new(threads: u32, shared_bytes: u32) -> Block {
        Block {
            barrier: Mutex::new(BarrierState { arrived: 0, live: threads, generation: 0 }),
            cv: Condvar::new(),
            shared: vec![0u64; (shared_bytes as usize).div_ceil(8)].into_boxed_slice(),
        }
    }

    pub fn shared(&self) -> *mut u8 {
        self.shared.as_ptr() as *mut u8
    }

    /// `bar.sync 0`: waits for every thread of the block that has not exited.
    pub fn sync(&self, t: &ThreadCtx) {
        t.warp.set(t.lane, Status::Blocked);
        let mut st = self.barrier.lock().unwrap();
        let generation = st.generation;
        st.arrived += 1;
        if st.arrived >= st.live {
            st.arrived = 0;
            st.generation += 1;
            self.cv.notify_all();
        }
        while st.generation == generation {
            if t.abort.load(std::sync::atomic::Ordering::Acquire) {
                drop(st);
                unwind_aborted()
            }
            st = self.cv.wait(st).unwrap();
        }
        drop(st);
        t.warp.set(t.lane, Status::Running);
    }

    /// Wakes every waiter (the launch was aborted).
    pub fn wake_all(&self) {
        let _st = self.barrier.lock().unwrap();
        self.cv.notify_all();
    }

    /// A thread has returned: the barrier stops waiting for it.
    pub fn exit(&self) {
        let mut st = self.barrier.lock().unwrap();
        st.live -= 1;
        if st.arrived > 0 && st.arrived >= st.live {
            st.arrived = 0;
            st.generation += 1;
            self.cv.notify_all();
        }
    }
}

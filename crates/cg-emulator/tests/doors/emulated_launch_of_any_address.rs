//! A hand-built launch whose `Out` argument points anywhere, run from safe code.
use cg_emulator::{Arg, Device, Launch, Options};

fn main() {
    let args = [Arg::Out { name: "y", address: 0x1000, len: 1 << 30, elem: 4, slot: 0 }];
    let launch = Launch {
        kernel: "k",
        grid: 1,
        threads: 32,
        shared_bytes: 0,
        shared_tail: 0,
        registers_per_thread: None,
        cooperative: false,
        grid_sync: false,
        cluster: None,
        cluster_kernel: false,
        args: &args,
        entry: &|_| {},
        trace: None,
    };
    let _ = Device::T4.launch(&launch, &Options::default());
}

//! Atomics reach one `atom` instruction per type the crate chose: no other
//! type can join them (a pair of `u16` has no `atom.add`), and each is
//! `unsafe`, whose caller vouches for the index.

use cg_kernel::mem::{Atomic, Out};

#[derive(Clone, Copy)]
struct Pair(u16, u16);

impl Atomic for Pair {}

fn add(out: Out<u32>) -> u32 {
    out.atomic_add(1_000_000, 1)
}

fn main() {}

//! `DeviceReduce`: one cooperative launch with one `grid.sync()`.

use crate::element::{Partials, ReduceDef};
use crate::{Algorithms, Element, GRID_SPAN, Op, Result, THREADS};
use cg_algorithms_kernels::operator::OperatorKernels;
use cg_launcher::device::Buffer;

impl Algorithms<'_> {
    /// `x[0] op x[1] op ...`: CUB's `DeviceReduce::Sum`, `Min` or `Max`,
    /// read back (a copy to the host, which waits for the device). An empty
    /// `x` gives `op`'s identity ([`Element::identity`]).
    pub fn reduce<T: Element>(&mut self, x: &Buffer<T>, op: Op) -> Result<T> {
        if x.is_empty() {
            return Ok(T::identity(op));
        }
        self.reduce_on_device(x, op)?;
        let out = &T::partials(&mut self.scratch.partials).as_ref().expect("made by reduce_on_device").out;
        Ok(self.gpu.read(out)?[0])
    }

    /// The same reduction, its result left on the device, and returned as
    /// the one-element buffer that holds it until the next reduction of `T`
    /// (nothing waits for the device: what a timed loop calls).
    pub fn reduce_on_device<T: Element>(&mut self, x: &Buffer<T>, op: Op) -> Result<&Buffer<T>> {
        self.reduce_by(x, T::reduce_def(op))
    }

    /// `x[0] op x[1] op ...` by an operator of your own, whose kernels
    /// `cg_algorithms_kernels::operator_kernels!` stamped in your kernel
    /// crate: CUB's `DeviceReduce::Reduce` with the operator's identity as
    /// its initial value, read back. An empty `x` gives the identity.
    pub fn reduce_with<T: Element>(&mut self, x: &Buffer<T>, op: &OperatorKernels<T>) -> Result<T> {
        if x.is_empty() {
            return Ok(op.identity());
        }
        let gpu = self.gpu;
        let out = self.reduce_by(x, op.reduce())?;
        Ok(gpu.read(out)?[0])
    }

    /// The reduction of `x` by the kernel `def`: one of this crate's or of
    /// an `OperatorKernels`, each `reduce_grid` for one operator.
    fn reduce_by<T: Element>(&mut self, x: &Buffer<T>, def: &'static ReduceDef<T>) -> Result<&Buffer<T>> {
        let n = x.len();
        let blocks = self.capacity(def, THREADS)?.min(n.div_ceil(GRID_SPAN).max(1) as u32);
        let gpu = self.gpu;
        let slot = T::partials(&mut self.scratch.partials);
        if slot.as_ref().is_none_or(|p| p.partials.len() < blocks as usize) {
            *slot = Some(Partials { partials: gpu.zeros::<T>(blocks as usize)?, out: gpu.zeros::<T>(1)? });
        }
        let p = slot.as_mut().expect("made above");
        let kernel = gpu.cooperative_kernel(def)?;
        let launch = kernel.configure(blocks, THREADS)?;
        // SAFETY: x holds n elements and is a whole buffer (its start 256-byte
        // aligned); out holds one and partials one per block (allocated above
        // for at least `blocks`); the launch gives the kernel's own shared
        // memory (its definition's).
        unsafe { launch.launch((&x.slice(..), p.out.slice_mut(..), p.partials.slice_mut(..), n))? };
        Ok(&p.out)
    }
}

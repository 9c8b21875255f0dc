//! Launches captured once and replayed as one: `Gpu::capture`, a CUDA
//! graph on a GPU, the recorded launches on the emulator.

use super::*;

/// Launches captured once and replayed as one (a CUDA graph, instantiated:
/// `cudaGraphExec_t`); see [`Gpu::capture`].
pub struct Graph {
    pub(super) made_by: DeviceKey,
    pub(super) launches: Captured,
}

/// A captured graph, by backend.
pub(crate) enum Captured {
    Cuda(cuda::CudaGraph),
    /// The launches, in capture order, to run again in that order.
    Emulated(Vec<emulated::Recorded>),
}

impl Gpu {
    /// Captures the launches `work` makes into a graph instead of running
    /// them (CUDA stream capture: `cuStreamBeginCapture` on a stream of its
    /// own, since the legacy default stream cannot be captured, then
    /// `cuStreamEndCapture` and `cuGraphInstantiate`). Nothing runs until
    /// [`launch_graph`](Self::launch_graph). Every launch goes through the
    /// same typed calls as outside a capture, so a kernel that calls
    /// `grid.sync()` is captured only as a cooperative launch that fits.
    pub fn capture(&self, work: &mut dyn FnMut() -> Result<()>) -> Result<Graph> {
        Ok(Graph { made_by: self.key, launches: self.backend.capture(work)? })
    }

    /// Queues a captured graph as one launch (`cuGraphLaunch`); inside a
    /// branch of [`in_parallel`](Self::in_parallel), on the branch's stream.
    ///
    /// # Safety
    /// Every buffer the captured launches address is still allocated (a
    /// graph holds their addresses, not the buffers), and each still holds
    /// what those launches' contracts ask. Inside a branch of `in_parallel`,
    /// no other branch of that call uses a buffer the graph writes, or
    /// writes one it reads: the launcher cannot see a graph's buffers, so it
    /// does not refuse such a race itself.
    pub unsafe fn launch_graph(&self, graph: &Graph) -> Result<()> {
        self.owns(graph.made_by, "a captured graph")?;
        self.backend.launch_graph(&graph.launches)
    }

    /// Whether each kernel launch in `graph` is cooperative, as the graph
    /// records it (`cuGraphKernelNodeGetAttribute` with
    /// `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`).
    pub fn graph_cooperative_launches(&self, graph: &Graph) -> Result<Vec<bool>> {
        self.owns(graph.made_by, "a captured graph")?;
        self.backend.graph_cooperative_launches(&graph.launches)
    }
}

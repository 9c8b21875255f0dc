//! The thin unsafe layer: the CUDA driver calls cudarc's safe layer does not
//! offer, each in one small function whose `# Safety` says what its caller
//! must guarantee. Everything else in `device::cuda` uses cudarc's safe API.
//!
//! Private to the crate, as cudarc keeps `sys` and `result` under `safe`:
//! these functions take raw handles and addresses, and only the safe types of
//! [`crate::device`] and [`crate::launch`] may call them.

use crate::error::{Error, Result};
use crate::shape::Shape;
use cudarc::driver::sys;
use std::ffi::c_void;

/// Whether `libcuda` can be loaded (cudarc's `is_culib_present`). Setting
/// `CG_NO_DRIVER=1` makes it answer no, so that what a machine without
/// a driver prints can be tested on one that has it.
pub(crate) fn driver_present() -> bool {
    if std::env::var_os("CG_NO_DRIVER").is_some_and(|v| v == "1") {
        return false;
    }
    // SAFETY: loading the library runs its initializers; that is what using the driver needs anyway.
    unsafe { sys::is_culib_present() }
}

/// Turns off cudarc's per-buffer event tracking (an event record, and a
/// stream wait, per buffer per launch): this program orders its streams
/// itself.
pub(crate) fn single_stream(ctx: &cudarc::driver::CudaContext) {
    // SAFETY: every buffer is allocated, copied and freed on the context's
    // default stream, and every launch goes there too, except in a branch of
    // `Gpu::in_parallel` (or a capture), which orders its own stream against
    // the default one with events: memory work in a branch waits for the
    // branch and the branch for it, frees made in a branch wait for the
    // join, and a buffer made in one branch is refused in another
    // (`device/cuda/memory.rs`, `Cuda::in_order` and `HeldFrees`).
    unsafe { ctx.disable_event_tracking() }
}

/// The CUDA version the driver supports, as `CUDA major.minor` (`cuDriverGetVersion`).
pub(crate) fn driver_version() -> Result<String> {
    let mut v = 0i32;
    // SAFETY: cuDriverGetVersion writes one int.
    unsafe { sys::cuDriverGetVersion(&mut v) }.result().map_err(Error::driver("cuDriverGetVersion"))?;
    Ok(format!("CUDA {}.{}", v / 1000, (v % 1000) / 10))
}

/// `cuLaunchKernelEx`, with `CU_LAUNCH_ATTRIBUTE_COOPERATIVE` when `cooperative`
/// (the driver-API twin of the lesson's `cudaLaunchKernelEx` with
/// `cudaLaunchAttributeCooperative`) and `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`
/// when the shape has clusters, both in the one call.
///
/// # Safety
/// `f` is a live function of the current context and `stream` a live stream
/// of it; `params` points at one value per kernel parameter, each of the
/// parameter's size; and the memory those values address satisfies the
/// kernel's contract for `shape`.
pub(crate) unsafe fn launch_kernel_ex(
    f: sys::CUfunction,
    stream: sys::CUstream,
    shape: Shape,
    cooperative: bool,
    params: &mut [*mut c_void],
) -> Result<(), cudarc::driver::DriverError> {
    let mut attrs = LaunchAttrs::new(shape, cooperative);
    let config = attrs.config(shape, stream);
    // SAFETY: the caller's contract covers `params`; `config` and the
    // attributes it points at live across the call.
    unsafe { sys::cuLaunchKernelEx(&config, f, params.as_mut_ptr(), std::ptr::null_mut()) }.result()
}

/// A launch's attributes: cooperative, cluster dimension.
struct LaunchAttrs {
    attrs: [sys::CUlaunchAttribute; 2],
    count: u32,
}

impl LaunchAttrs {
    fn new(shape: Shape, cooperative: bool) -> LaunchAttrs {
        // SAFETY: CUlaunchAttribute is a plain C struct and union; zero is a valid start.
        let mut attrs: [sys::CUlaunchAttribute; 2] = unsafe { std::mem::zeroed() };
        let mut count = 0;
        if cooperative {
            attrs[count].id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
            attrs[count].value.cooperative = 1;
            count += 1;
        }
        if let Some(c) = shape.cluster {
            attrs[count].id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attrs[count].value.clusterDim.x = c.blocks;
            attrs[count].value.clusterDim.y = 1;
            attrs[count].value.clusterDim.z = 1;
            count += 1;
        }
        LaunchAttrs { attrs, count: count as u32 }
    }

    /// The config of a launch of `shape` on `stream` with these attributes (which must outlive it).
    fn config(&mut self, shape: Shape, stream: sys::CUstream) -> sys::CUlaunchConfig {
        sys::CUlaunchConfig {
            gridDimX: shape.blocks,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: shape.threads_per_block,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: shape.shared_bytes,
            hStream: stream,
            attrs: self.attrs.as_mut_ptr(),
            numAttrs: self.count,
        }
    }
}

/// `cuOccupancyMaxActiveClusters` with the cluster dimension set (cudarc's
/// safe wrapper passes no attributes, which the driver refuses unless the
/// kernel has compile-time cluster dimensions): clusters of `shape.cluster`
/// that fit on the device at once. Sets the kernel's non-portable cluster
/// size attribute first where the shape asks for one.
///
/// # Safety
/// `f` is a live function of the current context.
pub(crate) unsafe fn max_active_clusters(f: sys::CUfunction, shape: Shape) -> Result<u32, cudarc::driver::DriverError> {
    if shape.cluster.is_some_and(|c| c.non_portable) {
        // SAFETY: the caller's contract.
        unsafe { sys::cuFuncSetAttribute(f, sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1) }.result()?;
    }
    let mut attrs = LaunchAttrs::new(shape, false);
    let config = attrs.config(shape, std::ptr::null_mut());
    let mut clusters = 0;
    // SAFETY: `config` and its attributes live across the call.
    unsafe { sys::cuOccupancyMaxActiveClusters(&mut clusters, f, &config) }.result()?;
    Ok(clusters.max(0) as u32)
}

/// `cuEventRecord`, with nothing else around it (cudarc's `CudaEvent::record`
/// also asks the driver for the current context each time, one more driver
/// entry per record inside a timed loop).
///
/// # Safety
/// `event` and `stream` are live and belong to the context current on this thread.
pub(crate) unsafe fn record_event(event: sys::CUevent, stream: sys::CUstream) -> Result<(), cudarc::driver::DriverError> {
    // SAFETY: the caller's contract.
    unsafe { sys::cuEventRecord(event, stream) }.result()
}

/// Sets `count` elements of `pattern.len()` bytes each from `dst` to
/// `pattern`, in stream order: `cuMemsetD8Async`, `cuMemsetD16Async` or
/// `cuMemsetD32Async` for elements of 1, 2 or 4 bytes, and for 8-byte
/// elements `cuMemsetD2D32Async` twice, each setting one 4-byte half of every
/// element (a pitch of 8 bytes, one word wide, `count` rows high).
///
/// # Safety
/// `dst .. dst + pattern.len() * count` lies inside a live allocation of the
/// stream's context, and `dst` is aligned to `pattern.len()` (the driver
/// requires 2-byte alignment for D16 and 4-byte for D32).
pub(crate) unsafe fn memset(dst: sys::CUdeviceptr, pattern: &[u8], count: usize, stream: sys::CUstream) -> Result<(), cudarc::driver::DriverError> {
    let word = |b: &[u8]| u32::from_ne_bytes(b.try_into().expect("four bytes"));
    // SAFETY (each call): the caller's contract.
    unsafe {
        match *pattern {
            [b] => sys::cuMemsetD8Async(dst, b, count, stream).result(),
            [a, b] => sys::cuMemsetD16Async(dst, u16::from_ne_bytes([a, b]), count, stream).result(),
            [_, _, _, _] => sys::cuMemsetD32Async(dst, word(pattern), count, stream).result(),
            [_, _, _, _, _, _, _, _] if count == 0 => Ok(()),
            [_, _, _, _, _, _, _, _] if pattern[..4] == pattern[4..] => sys::cuMemsetD32Async(dst, word(&pattern[..4]), 2 * count, stream).result(),
            [_, _, _, _, _, _, _, _] => {
                sys::cuMemsetD2D32Async(dst, 8, word(&pattern[..4]), 1, count, stream).result()?;
                sys::cuMemsetD2D32Async(dst + 4, 8, word(&pattern[4..]), 1, count, stream).result()
            }
            _ => unreachable!("device elements are 1, 2, 4 or 8 bytes (device::Pod)"),
        }
    }
}

/// Gives the device's default memory pool's unused memory back to the
/// device (`cuMemPoolTrimTo(pool, 0)`): memory freed with `cuMemFreeAsync`
/// stays in the pool, and out of `cuMemGetInfo`'s free count, until then.
pub(crate) fn trim_default_pool(device: sys::CUdevice) -> Result<(), cudarc::driver::DriverError> {
    let mut pool = std::ptr::null_mut();
    // SAFETY: `pool` receives the device's pool; trimming frees only memory no allocation uses.
    unsafe {
        sys::cuDeviceGetDefaultMemPool(&mut pool, device).result()?;
        sys::cuMemPoolTrimTo(pool, 0).result()
    }
}

/// Set once a kernel of this process did not finish within its device's
/// timeout: it cannot be stopped, and freeing page-locked memory may wait
/// for the device, so from then on [`HostMapped`] leaves its memory to the
/// process's exit.
pub(crate) static KERNEL_STUCK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Page-locked host memory that kernels can read and write
/// (`cuMemHostAlloc` with `CU_MEMHOSTALLOC_DEVICEMAP | PORTABLE`): every
/// context of the process reaches it at the same address (unified
/// addressing), so GPUs without peer access share it, and the host can
/// read it after a kernel has trapped and its context is unusable.
pub(crate) struct HostMapped {
    host: *mut u8,
    device: u64,
}

// SAFETY: the allocation is plain memory owned by this value; any thread may
// read it (the GPUs write it concurrently, which callers read as volatile).
unsafe impl Send for HostMapped {}
// SAFETY: as above.
unsafe impl Sync for HostMapped {}

impl HostMapped {
    /// `bytes` of zeroed host-mapped memory; a context must be current.
    pub(crate) fn new(bytes: usize) -> Result<HostMapped> {
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: allocates `bytes`; the pointer is checked by the result.
        unsafe { sys::cuMemHostAlloc(&mut host, bytes.max(4), sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE) }
            .result()
            .map_err(Error::driver("cuMemHostAlloc"))?;
        // SAFETY: `host` is a fresh allocation of at least `bytes`.
        unsafe { std::ptr::write_bytes(host as *mut u8, 0, bytes) };
        let mut device = 0;
        // SAFETY: `host` was allocated with DEVICEMAP above.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0) }.result().map_err(Error::driver("cuMemHostGetDevicePointer"))?;
        Ok(HostMapped { host: host as *mut u8, device })
    }

    /// The address kernels use.
    pub(crate) fn device_address(&self) -> u64 {
        self.device
    }

    /// The host's view of the bytes.
    pub(crate) fn host(&self) -> *mut u8 {
        self.host
    }

    /// The first four words as they are now.
    #[cfg(feature = "barrier-timeout")]
    pub(crate) fn words(&self) -> [u32; 4] {
        // SAFETY: at least four u32 of live host memory; volatile, since the GPU writes them.
        std::array::from_fn(|i| unsafe { (self.host as *const u32).add(i).read_volatile() })
    }
}

impl Drop for HostMapped {
    fn drop(&mut self) {
        if KERNEL_STUCK.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        // SAFETY: allocated by cuMemHostAlloc in `new`, freed once.
        let _ = unsafe { sys::cuMemFreeHost(self.host as *mut c_void) };
    }
}

/// `cuGraphLaunch`: runs an instantiated graph in `stream`, which need not be
/// the stream it was captured from.
///
/// # Safety
/// `exec` is a live graph executable and `stream` a live stream, both of the
/// context current on this thread; the memory its kernels address is live.
pub(crate) unsafe fn graph_launch(exec: sys::CUgraphExec, stream: sys::CUstream) -> Result<(), cudarc::driver::DriverError> {
    // SAFETY: the caller's contract.
    unsafe { sys::cuGraphLaunch(exec, stream) }.result()
}

/// For each kernel node of `graph`, whether its `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`
/// reads back as set (`cuGraphGetNodes`, `cuGraphNodeGetType`,
/// `cuGraphKernelNodeGetAttribute`).
///
/// # Safety
/// `graph` is a live graph of the context current on this thread.
pub(crate) unsafe fn graph_kernel_nodes_cooperative(graph: sys::CUgraph) -> Result<Vec<bool>, cudarc::driver::DriverError> {
    let mut count = 0usize;
    // SAFETY: with a null array, cuGraphGetNodes writes only the count.
    unsafe { sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut count) }.result()?;
    let mut nodes = vec![std::ptr::null_mut(); count];
    // SAFETY: `nodes` holds `count` entries.
    unsafe { sys::cuGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count) }.result()?;
    let mut cooperative = Vec::new();
    for &node in &nodes[..count] {
        let mut kind = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
        // SAFETY: `node` is a node of the live graph.
        unsafe { sys::cuGraphNodeGetType(node, &mut kind) }.result()?;
        if kind != sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL {
            continue;
        }
        // SAFETY: a zeroed attribute value is valid; the driver writes the one asked for.
        let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
        // SAFETY: `node` is a kernel node of the live graph.
        unsafe { sys::cuGraphKernelNodeGetAttribute(node, sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &mut value) }.result()?;
        // SAFETY: the cooperative member is the one this attribute writes.
        cooperative.push(unsafe { value.cooperative } != 0);
    }
    Ok(cooperative)
}

/// A captured graph and its instantiation (`CUgraph`, `CUgraphExec`),
/// destroyed together.
pub(crate) struct GraphExec {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

impl GraphExec {
    /// The captured graph, owned by `self`.
    pub(crate) fn graph(&self) -> sys::CUgraph {
        self.graph
    }

    /// The instantiation, owned by `self`.
    pub(crate) fn exec(&self) -> sys::CUgraphExec {
        self.exec
    }
}

impl GraphExec {
    /// Ends the capture on `stream` (`cuStreamEndCapture`) and instantiates
    /// and uploads what it captured (`cuGraphInstantiateWithFlags`,
    /// `cuGraphUpload`); each failure names its call, so a launch the driver
    /// refuses only at instantiation says so.
    ///
    /// # Safety
    /// `stream` is a live stream of the context current on this thread, in capture.
    pub(crate) unsafe fn end_capture(stream: sys::CUstream) -> Result<Option<GraphExec>> {
        use cudarc::driver::result;
        // SAFETY: the caller's contract.
        let graph = unsafe { result::stream::end_capture(stream) }.map_err(Error::driver("cuStreamEndCapture"))?;
        if graph.is_null() {
            return Ok(None);
        }
        // SAFETY: `graph` was just captured.
        let exec = match unsafe { result::graph::instantiate(graph, sys::CUgraphInstantiate_flags(0)) } {
            Ok(exec) => exec,
            Err(e) => {
                // SAFETY: destroyed once, here, as nothing else holds it.
                let _ = unsafe { result::graph::destroy(graph) };
                return Err(Error::driver("cuGraphInstantiate")(e));
            }
        };
        let g = GraphExec { graph, exec };
        // SAFETY: `exec` is live; the upload is ordered in `stream`.
        unsafe { result::graph::upload(exec, stream) }.map_err(Error::driver("cuGraphUpload"))?;
        Ok(Some(g))
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        use cudarc::driver::result;
        // SAFETY: both were made by `end_capture` and are destroyed once, here.
        unsafe {
            let _ = result::graph::exec_destroy(self.exec);
            let _ = result::graph::destroy(self.graph);
        }
    }
}

//! `DeviceRadixSort`: a stable least-significant-digit radix sort, 8 bits a
//! pass, the way CUB's "onesweep" does it: one cooperative launch counts
//! every pass's digits, then one launch per pass ranks each tile's keys and
//! chains the tiles by decoupled look-back on each digit's count
//! (`cg_algorithms_kernels::sort`).

use crate::{Algorithms, Element, Error, Result, check_u32_count};
use cg_algorithms_kernels::sort as k;
use cg_kernel::kernels::{GridSync, KernelDef, NoGridSync, Param};
use cg_kernel::mem::{In, Out};
use cg_launcher::device::{Buffer, Gpu, Pod, View, ViewMut};
use cg_launcher::launch::ensure_len;
use std::ops::Range;

/// Which way a sort orders its keys, and by which of their bits (CUB's
/// `SortKeys` or `SortKeysDescending`, and its `begin_bit`, `end_bit`).
///
/// ```
/// use cg_algorithms::Order;
/// let by_low_bytes = Order::ASCENDING.bits(0..16); // the low 16 bits only
/// assert_eq!(by_low_bytes.bit_range(), Some(0..16));
/// assert!(Order::DESCENDING.is_descending());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Order {
    descending: bool,
    /// `begin..end`, where given.
    bits: Option<(u32, u32)>,
}

impl Order {
    /// Smallest key first, by every bit.
    pub const ASCENDING: Order = Order { descending: false, bits: None };
    /// Largest key first, by every bit. Equal keys keep their order, as in
    /// an ascending sort (CUB's `SortKeysDescending`).
    pub const DESCENDING: Order = Order { descending: true, bits: None };

    /// The same order by bits `bits` of the key alone (CUB's `begin_bit`,
    /// `end_bit`): bit 0 is the least significant of the bits the sort
    /// orders by, which for a signed or float key are its bits transformed
    /// so that they order as the values do ([`Key`]). Keys equal in those
    /// bits keep their order. An empty range, or one past the key's bits,
    /// is refused by the sort ([`Error::BitRange`]).
    pub const fn bits(self, bits: Range<u32>) -> Order {
        Order { descending: self.descending, bits: Some((bits.start, bits.end)) }
    }

    /// Whether the largest key comes first.
    pub const fn is_descending(&self) -> bool {
        self.descending
    }

    /// The bits it sorts by, where [`bits`](Self::bits) gave them (every
    /// bit of the key where not).
    pub fn bit_range(&self) -> Option<Range<u32>> {
        self.bits.map(|(begin, end)| begin..end)
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for i8 {}
    impl Sealed for u16 {}
    impl Sealed for i16 {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for u64 {}
    impl Sealed for i64 {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}

    /// The bits a key is sorted as, and the kernels of that width.
    pub trait Bits: cg_launcher::device::Pod + super::Param + 'static {
        fn histogram() -> &'static super::HistogramDef<Self>;
        fn keys() -> &'static super::PassKeysDef<Self>;
        fn pairs() -> &'static super::PassPairsDef<Self>;
    }
}

/// A histogram kernel's definition.
type HistogramDef<B> = KernelDef<(In<B>, Out<u32>, Out<u32>, usize, usize, u32), GridSync>;
/// A keys-only pass kernel's definition.
type PassKeysDef<B> = KernelDef<(In<B>, Out<B>, In<u32>, In<u32>, Out<u32>, Out<u32>, Out<u32>, Out<u32>, usize, usize, u32), NoGridSync>;
/// A key-value pass kernel's definition.
type PassPairsDef<B> = KernelDef<(In<B>, Out<B>, In<u32>, Out<u32>, In<u32>, In<u32>, Out<u32>, Out<u32>, Out<u32>, Out<u32>, usize, usize, u32), NoGridSync>;

macro_rules! bits {
    ($($t:ty: $h:ident, $keys:ident, $pairs:ident;)*) => {$(
        impl sealed::Bits for $t {
            fn histogram() -> &'static HistogramDef<$t> {
                &k::$h
            }
            fn keys() -> &'static PassKeysDef<$t> {
                &k::$keys
            }
            fn pairs() -> &'static PassPairsDef<$t> {
                &k::$pairs
            }
        }
    )*};
}
bits! {
    u8: SORT_HISTOGRAM_U8, SORT_PASS_KEYS_U8, SORT_PASS_PAIRS_U8;
    u16: SORT_HISTOGRAM_U16, SORT_PASS_KEYS_U16, SORT_PASS_PAIRS_U16;
    u32: SORT_HISTOGRAM_U32, SORT_PASS_KEYS_U32, SORT_PASS_PAIRS_U32;
    u64: SORT_HISTOGRAM_U64, SORT_PASS_KEYS_U64, SORT_PASS_PAIRS_U64;
}

/// A key the radix sort takes: `u8`, `i8`, `u16`, `i16`, `u32`, `i32`,
/// `u64`, `i64`, `f32` or `f64`. Sealed: each is sorted as its bits, of
/// its own width.
///
/// The sort orders unsigned integers as they are; signed ones with their
/// sign bit flipped, so that negative numbers come first; floats with every
/// bit flipped where the sign is set and the sign bit flipped where it is
/// not (CUB's order): `-inf < -1.0 < -0.0 = +0.0 < 1.0 < +inf`, where
/// `-0.0` and `+0.0` are equal keys that keep their order (as CUB's digits
/// have them), and each NaN where its bits put it: one with the sign bit set
/// before `-inf`, one without it after `+inf`.
pub trait Key: Pod + sealed::Sealed + std::fmt::Debug + 'static {
    /// Bits of the key: what [`Order::bits`] may range over.
    const BITS: u32;
    #[doc(hidden)]
    type Bits: sealed::Bits;
    #[doc(hidden)]
    const FLAGS: u32;
}

macro_rules! keys {
    ($($t:ty: $bits:ty, $flags:expr;)*) => {$(
        impl Key for $t {
            const BITS: u32 = <$bits>::BITS;
            type Bits = $bits;
            const FLAGS: u32 = $flags;
        }
    )*};
}
keys! {
    u8: u8, 0;
    i8: u8, k::SIGNED;
    u16: u16, 0;
    i16: u16, k::SIGNED;
    u32: u32, 0;
    i32: u32, k::SIGNED;
    u64: u64, 0;
    i64: u64, k::SIGNED;
    f32: u32, k::FLOAT;
    f64: u64, k::FLOAT;
}

/// Two buffers of one element type, one of them holding the data (CUB's
/// `DoubleBuffer`): the double-buffer sorts
/// ([`Algorithms::sort_keys_double_buffer`],
/// [`Algorithms::sort_pairs_double_buffer`]) sort the current buffer's
/// elements using the other as their scratch, overwriting both, and leave
/// the sorted elements in whichever buffer the last pass wrote, which then
/// becomes the current one: no copy back, and no scratch of the sort's own
/// for the elements.
///
/// ```
/// use cg_algorithms::{Algorithms, DoubleBuffer, Order};
/// use cg_launcher::device::{EmulatedDevice, EmulatorOptions, Gpu};
///
/// # fn main() -> Result<(), cg_algorithms::Error> {
/// let gpu = Gpu::emulated(EmulatedDevice::T4, EmulatorOptions::default());
/// let mut alg = Algorithms::new(&gpu);
/// let mut keys = DoubleBuffer::new(gpu.upload(&[3u32, 1, 2])?, gpu.zeros(3)?);
/// alg.sort_keys_double_buffer(&mut keys, Order::ASCENDING)?;
/// assert_eq!(gpu.read(keys.current())?, [1, 2, 3]);
/// # Ok(())
/// # }
/// ```
pub struct DoubleBuffer<T> {
    buffers: [Buffer<T>; 2],
    current: usize,
}

impl<T: Pod> DoubleBuffer<T> {
    /// The pair, `current` holding the data. A sort takes `current.len()`
    /// elements, and refuses an `alternate` shorter than that by name.
    pub fn new(current: Buffer<T>, alternate: Buffer<T>) -> DoubleBuffer<T> {
        DoubleBuffer { buffers: [current, alternate], current: 0 }
    }

    /// The buffer that holds the data.
    pub fn current(&self) -> &Buffer<T> {
        &self.buffers[self.current]
    }

    /// The buffer that holds the data, to write.
    pub fn current_mut(&mut self) -> &mut Buffer<T> {
        &mut self.buffers[self.current]
    }

    /// The other buffer.
    pub fn alternate(&self) -> &Buffer<T> {
        &self.buffers[1 - self.current]
    }

    /// The two buffers, the current one first.
    pub fn into_buffers(self) -> (Buffer<T>, Buffer<T>) {
        let [a, b] = self.buffers;
        if self.current == 0 { (a, b) } else { (b, a) }
    }
}

/// What a sort keeps between calls: the digit counts, the look-back's two
/// arrays of words (one per digit and tile), the counts one portion hands
/// the next, and the other buffer of the simple forms' keys and values.
#[derive(Default)]
pub(crate) struct SortScratch {
    hist: Option<Buffer<u32>>,
    status: [Option<Buffer<u32>>; 2],
    carry: [Option<Buffer<u32>>; 2],
    keys: Option<Buffer<u8>>,
    values: Option<Buffer<u8>>,
    /// Elements per pass launch instead of the kernels' portion (a test's
    /// small one, so that several portions run on the emulator).
    portion: Option<usize>,
}

/// A place a pass reads or writes: a caller's buffer, or the sort's own.
enum Slot<'a, T, S> {
    Caller(&'a mut Buffer<T>),
    Own(&'a mut Buffer<S>),
}

impl<T: Pod, S: Pod> Slot<'_, T, S> {
    /// Elements `range` of it, as `U`s (of `T`'s size; the sort's own buffer is bytes).
    fn view<U: Pod>(&self, range: Range<usize>) -> Result<View<'_, U>> {
        Ok(match self {
            Slot::Caller(b) => b.slice(range).cast::<U>()?,
            Slot::Own(b) => b.slice(range.start * size_of::<U>()..range.end * size_of::<U>()).cast::<U>()?,
        })
    }

    /// Its elements, as `U`s, to write.
    fn view_mut<U: Pod>(&mut self) -> Result<ViewMut<'_, U>> {
        Ok(match self {
            Slot::Caller(b) => b.slice_mut(..).cast::<U>()?,
            Slot::Own(b) => b.slice_mut(..).cast::<U>()?,
        })
    }
}

/// Where the passes of one sort read and write: pass `i` writes
/// `slots[i % 2]` and reads `slots[(i + 1) % 2]`, but pass 0 reads `input`
/// where there is one.
struct Route<'a, T, S> {
    input: Option<&'a Buffer<T>>,
    slots: [Slot<'a, T, S>; 2],
}

impl<T: Pod, S: Pod> Route<'_, T, S> {
    /// Pass `i`'s source (elements `range` of it) and destination, as `U`s.
    fn pass<U: Pod>(&mut self, i: usize, range: Range<usize>) -> Result<(View<'_, U>, ViewMut<'_, U>)> {
        let [even, odd] = &mut self.slots;
        let (from, to) = if i.is_multiple_of(2) { (&*odd, even) } else { (&*even, odd) };
        let from = match (i, self.input) {
            (0, Some(input)) => input.slice(range).cast::<U>()?,
            _ => from.view::<U>(range)?,
        };
        Ok((from, to.view_mut::<U>()?))
    }
}

/// Keys per block of the histogram when the input is too short to fill the
/// GPU: fewer blocks, each adding fewer counts to the global ones.
const HISTOGRAM_SPAN: usize = 32 * k::HISTOGRAM_THREADS as usize;

/// The passes a sort by bits `bits` makes.
fn passes(bits: &Range<u32>) -> usize {
    (bits.end - bits.start).div_ceil(k::RADIX_BITS) as usize
}

impl Algorithms<'_> {
    /// `keys_out[..n]` = `keys_in`'s `n` keys in order, stably (equal keys
    /// keep their order): CUB's `DeviceRadixSort::SortKeys` (and
    /// `SortKeysDescending`, with [`Order::DESCENDING`]; `begin_bit` and
    /// `end_bit` with [`Order::bits`]). `keys_in` is left as it was;
    /// `keys_out` holds at least `n` keys, those past `n` left as they were.
    /// One cooperative launch counts the digits of every pass, then one
    /// launch per 8 bits sorts by them ([`Key`] says how signed and float
    /// keys order).
    pub fn sort_keys<K: Key>(&mut self, keys_in: &Buffer<K>, keys_out: &mut Buffer<K>, order: Order) -> Result<()> {
        let n = keys_in.len();
        let bits = self.sort_checks::<K>(n, order.bit_range())?;
        ensure_len("sort_keys", "keys_out", n, keys_out.len())?;
        if n == 0 {
            // Nothing to sort, but the buffers must still be this device's.
            return Ok(self.gpu.copy(&keys_in.slice(..0), keys_out)?);
        }
        let mut own = Self::own(self.gpu, self.scratch.sort.keys.take(), n * size_of::<K>())?;
        let slots = Self::simple_slots(passes(&bits), keys_out, &mut own);
        let sorted = self.sort_by_route::<K, f32>(n, &bits, order.descending, Route { input: Some(keys_in), slots }, None);
        self.scratch.sort.keys = Some(own);
        sorted
    }

    /// `keys_out[..n]` = `keys_in`'s `n` keys in order, stably, and
    /// `values_out[..n]` each key's value from `values_in` moved with it:
    /// CUB's `DeviceRadixSort::SortPairs` (and `SortPairsDescending`).
    /// `keys_in` and `values_in` are left as they were; `values_in` holds
    /// at least `n` values and each output at least `n` elements. As
    /// [`sort_keys`](Self::sort_keys) otherwise.
    pub fn sort_pairs<K: Key, V: Element>(
        &mut self,
        keys_in: &Buffer<K>,
        keys_out: &mut Buffer<K>,
        values_in: &Buffer<V>,
        values_out: &mut Buffer<V>,
        order: Order,
    ) -> Result<()> {
        let n = keys_in.len();
        let bits = self.sort_checks::<K>(n, order.bit_range())?;
        ensure_len("sort_pairs", "keys_out", n, keys_out.len())?;
        ensure_len("sort_pairs", "values_in", n, values_in.len())?;
        ensure_len("sort_pairs", "values_out", n, values_out.len())?;
        if n == 0 {
            self.gpu.copy(&keys_in.slice(..0), keys_out)?;
            return Ok(self.gpu.copy(&values_in.slice(..0), values_out)?);
        }
        let passes = passes(&bits);
        let mut own = Self::own(self.gpu, self.scratch.sort.keys.take(), n * size_of::<K>())?;
        let mut own_values = Self::own(self.gpu, self.scratch.sort.values.take(), 4 * n)?;
        let slots = Self::simple_slots(passes, keys_out, &mut own);
        let values = Route { input: Some(values_in), slots: Self::simple_slots(passes, values_out, &mut own_values) };
        let sorted = self.sort_by_route::<K, V>(n, &bits, order.descending, Route { input: Some(keys_in), slots }, Some(values));
        self.scratch.sort.keys = Some(own);
        self.scratch.sort.values = Some(own_values);
        sorted
    }

    /// [`sort_keys`](Self::sort_keys) of `keys.current()`'s keys, with
    /// `keys.alternate()` as the other buffer the passes write (CUB's
    /// `SortKeys` with a `DoubleBuffer`): both are overwritten, and the
    /// sorted keys end in whichever the last pass wrote, which becomes
    /// `keys.current()`. The alternate holds at least as many keys.
    pub fn sort_keys_double_buffer<K: Key>(&mut self, keys: &mut DoubleBuffer<K>, order: Order) -> Result<()> {
        let n = keys.current().len();
        let bits = self.sort_checks::<K>(n, order.bit_range())?;
        ensure_len("sort_keys_double_buffer", "keys.alternate()", n, keys.alternate().len())?;
        let current = keys.current;
        let [a, b] = &mut keys.buffers;
        let (now, other) = if current == 0 { (a, b) } else { (b, a) };
        if n == 0 {
            return Ok(self.gpu.copy(&now.slice(..0), other)?);
        }
        let route = Route::<K, u8> { input: None, slots: [Slot::Caller(other), Slot::Caller(now)] };
        self.sort_by_route::<K, f32>(n, &bits, order.descending, route, None)?;
        keys.current = (current + passes(&bits)) % 2;
        Ok(())
    }

    /// [`sort_pairs`](Self::sort_pairs) of `keys.current()`'s keys and
    /// `values.current()`'s values, each alternate the other buffer the
    /// passes write (CUB's `SortPairs` with `DoubleBuffer`s): all four are
    /// overwritten, and the sorted keys and values end in the buffers the
    /// last pass wrote, which become the current ones. Each buffer holds at
    /// least as many elements as `keys.current()`.
    pub fn sort_pairs_double_buffer<K: Key, V: Element>(&mut self, keys: &mut DoubleBuffer<K>, values: &mut DoubleBuffer<V>, order: Order) -> Result<()> {
        let call = "sort_pairs_double_buffer";
        let n = keys.current().len();
        let bits = self.sort_checks::<K>(n, order.bit_range())?;
        ensure_len(call, "keys.alternate()", n, keys.alternate().len())?;
        ensure_len(call, "values.current()", n, values.current().len())?;
        ensure_len(call, "values.alternate()", n, values.alternate().len())?;
        let (key_now, value_now) = (keys.current, values.current);
        let [a, b] = &mut keys.buffers;
        let (now, other) = if key_now == 0 { (a, b) } else { (b, a) };
        let [va, vb] = &mut values.buffers;
        let (value_now_buffer, value_other) = if value_now == 0 { (va, vb) } else { (vb, va) };
        if n == 0 {
            self.gpu.copy(&now.slice(..0), other)?;
            return Ok(self.gpu.copy(&value_now_buffer.slice(..0), value_other)?);
        }
        let route = Route::<K, u8> { input: None, slots: [Slot::Caller(other), Slot::Caller(now)] };
        let value_route = Route::<V, u8> { input: None, slots: [Slot::Caller(value_other), Slot::Caller(value_now_buffer)] };
        self.sort_by_route::<K, V>(n, &bits, order.descending, route, Some(value_route))?;
        keys.current = (key_now + passes(&bits)) % 2;
        values.current = (value_now + passes(&bits)) % 2;
        Ok(())
    }

    /// The checks every sort makes before anything else: the count, and the
    /// bit range (every bit of `K` where none is given). Returns the range.
    fn sort_checks<K: Key>(&self, n: usize, bits: Option<Range<u32>>) -> Result<Range<u32>> {
        let bits = bits.unwrap_or(0..K::BITS);
        if bits.start >= bits.end || bits.end > K::BITS {
            return Err(Error::BitRange { begin: bits.start, end: bits.end, key_bits: K::BITS });
        }
        check_u32_count(n)?;
        Ok(bits)
    }

    /// One of the sort's own buffers, of at least `bytes` (a multiple of 8,
    /// so that it holds whole keys of any width): `kept`, where long
    /// enough, else a new one.
    fn own(gpu: &Gpu, kept: Option<Buffer<u8>>, bytes: usize) -> Result<Buffer<u8>> {
        Ok(match kept {
            Some(b) if b.len() >= bytes => b,
            _ => gpu.zeros::<u8>(bytes.div_ceil(8) * 8)?,
        })
    }

    /// The simple form's two places: the caller's output for the last pass,
    /// the sort's own buffer for the one before, so that no copy follows.
    fn simple_slots<'a, T, S>(passes: usize, out: &'a mut Buffer<T>, own: &'a mut Buffer<S>) -> [Slot<'a, T, S>; 2] {
        if passes % 2 == 1 { [Slot::Caller(out), Slot::Own(own)] } else { [Slot::Own(own), Slot::Caller(out)] }
    }

    /// The sort of `n` keys by `bits`: the histogram launch, then each pass
    /// (a launch per portion of the input) along `keys`' route, with
    /// `values`' where given.
    fn sort_by_route<K: Key, V: Pod>(
        &mut self,
        n: usize,
        bits: &Range<u32>,
        descending: bool,
        mut keys: Route<'_, K, u8>,
        mut values: Option<Route<'_, V, u8>>,
    ) -> Result<()> {
        let gpu = self.gpu;
        let key_bytes = size_of::<K>();
        let pairs = values.is_some();
        let flags = K::FLAGS | if descending { k::DESCENDING } else { 0 };
        let tile = k::tile_len(key_bytes, pairs);
        let portion = self.scratch.sort.portion.unwrap_or(k::portion_len(key_bytes, pairs));
        let max_tiles = n.min(portion).div_ceil(tile);
        let words = max_tiles * k::RADIX;
        let passes = passes(bits);

        let s = &mut self.scratch.sort;
        if s.hist.is_none() {
            s.hist = Some(gpu.zeros::<u32>(8 * k::RADIX)?);
        }
        for status in &mut s.status {
            if status.as_ref().is_none_or(|b| b.len() < words) {
                *status = Some(gpu.zeros::<u32>(words)?);
            }
        }
        for carry in &mut s.carry {
            if carry.is_none() {
                *carry = Some(gpu.zeros::<u32>(k::RADIX)?);
            }
        }
        if self.scratch.ticket.is_none() {
            self.scratch.ticket = Some(gpu.zeros::<u32>(1)?);
        }

        // The digit counts of every pass, and the first pass's look-back
        // words cleared.
        let def = <K::Bits as sealed::Bits>::histogram();
        let blocks = self.capacity(def, k::HISTOGRAM_THREADS)?.min(n.div_ceil(HISTOGRAM_SPAN) as u32);
        let s = &mut self.scratch.sort;
        let (hist, status) = (s.hist.as_mut().expect("made above"), s.status[0].as_mut().expect("made above"));
        let kernel = gpu.cooperative_kernel(def)?;
        let launch = kernel.configure(blocks, k::HISTOGRAM_THREADS)?;
        let control = k::histogram_control(bits.start, bits.end, flags);
        let input = keys.pass::<K::Bits>(0, 0..n)?.0;
        // SAFETY: the input holds n keys and is a whole buffer (256-byte
        // aligned); hist holds 8 * RADIX counts, at least 256 per pass; status
        // holds `words`; bits.start < bits.end <= the key's bits (checked by
        // sort_checks); n is below 2^32; the launch gives the kernel's own
        // shared memory; this Algorithms' calls run one after another.
        unsafe { launch.launch((&input, hist.slice_mut(..), status.slice_mut(..), words, n, control))? };

        let mut launches = 0;
        for pass in 0..passes {
            let shift = bits.start + k::RADIX_BITS * pass as u32;
            let width = (bits.end - shift).min(k::RADIX_BITS);
            let mut first = 0;
            while first < n {
                let len = portion.min(n - first);
                let carry_in = if first > 0 { k::CARRY_IN } else { 0 };
                let carry_out = if first + len < n { k::CARRY_OUT } else { 0 };
                let control = k::pass_control(shift, width, flags | carry_in | carry_out);
                let tiles = len.div_ceil(tile) as u32;
                let s = &mut self.scratch.sort;
                let [status_a, status_b] = &mut s.status;
                let (status, clear) = if launches % 2 == 0 { (status_a, status_b) } else { (status_b, status_a) };
                let (status, clear) = (status.as_mut().expect("made above"), clear.as_mut().expect("made above"));
                let [carry_a, carry_b] = &mut s.carry;
                let (carry_from, carry_to) = if (first / portion).is_multiple_of(2) { (carry_a, carry_b) } else { (carry_b, carry_a) };
                let (carry_from, carry_to) = (carry_from.as_ref().expect("made above"), carry_to.as_mut().expect("made above"));
                let hist = s.hist.as_ref().expect("made above").slice(pass * k::RADIX..(pass + 1) * k::RADIX);
                let ticket = self.scratch.ticket.as_mut().expect("made above");
                let (from, to) = keys.pass::<K::Bits>(pass, first..first + len)?;
                // SAFETY (both launches): `from` holds this portion's len > 0
                // keys (values), `to` all n, whose places for this portion's
                // keys hist (this pass's counts over all n) and carry_from
                // (the counts of the portions before, written by the last
                // launch, where CARRY_IN is set) give, and no other launch
                // writes them; carry_to is the other carry buffer, written
                // only where CARRY_OUT is set; one block of PASS_THREADS per
                // tile of this kernel's tile_len; status holds `words` >= 256
                // per tile, all 0 (cleared by the launch before: the
                // histogram, or the pass launch before, which used the other
                // array), and clear is the other array, `words` long; the
                // ticket is 0 (zeroed, and each launch's last ticket sets it
                // back; a failed launch's is replaced); the launch gives the
                // kernel's own shared memory; this Algorithms' calls run one
                // after another.
                let launched = match values.as_mut() {
                    None => unsafe {
                        gpu.kernel(<K::Bits as sealed::Bits>::keys())?.launch(
                            tiles,
                            k::PASS_THREADS,
                            (
                                &from,
                                to,
                                &hist,
                                &carry_from.slice(..),
                                carry_to.slice_mut(..),
                                status.slice_mut(..),
                                clear.slice_mut(..),
                                ticket.slice_mut(..),
                                len,
                                words,
                                control,
                            ),
                        )
                    },
                    Some(values) => {
                        let (values_from, values_to) = values.pass::<u32>(pass, first..first + len)?;
                        unsafe {
                            gpu.kernel(<K::Bits as sealed::Bits>::pairs())?.launch(
                                tiles,
                                k::PASS_THREADS,
                                (
                                    &from,
                                    to,
                                    &values_from,
                                    values_to,
                                    &hist,
                                    &carry_from.slice(..),
                                    carry_to.slice_mut(..),
                                    status.slice_mut(..),
                                    clear.slice_mut(..),
                                    ticket.slice_mut(..),
                                    len,
                                    words,
                                    control,
                                ),
                            )
                        }
                    }
                };
                if launched.is_err() {
                    self.lookback_failed();
                }
                launched?;
                launches += 1;
                first += len;
            }
        }
        Ok(())
    }
}

/// The sort's elements per pass launch, for a test: `Some(len)` (a
/// multiple of the tile) makes every launch take at most `len`, so that an
/// input of a few tiles runs as several portions.
#[cfg(test)]
pub(crate) fn set_portion(alg: &mut Algorithms<'_>, len: Option<usize>) {
    alg.scratch.sort.portion = len;
}

#[cfg(test)]
mod tests {
    use super::*;
    use cg_launcher::device::{EmulatedDevice, EmulatorOptions, Gpu};

    /// Several portions per pass (each launch two tiles, the last 77
    /// keys), with values, descending, by 16 bits (two passes), against the
    /// CPU's stable sort: the counts each portion hands the next, and the
    /// look-back words each launch clears for the next.
    #[test]
    fn portions_chain_their_counts_from_one_launch_to_the_next() {
        let gpu = Gpu::emulated(EmulatedDevice::T4, EmulatorOptions { seed: Some(2), ..Default::default() });
        let mut alg = Algorithms::new(&gpu);
        let tile = k::tile_len(4, true);
        set_portion(&mut alg, Some(2 * tile));
        let n = 4 * tile + 77;
        let keys: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let values: Vec<u32> = (0..n as u32).collect();
        let (kx, vx) = (gpu.upload(&keys).unwrap(), gpu.upload(&values).unwrap());
        let (mut ky, mut vy) = (gpu.zeros::<u32>(n).unwrap(), gpu.zeros::<u32>(n).unwrap());
        alg.sort_pairs(&kx, &mut ky, &vx, &mut vy, Order::DESCENDING.bits(4..20)).unwrap();
        let mut want: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        want.sort_by_key(|&(k, _)| std::cmp::Reverse(k >> 4 & 0xffff));
        let got: Vec<(u32, u32)> = gpu.read(&ky).unwrap().into_iter().zip(gpu.read(&vy).unwrap()).collect();
        assert_eq!(got.iter().zip(&want).position(|(g, w)| g != w), None, "first difference (of {n})");
    }

    /// Every word of both look-back arrays poisoned (each reads as an
    /// inclusive count) between two sorts of three tiles by two passes: the
    /// second is still right, since the histogram launch clears the first
    /// pass's array and each pass launch the next one's.
    #[test]
    fn each_launch_clears_the_look_back_words_of_the_next_whatever_was_there() {
        let gpu = Gpu::emulated(EmulatedDevice::T4, EmulatorOptions { seed: Some(4), ..Default::default() });
        let mut alg = Algorithms::new(&gpu);
        let n = 3 * k::tile_len(4, false) + 11;
        let keys: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let x = gpu.upload(&keys).unwrap();
        let mut y = gpu.zeros::<u32>(n).unwrap();
        let mut want = keys.clone();
        want.sort_by_key(|k| k & 0xffff);
        for poison in [false, true] {
            if poison {
                for status in &mut alg.scratch.sort.status {
                    gpu.fill(status.as_mut().expect("made by the first sort"), u32::MAX).unwrap();
                }
            }
            alg.sort_keys(&x, &mut y, Order::ASCENDING.bits(0..16)).unwrap();
            assert!(gpu.read(&y).unwrap() == want, "poisoned: {poison}");
        }
    }

    /// 2^32 keys are one more than the sorts take (the launches count in
    /// `u32`): refused by name before anything is made. (A buffer that long
    /// is more than the tests allocate, so the check itself is called.)
    #[test]
    fn more_keys_than_u32_counts_are_refused_by_name() {
        let gpu = Gpu::emulated(EmulatedDevice::T4, EmulatorOptions::default());
        let alg = Algorithms::new(&gpu);
        let e = alg.sort_checks::<u8>(1 << 32, None).unwrap_err();
        assert!(matches!(e, Error::TooLong { n: 4_294_967_296, most: 4_294_967_295 }), "{e}");
        assert_eq!(alg.sort_checks::<u8>((1 << 32) - 1, None).unwrap(), 0..8);
        assert!(alg.scratch.sort.hist.is_none(), "made storage before refusing");
    }
}

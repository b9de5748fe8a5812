//! The proving key's points for the GPU prover: read from host memory by
//! each MSM (streamed in chunks), or uploaded once into VRAM and kept
//! there ([`DeviceSrs`]) so a batch, and every later batch of the same
//! circuit, reads them at device bandwidth instead of PCIe bandwidth.

use crate::arith::blst_layout::repr;
use crate::srs::{KeyShape, Parameters, PointCounts, PointSlice, Section, SlicePoints};
use cuzk_sys::msm::{G1AffineRepr, G2AffineRepr, Input};
use cuzk_sys::{DeviceBuffer, HostRegistration, Stream};

/// The five point vectors of a proving key in device memory.
pub struct DeviceSrs {
    pub device: i32,
    h: DeviceBuffer<G1AffineRepr>,
    l: DeviceBuffer<G1AffineRepr>,
    a: DeviceBuffer<G1AffineRepr>,
    b_g1: DeviceBuffer<G1AffineRepr>,
    b_g2: DeviceBuffer<G2AffineRepr>,
}

fn upload<T: Copy>(device: i32, stream: &Stream, host: &[T]) -> Result<DeviceBuffer<T>, cuzk_sys::Error> {
    let mut buf = DeviceBuffer::new(device, host.len())?;
    buf.copy_from_host(stream, 0, host)?;
    Ok(buf)
}

impl DeviceSrs {
    /// Device bytes the points of `params` take.
    pub fn bytes(params: &dyn KeyShape) -> u64 {
        let c = params.counts();
        let g1 = (c.h + c.l + c.a + c.b_g1) as u64;
        g1 * std::mem::size_of::<G1AffineRepr>() as u64 + c.b_g2 as u64 * std::mem::size_of::<G2AffineRepr>() as u64
    }

    /// Allocates and uploads every point (returns when the copies are done).
    pub fn upload(device: i32, params: &Parameters) -> Result<Self, cuzk_sys::Error> {
        let stream = Stream::new(device)?;
        Ok(DeviceSrs {
            device,
            h: upload(device, &stream, repr(&params.h))?,
            l: upload(device, &stream, repr(&params.l))?,
            a: upload(device, &stream, repr(&params.a))?,
            b_g1: upload(device, &stream, repr(&params.b_g1))?,
            b_g2: upload(device, &stream, repr(&params.b_g2))?,
        })
    }

    /// The vectors of a key of `counts` points allocated, to be filled
    /// slice by slice ([`Self::fill`]) as a streamed read hands the points
    /// out; used once every point is in.
    pub fn allocate(device: i32, counts: PointCounts) -> Result<Self, cuzk_sys::Error> {
        Ok(DeviceSrs {
            device,
            h: DeviceBuffer::new(device, counts.h)?,
            l: DeviceBuffer::new(device, counts.l)?,
            a: DeviceBuffer::new(device, counts.a)?,
            b_g1: DeviceBuffer::new(device, counts.b_g1)?,
            b_g2: DeviceBuffer::new(device, counts.b_g2)?,
        })
    }

    /// Copies `slice` into its vector at its place (returns when the copy
    /// is done); a slice beyond the vector's end is an error.
    pub fn fill(&mut self, stream: &Stream, slice: &PointSlice<'_>) -> Result<(), cuzk_sys::Error> {
        match (slice.section, slice.points) {
            (Section::H, SlicePoints::G1(p)) => self.h.copy_from_host(stream, slice.first, repr(p)),
            (Section::L, SlicePoints::G1(p)) => self.l.copy_from_host(stream, slice.first, repr(p)),
            (Section::A, SlicePoints::G1(p)) => self.a.copy_from_host(stream, slice.first, repr(p)),
            (Section::BG1, SlicePoints::G1(p)) => self.b_g1.copy_from_host(stream, slice.first, repr(p)),
            (Section::BG2, SlicePoints::G2(p)) => self.b_g2.copy_from_host(stream, slice.first, repr(p)),
            (section, _) => Err(cuzk_sys::Error::invalid(format!("points of the wrong group for section {}", section.name()))),
        }
    }

    /// The points' bytes read back from the device, vector by vector (H,
    /// L, A, B_G1, B_G2): for tests that compare two copies.
    pub fn download(&self) -> Result<[Vec<u8>; 5], cuzk_sys::Error> {
        let stream = Stream::new(self.device)?;
        Ok([
            download(&stream, &self.h)?,
            download(&stream, &self.l)?,
            download(&stream, &self.a)?,
            download(&stream, &self.b_g1)?,
            download(&stream, &self.b_g2)?,
        ])
    }
}

fn download<const N: usize>(stream: &Stream, buf: &DeviceBuffer<[u64; N]>) -> Result<Vec<u8>, cuzk_sys::Error> {
    let mut host = vec![[0u64; N]; buf.len()];
    buf.copy_to_host(stream, 0, &mut host)?;
    Ok(host.iter().flatten().flat_map(|w| w.to_ne_bytes()).collect())
}

/// Whether a proving key's points are page-locked in host memory.
#[derive(Debug)]
pub enum HostPinning {
    /// Streamed MSMs upload them by direct DMA.
    Pinned { bytes: u64, millis: u64 },
    /// cudaHostRegister refused (e.g. a memory-lock limit): uploads are
    /// staged through pinned slots by host threads, as without pinning.
    Failed(String),
}

struct PinnedPoints {
    _regions: Vec<HostRegistration>,
}

/// Vectors below this stay pageable: they gain little, and small vectors
/// can share pages with other allocations, which one registration per
/// range cannot handle.
const PIN_FROM_BYTES: usize = 64 << 20;

/// Page-locks the point vectors of `params` in host memory, once per
/// proving key (the first caller pins, later ones get its outcome), for as
/// long as `params` lives: chunked MSMs from host memory then upload at
/// DMA speed, without host threads copying. The memory is the SRS's own,
/// so nothing is allocated.
pub fn pin_host_points(params: &Parameters) -> &HostPinning {
    let slot = params.host_pin.get_or_init(|| {
        let t = std::time::Instant::now();
        let mut regions = Vec::new();
        let mut pin = |bytes: &[u8]| -> Result<(), cuzk_sys::Error> {
            if bytes.len() >= PIN_FROM_BYTES {
                // The registration lives in `params.host_pin`, which drops
                // before the vectors (its field comes first).
                regions.push(unsafe { HostRegistration::new(bytes)? });
            }
            Ok(())
        };
        let outcome = [as_bytes(&params.h), as_bytes(&params.l), as_bytes(&params.a), as_bytes(&params.b_g1), as_bytes(&params.b_g2)]
            .into_iter()
            .try_for_each(&mut pin);
        let pinning = match outcome {
            Ok(()) => HostPinning::Pinned { bytes: regions.iter().map(|r| r.bytes() as u64).sum(), millis: t.elapsed().as_millis() as u64 },
            Err(e) => {
                regions.clear();
                HostPinning::Failed(e.to_string())
            }
        };
        match &pinning {
            HostPinning::Pinned { bytes: 0, .. } => {
                log::debug!("SRS points left pageable: every vector under {} MiB", PIN_FROM_BYTES >> 20)
            }
            HostPinning::Pinned { bytes, millis } => log::info!("SRS points page-locked in host memory bytes={bytes} ms={millis}"),
            HostPinning::Failed(e) => log::warn!("SRS points not page-locked (uploads staged instead): {e}"),
        }
        Box::new((pinning, PinnedPoints { _regions: regions }))
    });
    // Only this function fills the slot; anything else there pins nothing.
    static OTHER: HostPinning = HostPinning::Failed(String::new());
    slot.downcast_ref::<(HostPinning, PinnedPoints)>().map_or(&OTHER, |(p, _)| p)
}

fn as_bytes<T: Copy>(v: &[T]) -> &[u8] {
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// The point vectors of a proving key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Points {
    H,
    L,
    A,
    BG1,
}

/// The points of one G1 query in device memory, where the rest of the
/// proving key stays in host memory: on a card with room for a query's
/// points beside the circuit's matrices and its working set, but not for
/// the whole SRS, the query whose MSM runs alone after the H MSM (A: its
/// upload, 12.5 GB at 2^27, is what that MSM waits for) reads them at
/// device bandwidth.
pub struct DeviceQuery {
    pub device: i32,
    pub which: Points,
    points: DeviceBuffer<G1AffineRepr>,
}

impl DeviceQuery {
    /// Device bytes of `which`'s points in a key of `params`'s shape.
    pub fn bytes(params: &dyn KeyShape, which: Points) -> u64 {
        let c = params.counts();
        let n = match which {
            Points::H => c.h,
            Points::L => c.l,
            Points::A => c.a,
            Points::BG1 => c.b_g1,
        };
        (n * std::mem::size_of::<G1AffineRepr>()) as u64
    }

    /// Allocates and uploads `which`'s points (returns when the copy is
    /// done).
    pub fn upload(device: i32, params: &Parameters, which: Points) -> Result<Self, cuzk_sys::Error> {
        let stream = Stream::new(device)?;
        Ok(DeviceQuery { device, which, points: upload(device, &stream, repr(host_g1(params, which)))? })
    }
}

fn host_g1(p: &Parameters, which: Points) -> &[blstrs::G1Affine] {
    match which {
        Points::H => &p.h,
        Points::L => &p.l,
        Points::A => &p.a,
        Points::BG1 => &p.b_g1,
    }
}

/// Where the MSMs read the proving key's points from.
#[derive(Clone, Copy)]
pub enum SrsPoints<'a> {
    Host(&'a Parameters),
    Device(&'a DeviceSrs),
    /// Host memory but for one query resident on the device.
    HostBut(&'a Parameters, &'a DeviceQuery),
}

impl<'a> SrsPoints<'a> {
    /// `range` of one G1 point vector.
    pub fn g1(&self, which: Points, range: std::ops::Range<usize>) -> Input<'a, G1AffineRepr> {
        match *self {
            SrsPoints::HostBut(_, q) if q.which == which => Input::Device { buf: &q.points, offset: range.start, len: range.len() },
            SrsPoints::Host(p) | SrsPoints::HostBut(p, _) => Input::Host(repr(&host_g1(p, which)[range])),
            SrsPoints::Device(d) => {
                let buf = match which {
                    Points::H => &d.h,
                    Points::L => &d.l,
                    Points::A => &d.a,
                    Points::BG1 => &d.b_g1,
                };
                Input::Device { buf, offset: range.start, len: range.len() }
            }
        }
    }

    /// `range` of the B_G2 points.
    pub fn g2(&self, range: std::ops::Range<usize>) -> Input<'a, G2AffineRepr> {
        match *self {
            SrsPoints::Host(p) | SrsPoints::HostBut(p, _) => Input::Host(repr(&p.b_g2[range])),
            SrsPoints::Device(d) => Input::Device { buf: &d.b_g2, offset: range.start, len: range.len() },
        }
    }

    /// Whether every point is on the device (the plan's
    /// [`PointsAt::Device`](super::gpu_prover::plan::PointsAt)).
    pub fn on_device(&self) -> bool {
        matches!(self, SrsPoints::Device(_))
    }
}

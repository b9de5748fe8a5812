//! The plan of one GPU proving call: where each circuit's H term runs,
//! where the MSMs read their points and scalars, which MSMs run beside the
//! H MSM and in which memory, what is uploaded while what runs, and how
//! the MSMs are chunked. Made once, before anything runs, from what the
//! request is and how much VRAM it may use ([`Plan::choose`], no device
//! needed); [`GpuProver::run`](super::GpuProver::run) executes any plan.
//!
//! The regimes, and why each choice:
//! - H term on the device whenever its three buffers fit with room for an
//!   MSM beside them: h stays there for the H MSM, and the witness reuses
//!   the buffers after it. Else on the CPU.
//! - The SRS resident in VRAM and room for a second MSM workspace: the L,
//!   A and B MSMs run on a second thread while the H MSM runs, in that
//!   workspace ([`Queries::BesideH`]): each fills the other's phases that
//!   leave the multiply pipe idle (sorts, bucket reductions, host round
//!   trips). Not during the H term: the NTTs are bound by memory
//!   bandwidth, which the MSMs' sorts take from them.
//! - The SRS resident, chunked MSMs and no room for a second workspace
//!   (an 80 GB card at 2^27, beside the SRS and the matrices): L, then B,
//!   beside the H MSM in the H term's idle third buffer
//!   ([`Queries::InHScratch`]), A after it. Whole MSMs (a card with room
//!   for one whole working set but not a second) run after H: a query
//!   chunked into the third buffer then costs more than it overlaps.
//! - The SRS streamed from host memory: L (then B) runs beside the H MSM in
//!   the H term's idle third buffer ([`Queries::InHScratch`]): the H MSM is
//!   bound by arithmetic, L by its point uploads. No VRAM of its own. The
//!   H MSM then runs in chunks that fit one H buffer too, however much
//!   VRAM the call has: beside a whole H MSM (~32 GiB of workspace at
//!   2^27) L took twice as long as beside a chunked one, and a 2^27
//!   partition 2.28 s on an H100 without a limit against 1.96 s under 16
//!   GiB, where the chunks fit one buffer; a card with more VRAM than 16
//!   GiB and less than the SRS resident needs got the slower plan.
//!   The executor fits the plan to the device before it runs: a choice
//!   that does not apply there (a buffer too small for L's chunks, say) is
//!   dropped, and the plan as it runs is what is logged. The chunks of one
//!   H buffer come with L in it: a small circuit (a WinningPoSt) whose
//!   buffer holds no chunk worth running L in keeps its MSMs whole.
//! - Streamed, and a batch of [`BATCH_MSMS_FROM_CIRCUITS`] or more: every
//!   circuit's H first, then each query as one batch MSM over all circuits
//!   ([`Queries::Batched`]), so each SRS chunk crosses PCIe once per batch.
//! - Several circuits and room for a second set of H buffers: the next
//!   circuit's a, b, c upload while this one runs its MSMs
//!   ([`NextInputs::SecondHBuffers`]). The batch path needs none: it
//!   uploads the next b and c beside each H MSM in the buffers it frees.
//! - Less VRAM than the whole working set (a VRAM limit, a small card):
//!   MSMs chunked to the VRAM left after the H buffers ([`Chunks::Within`]).
//! - The circuits' PCE resident on the device (a `GpuPce`) and room for z
//!   (one Fr per variable) beside the working set: a, b, c computed there
//!   from the witness ([`HInputs::SpmvOnDevice`]) instead of crossing PCIe
//!   (12.9 GB per 2^27 circuit, against ~4 GB of witness); z stays for
//!   the call, and the L, A and B MSMs' witness is copied from it on the
//!   device. Circuits that carry only their witness take z out of the
//!   grant where it is smaller than a whole working set, their MSMs
//!   chunked within the rest: their alternative is a, b, c computed on the
//!   host, three times the witness in host memory that the engine did not
//!   reserve for them. Under a VRAM limit that leaves no room for z even
//!   then, a, b, c are uploaded ([`HInputs::Uploaded`]; computed on the
//!   host first for circuits that carry only their witness).
//! - No room for the matrices beside a working set (a 16 GiB card), one
//!   circuit that carries its witness only, and room for z, two H buffers
//!   and a staging area: the matrices stream from host memory through the
//!   staging area ([`HInputs::SpmvStreamed`]) and the H term is formed in
//!   two buffers (a and b transformed and multiplied, then c computed into
//!   b's); z is freed and the third buffer allocated after it, so the rest
//!   of the call runs as with a, b, c uploaded. Neither the CPU SpMV nor
//!   the 12.9 GB upload of a, b, c per 2^27 circuit: ~7 GB of matrices by
//!   DMA and the witness.

use super::{BatchedMsms, BATCH_MSMS_FROM_CIRCUITS};
use cuzk_sys::msm::MsmOptions;
use std::fmt;

/// Where the SRS points of the MSMs are read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointsAt {
    /// A copy resident in VRAM.
    Device,
    /// Host memory, uploaded chunk by chunk by every MSM.
    Host,
}

/// Where the H term's NTTs run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HTerm {
    /// On the device, in one set of H buffers; h feeds the H MSM there and
    /// the aux witness is uploaded into the freed buffers after it.
    Device,
    /// On the CPU (no room for the H buffers); h and the witness's scalars
    /// are uploaded by their MSMs.
    Cpu,
}

/// Where the H term's inputs a, b, c come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HInputs {
    /// Uploaded from host memory (computed there first by the CPU SpMV for
    /// an assignment that carries its witness only).
    Uploaded,
    /// Computed on the device from the witness, uploaded once into z, and
    /// the circuits' resident matrices.
    SpmvOnDevice,
    /// Computed on the device from the witness and the matrices streamed
    /// from host memory, the H term formed in two buffers; one circuit.
    SpmvStreamed,
}

/// How the L, A, B_G1 and B_G2 MSMs run relative to the H MSM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queries {
    /// After the H MSM, in its workspace.
    AfterH,
    /// On a second thread while the H MSM runs, in a workspace of their own
    /// (points resident in VRAM; from host memory they run after the H MSM).
    BesideH,
    /// These, on a second thread while the H MSM runs, in the H term's
    /// third buffer (idle until A's scalars are compacted into it); the
    /// others after the H MSM.
    InHScratch(Scratch),
    /// Points from host memory and a batch: every circuit's H term and H
    /// MSM, then L, A, B_G1 and B_G2 each as batch MSMs over every circuit
    /// (points resident, or one circuit: circuit by circuit, after H).
    Batched(BatchSize),
}

/// The query MSMs that run in the H term's third buffer. The planner asks
/// for both; [`GpuProver::fit`](super::GpuProver::fit) keeps each only
/// where its plan in that buffer has chunks of 2^22 points or at least
/// half those it would get after the H MSM (every chunk adds a pass over
/// the buckets, so with much smaller chunks an MSM costs more beside H
/// than the overlap saves).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scratch {
    /// L alone (B's plan after L's compaction is too small).
    L,
    /// L, then B_G1 and B_G2, B's compacted scalars at the start of the
    /// buffer and the rest their workspace.
    LAndB,
}

/// How many circuits one batch MSM call takes, and its chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchSize {
    /// The most that fit a workspace of this many bytes
    /// ([`BatchedMsms::within`]).
    Within(u64),
    /// These (tests, to cover several calls and small chunks).
    Exactly(BatchedMsms),
}

/// What is uploaded for the next circuit while this one runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextInputs {
    /// Each circuit's a, b, c upload when its turn comes.
    WhenDue,
    /// A second set of H buffers: circuit i + 1's a, b, c upload while
    /// circuit i runs its MSMs.
    SecondHBuffers,
}

/// How the MSMs are cut to fit VRAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chunks {
    /// Each MSM whole (its default plan: chunks of up to 2^29 points).
    Whole,
    /// Every MSM's workspace within this many bytes.
    Within(u64),
    /// These options for every MSM (tests, to cover chunking).
    Exactly(MsmOptions),
}

/// One proving call's plan (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub circuits: usize,
    pub points: PointsAt,
    pub h: HTerm,
    pub inputs: HInputs,
    pub queries: Queries,
    pub next: NextInputs,
    pub chunks: Chunks,
    /// z (of [`HInputs::SpmvOnDevice`]) is held in the call's grant, the
    /// MSMs chunked within the rest, rather than borrowed beside a whole
    /// working set or brought by a pre-staged circuit 0.
    pub z_in_grant: bool,
}

/// The VRAM sizes a plan is made from, for one request on one card.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sizes {
    /// One set of H buffers (a, b, c of the circuits' domain).
    pub h_bytes: u64,
    /// The largest MSM's workspace, whole, scalars from the host and points
    /// from where they are (the device where the SRS is resident; with
    /// `h_bytes`, what a call needs at least to run unchunked).
    pub msm_bytes: u64,
    /// The query MSMs' own workspace, points and scalars on the device
    /// ([`Queries::BesideH`]).
    pub query_bytes: u64,
    /// The smallest MSM workspace worth running beside the H buffers
    /// (chunks of 2^20 points); below it, the H term goes to the CPU.
    pub min_msm_bytes: u64,
    /// The witness z = inputs ‖ aux on the device, for the SpMV.
    pub z_bytes: u64,
    /// What a, b, c by the streamed SpMV take at their peak: two H
    /// buffers, z and the staging area (0: no streamed matrices).
    pub streamed_bytes: u64,
}

/// What the request is and what VRAM it may use.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub circuits: usize,
    pub srs_resident: bool,
    /// Circuit 0's a, b, c are in H buffers already (pre-staged), and how
    /// they came there (by the SpMV: its z is held in `granted`).
    pub first_staged: Option<HInputs>,
    /// The circuits' matrices are resident on this device (a GpuPce).
    pub pce_resident: bool,
    /// The circuits' matrices can stream from host memory to this device
    /// (for [`HInputs::SpmvStreamed`]).
    pub pce_streamed: bool,
    /// The circuits carry their witness only: a, b, c come from the SpMV,
    /// on the device or else on the host.
    pub witness_only: bool,
    /// Bytes this call holds: a reservation of at least `h_bytes +
    /// msm_bytes`, or a smaller grant under a VRAM limit.
    pub granted: u64,
    /// Free VRAM beyond `granted` that the plan may borrow for a second
    /// set of H buffers or a query workspace (0: none).
    pub spare: u64,
    pub sizes: Sizes,
}

impl Plan {
    /// The plan for `req` (see the module's documentation for each choice).
    pub fn choose(req: &Request) -> Plan {
        let s = req.sizes;
        let points = if req.srs_resident { PointsAt::Device } else { PointsAt::Host };
        // A circuit 0 staged by the SpMV holds its z in the grant (staged
        // with its whole working set, or its witness alone ahead of it).
        let z_held = if req.first_staged == Some(HInputs::SpmvOnDevice) { s.z_bytes } else { 0 };
        let full = req.granted >= s.h_bytes.saturating_add(s.msm_bytes).saturating_add(z_held);
        // A pre-staged first circuit has its H buffers already.
        let h = if req.first_staged.is_some() || h_term_fits(&s, req.granted) { HTerm::Device } else { HTerm::Cpu };
        let mut spare = if full { req.spare } else { 0 };
        // z beside a whole working set (its part beyond the grant
        // borrowed), else out of the grant for circuits that carry their
        // witness only (see the module's documentation).
        let spmv = h == HTerm::Device && req.pce_resident;
        let (inputs, z_in_grant) = match req.first_staged {
            Some(HInputs::SpmvOnDevice) => (HInputs::SpmvOnDevice, false),
            _ if spmv && full && req.z_room() >= s.z_bytes => {
                spare -= s.z_bytes.saturating_sub(req.surplus());
                (HInputs::SpmvOnDevice, false)
            }
            _ if spmv && req.witness_only && req.z_fits_in_grant() => (HInputs::SpmvOnDevice, true),
            _ if req.streams() && h == HTerm::Device => (HInputs::SpmvStreamed, false),
            _ => (HInputs::Uploaded, false),
        };
        let chunks = match (full && !z_in_grant, h) {
            (true, _) => Chunks::Whole,
            (false, HTerm::Device) => req.chunks_beside_h(z_in_grant || z_held > 0),
            (false, HTerm::Cpu) => Chunks::Within(req.granted),
        };
        // A second set of H buffers computed by the SpMV has its own z.
        let second_h = s.h_bytes + if inputs == HInputs::SpmvOnDevice { s.z_bytes } else { 0 };
        let batched = points == PointsAt::Host && req.circuits >= BATCH_MSMS_FROM_CIRCUITS;
        let queries = if batched {
            // The batch MSMs run after the H buffers are freed: all of the grant.
            Queries::Batched(BatchSize::Within(req.granted))
        } else if h == HTerm::Cpu {
            Queries::AfterH
        } else if points == PointsAt::Host {
            Queries::InHScratch(Scratch::LAndB)
        } else {
            Queries::AfterH // BesideH below, if its workspace fits
        };
        let next = if !batched && h == HTerm::Device && req.circuits >= 2 && spare >= second_h {
            spare -= second_h;
            NextInputs::SecondHBuffers
        } else {
            NextInputs::WhenDue
        };
        let beside = h == HTerm::Device && points == PointsAt::Device && spare >= s.query_bytes;
        let queries = if queries == Queries::AfterH && beside { Queries::BesideH } else { queries };
        let queries = in_scratch_where_chunked(points, h, queries, chunks);
        Plan { circuits: req.circuits, points, h, inputs, queries, next, chunks, z_in_grant }
    }

    /// The plan for `req` and what it borrows beyond the grant, reserved
    /// by `reserve` (bytes to a reservation); where that fails (another
    /// call took the room meanwhile), the plan without borrowing.
    pub fn choose_and_borrow<R>(req: &Request, reserve: impl FnOnce(u64) -> Option<R>) -> (Plan, Option<R>) {
        let plan = Plan::choose(req);
        match plan.borrowed(req) {
            0 => (plan, None),
            bytes => match reserve(bytes) {
                Some(r) => (plan, Some(r)),
                None => (plan.without_borrowing(req), None),
            },
        }
    }

    /// VRAM the plan takes beyond the call's grant (borrowed from
    /// `req.spare`).
    pub fn borrowed(&self, req: &Request) -> u64 {
        let sizes = &req.sizes;
        let spmv = self.inputs == HInputs::SpmvOnDevice;
        let z = if spmv && req.first_staged != Some(HInputs::SpmvOnDevice) && !self.z_in_grant {
            sizes.z_bytes.saturating_sub(req.surplus())
        } else {
            0
        };
        let second_h = match self.next {
            NextInputs::SecondHBuffers => sizes.h_bytes + if spmv { sizes.z_bytes } else { 0 },
            NextInputs::WhenDue => 0,
        };
        let queries = if self.queries == Queries::BesideH { sizes.query_bytes } else { 0 };
        z + second_h + queries
    }

    /// The plan as it runs on a device that resolved its H term's inputs
    /// to `inputs` (the SpMV only where its matrices are on that device,
    /// the streamed one for one circuit) and keeps `scratch` of the queries
    /// in the H term's third buffer (None: L does not run there; asked
    /// only of a plan that puts them there with the H term on the device),
    /// `one_buffer` the chunks of one H buffer where they apply
    /// ([`chunks_within_third_buffer`]): the choices that do not apply
    /// dropped. A second MSM workspace ([`Queries::BesideH`]) needs the
    /// points resident and the H term on the device; batch MSMs the points
    /// from host memory and two circuits; a second set of H buffers the H
    /// term on the device, two circuits and no batch; z in the grant the
    /// SpMV on the device. [`Plan::choose`] makes no plan this changes but
    /// for the device's answers; a plan made by hand may ask for more.
    pub fn as_fitted(&self, inputs: HInputs, scratch: Option<Scratch>, one_buffer: Option<Chunks>) -> Plan {
        let (host_points, h_on_device, several) = (self.points == PointsAt::Host, self.h == HTerm::Device, self.circuits >= 2);
        let queries = match self.queries {
            Queries::Batched(_) if host_points && several => self.queries,
            Queries::BesideH if !host_points && h_on_device => self.queries,
            Queries::InHScratch(_) if h_on_device => scratch.map_or(Queries::AfterH, Queries::InHScratch),
            _ => Queries::AfterH,
        };
        let chunks = match (queries, one_buffer) {
            (Queries::InHScratch(_), Some(capped)) => capped,
            _ => self.chunks,
        };
        let batched = matches!(queries, Queries::Batched(_));
        let next = match self.next {
            NextInputs::SecondHBuffers if h_on_device && several && !batched => self.next,
            _ => NextInputs::WhenDue,
        };
        let z_in_grant = self.z_in_grant && inputs == HInputs::SpmvOnDevice;
        Plan { inputs, queries, next, z_in_grant, chunks, ..*self }
    }

    /// The same plan without what needs borrowed VRAM (where borrowing it
    /// failed).
    pub fn without_borrowing(self, req: &Request) -> Plan {
        let queries = if self.queries == Queries::BesideH { Queries::AfterH } else { self.queries };
        let spmv = self.inputs == HInputs::SpmvOnDevice;
        let (inputs, chunks, z_in_grant) = match req.first_staged {
            Some(staged) => (staged, self.chunks, self.z_in_grant),
            None if !spmv || self.z_in_grant || req.surplus() >= req.sizes.z_bytes => (self.inputs, self.chunks, self.z_in_grant),
            None if req.witness_only && req.z_fits_in_grant() => (HInputs::SpmvOnDevice, req.chunks_beside_h(true), true),
            None if req.streams() && self.h == HTerm::Device => (HInputs::SpmvStreamed, self.chunks, false),
            None => (HInputs::Uploaded, self.chunks, false),
        };
        let queries = in_scratch_where_chunked(self.points, self.h, queries, chunks);
        Plan { next: NextInputs::WhenDue, queries, inputs, chunks, z_in_grant, ..self }
    }
}

/// Whether `plan`'s MSMs run in chunks of one H buffer
/// ([`within_one_buffer`]): the points from host memory and L (and B)
/// beside the H MSM in the H term's third buffer, where the executor keeps
/// L there (see the module's documentation).
pub fn chunks_within_third_buffer(plan: &Plan) -> bool {
    matches!(plan.queries, Queries::InHScratch(_)) && plan.points == PointsAt::Host && plan.h == HTerm::Device
}

/// `chunks` capped at one H buffer of `bytes` (the third, where L runs
/// beside the H MSM with the points from host memory: see the module's
/// documentation); chunk options given exactly stay.
pub fn within_one_buffer(chunks: Chunks, bytes: u64) -> Chunks {
    match chunks {
        Chunks::Whole => Chunks::Within(bytes),
        Chunks::Within(b) => Chunks::Within(b.min(bytes)),
        c @ Chunks::Exactly(_) => c,
    }
}

/// `queries`, or with the points resident and the MSMs chunked, L and B in
/// the H term's third buffer where they would run after the H MSM (no room
/// for a workspace of their own; whole, they run faster after H).
fn in_scratch_where_chunked(points: PointsAt, h: HTerm, queries: Queries, chunks: Chunks) -> Queries {
    match (queries, chunks) {
        (Queries::AfterH, Chunks::Within(_)) if points == PointsAt::Device && h == HTerm::Device => Queries::InHScratch(Scratch::LAndB),
        (q, _) => q,
    }
}

impl Request {
    /// The grant beyond one whole working set (H buffers and the largest
    /// MSM).
    fn surplus(&self) -> u64 {
        self.granted.saturating_sub(self.sizes.h_bytes.saturating_add(self.sizes.msm_bytes))
    }

    /// Where z can go: the grant's surplus and the spare VRAM.
    fn z_room(&self) -> u64 {
        self.surplus().saturating_add(self.spare)
    }

    /// One witness-only circuit whose matrices stream to this device, and
    /// a grant that holds the streamed SpMV's peak.
    fn streams(&self) -> bool {
        self.pce_streamed
            && self.witness_only
            && self.circuits == 1
            && self.sizes.streamed_bytes > 0
            && self.sizes.streamed_bytes <= self.granted
    }

    /// The grant holds the H buffers, z and the smallest MSM worth running.
    fn z_fits_in_grant(&self) -> bool {
        let s = &self.sizes;
        self.granted >= s.h_bytes.saturating_add(s.z_bytes).saturating_add(s.min_msm_bytes)
    }

    /// The MSMs' chunks beside the H buffers in the grant (and z, where
    /// it is taken out of the grant).
    fn chunks_beside_h(&self, z_in_grant: bool) -> Chunks {
        let z = if z_in_grant { self.sizes.z_bytes } else { 0 };
        Chunks::Within(self.granted.saturating_sub(self.sizes.h_bytes).saturating_sub(z))
    }
}

/// Whether `bytes` of VRAM hold the H buffers beside the smallest MSM
/// workspace worth running there: a plan within them computes the H term
/// on the device.
pub fn h_term_fits(sizes: &Sizes, bytes: u64) -> bool {
    sizes.h_bytes.saturating_add(sizes.min_msm_bytes) <= bytes
}

/// VRAM a call may borrow beyond its grant of `granted` bytes where the
/// budget has `free` bytes free beside it: all but one more working set of
/// `granted` bytes, which the device's next partition (another worker's)
/// pre-stages in while this one computes. A pre-staged partition skips its
/// witness upload and SpMV inside the compute lock, about a quarter of its
/// compute phase; what borrowing buys (the query MSMs beside the H MSM, a
/// second set of H buffers) is worth a few percent.
pub fn borrowable(free: u64, granted: u64) -> u64 {
    free.saturating_sub(granted)
}

/// Whether a circuit's matrices (`matrices` bytes on the device) are kept
/// resident on a card whose VRAM budget is `budget`: beside the resident
/// SRS by the rule that keeps it there (`resident_srs`: its bytes and the
/// smallest working set it is kept for, see [`srs_resident`]), else
/// beside one working set with the points from host memory
/// (`working_from_host`: the H buffers, z, and MSMs chunked within one H
/// buffer, as they run where L and B are beside the H MSM). Else a, b, c
/// are better uploaded or the matrices streamed ([`matrices_streamed`]).
pub fn matrices_resident(budget: u64, matrices: u64, resident_srs: Option<(u64, u64)>, working_from_host: u64) -> bool {
    match resident_srs {
        Some((srs_bytes, min_working)) => srs_resident(budget, matrices, srs_bytes, min_working),
        None => matrices.saturating_add(working_from_host) <= budget,
    }
}

/// Whether a card whose VRAM budget is `budget`, keeping a circuit's
/// matrices (`matrices` bytes; 0 where they are not resident) but not its
/// SRS, keeps the points of the query that runs after the H MSM (A,
/// `query_bytes`) resident too: where they fit beside the matrices and the
/// working set as it runs with the points from host memory
/// (`working_from_host`: the H buffers, z, MSMs within one H buffer). A's
/// MSM then reads VRAM instead of waiting for its points' upload (12.5 GB
/// at 2^27, ~0.25 s of PCIe against ~0.05 s resident); L and B run beside
/// the H MSM, bound by its arithmetic, and keep streaming. Without the
/// matrices resident (a 16 GiB card) there is no such room.
pub fn query_resident(budget: u64, matrices: u64, query_bytes: u64, working_from_host: u64) -> bool {
    matrices > 0 && matrices.saturating_add(working_from_host).saturating_add(query_bytes) <= budget
}

/// Whether a circuit's matrices, not resident, stream from host memory to
/// a card whose VRAM budget is `budget` ([`HInputs::SpmvStreamed`]): where
/// the H term has room there (`sizes`, points where they are) and the
/// budget holds the streamed SpMV's peak (`sizes.streamed_bytes`, 0 where
/// it is not known yet).
pub fn matrices_streamed(budget: u64, sizes: &Sizes) -> bool {
    h_term_fits(sizes, budget) && sizes.streamed_bytes <= budget
}

/// The smallest MSM chunk for which keeping the SRS resident pays: a
/// card that holds the SRS beside the H buffers, z and MSM workspaces of
/// chunks this large keeps it there ([`srs_resident`]). Each chunk is one
/// more pass over the buckets (~5 ms at 2^27); a card on the edge that
/// chunks smaller is slower than one keeping A's points alone resident
/// ([`query_resident`]).
pub const RESIDENT_MIN_CHUNK_POINTS: u64 = 1 << 23;

/// Whether a circuit's SRS (`srs_bytes` on the device) is kept resident on
/// a card whose VRAM budget is `budget`, `kept` bytes of it held by device
/// copies that stay beside it (the circuit's resident matrices): where
/// they leave room for `min_working`, one working set with the points on
/// the device and its MSMs in chunks of [`RESIDENT_MIN_CHUNK_POINTS`] (the
/// H buffers, z, such an MSM's workspace) and, where the partitions carry
/// their witness only, the next one's witness staged ahead beside it.
///
/// Decided before a worker sizes and reserves its working set, from the
/// card's budget, not from what is free at the moment (another partition's
/// reservation is transient). Resident points spare every MSM the upload
/// of its points: at 2^27 ~47 GB per partition across PCIe, ~0.85 s at
/// 55 GB/s, the floor of a partition whose points stream. Against that,
/// the MSMs' chunks are smaller (one more pass over the buckets each), and
/// where the SRS leaves no room to stage the next witness ahead, the next
/// partition stages inside the compute lock (its witness upload and SpMV:
/// ~0.14 s). With the matrices resident, a card without that room keeps
/// A's points instead ([`query_resident`]): the points of L and B stream
/// under the H MSM's arithmetic, and A's, the MSM after it, read VRAM. So
/// on an 80 GB card a 2^27 circuit's SRS (44 GiB) is resident beside its
/// matrices (7 GiB), a working set with MSMs chunked within ~6 GiB and
/// the next witness; on a 141 GB card beside two whole working sets; on a
/// 48-64 GB card A's points are.
pub fn srs_resident(budget: u64, kept: u64, srs_bytes: u64, min_working: u64) -> bool {
    srs_bytes.saturating_add(kept).saturating_add(min_working) <= budget
}

/// A circuit's matrices as a card places them on its first partition,
/// before its SRS is resident ([`matrices_resident`] with none).
#[derive(Clone, Copy, Debug)]
pub struct FirstMatrices {
    /// Their bytes on the device.
    pub bytes: u64,
    /// The working set with the points from host memory (z included,
    /// MSMs chunked within one H buffer) they are kept beside.
    pub working_from_host: u64,
    /// The smallest working set with the points on the device (z
    /// included: the partitions then carry their witness only) that the
    /// SRS is kept beside them for ([`srs_resident`]).
    pub min_working: u64,
}

/// Whether a card whose VRAM budget is `budget` keeps a circuit's SRS
/// (`srs_bytes`) resident from its first partition on, as the engine
/// decides it once that partition is synthesized: the circuit's matrices
/// (`matrices`, None where it has none) placed first, the SRS not
/// resident, then the SRS kept beside them where they are resident,
/// else beside `min_working` (a working set without z) alone. An SRS
/// loaded straight to the cards that keep it by this rule, decided
/// before it is read, ends resident where a whole load would have had it
/// made resident, beside the same matrices: where the matrices are
/// resident, by the same sum; where they are not, they are placed on a
/// later partition beside the resident SRS by the rule that keeps it
/// there either way.
pub fn srs_resident_from_first(budget: u64, srs_bytes: u64, min_working: u64, matrices: Option<&FirstMatrices>) -> bool {
    match matrices {
        Some(m) if matrices_resident(budget, m.bytes, None, m.working_from_host) => srs_resident(budget, m.bytes, srs_bytes, m.min_working),
        _ => srs_resident(budget, 0, srs_bytes, min_working),
    }
}

/// One line for the log, e.g. `circuits=2 points=device h=device
/// inputs=spmv_on_device queries=beside_h next=second_h_buffers chunks=whole`.
impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let points = match self.points {
            PointsAt::Device => "device",
            PointsAt::Host => "host",
        };
        let h = match self.h {
            HTerm::Device => "device",
            HTerm::Cpu => "cpu",
        };
        let inputs = match self.inputs {
            HInputs::Uploaded => "uploaded",
            HInputs::SpmvOnDevice => "spmv_on_device",
            HInputs::SpmvStreamed => "spmv_streamed",
        };
        write!(f, "circuits={} points={points} h={h} inputs={inputs} queries=", self.circuits)?;
        match self.queries {
            Queries::AfterH => write!(f, "after_h")?,
            Queries::BesideH => write!(f, "beside_h")?,
            Queries::InHScratch(Scratch::L) => write!(f, "in_h_scratch(l)")?,
            Queries::InHScratch(Scratch::LAndB) => write!(f, "in_h_scratch(l,b)")?,
            Queries::Batched(BatchSize::Within(b)) => write!(f, "batched(within {})", crate::config::format_size(b))?,
            Queries::Batched(BatchSize::Exactly(b)) => write!(f, "batched({} g1 sets, {} g2 sets)", b.g1_sets, b.g2_sets)?,
        }
        let next = match self.next {
            NextInputs::WhenDue => "when_due",
            NextInputs::SecondHBuffers => "second_h_buffers",
        };
        write!(f, " next={next} chunks=")?;
        match self.chunks {
            Chunks::Whole => write!(f, "whole"),
            Chunks::Within(b) => write!(f, "within({})", crate::config::format_size(b)),
            Chunks::Exactly(o) => write!(f, "exactly({} points)", o.max_chunk_points),
        }
    }
}

#[cfg(test)]
mod tests;

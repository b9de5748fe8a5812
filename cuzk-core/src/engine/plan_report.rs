//! What the engine planned, as log lines an operator reads to see why a
//! host is slow and what more RAM or a bigger card would buy. Reports
//! only: every figure comes from the rules the engine and the backend
//! follow, and computing it changes nothing.
//!
//! - At start ([`StartReport`]): the host memory budget and where it comes
//!   from, each device's VRAM budget (none: proving on the CPU), and the
//!   pipeline's ceiling on partitions holding host memory at once.
//! - At a circuit's first plan ([`CircuitReport`]: its first synthesis
//!   unit's reservation, once per circuit and kind of reservation; SRS
//!   entries load at first use, so no earlier point knows them): the
//!   budget split item by item (SRS, PCE, partitions, urgent reserve,
//!   what is left), the partitions in flight and what limits them, and
//!   per device where the SRS and the matrices are, the working set, and
//!   how many working sets fit.
//!
//! Every line starts with `plan` and names its subject; sizes as the other
//! log lines write them (`format_size`).

use crate::config::{format_size, Config, MemoryConfig, TotalBudget};
use std::collections::HashSet;
use std::fmt::Write;
use std::sync::Mutex;

/// The pipeline's ceiling on partitions that hold host memory at once:
/// each partition worker holds the unit it synthesizes, the prover queue
/// `gpu_queue` more, each prover worker the one it proves; a unit is one
/// partition of each job of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pipeline {
    pub partition_workers: usize,
    pub gpu_queue: usize,
    pub devices: usize,
    /// Normal prover workers per device (`gpus.gpu_workers_per_device`).
    pub prover_workers_per_device: usize,
    pub max_batch_size: usize,
}

impl Pipeline {
    /// The pipeline of `config` over `devices` devices.
    pub fn of(config: &Config, devices: usize) -> Self {
        Pipeline {
            partition_workers: config.partition_workers(),
            gpu_queue: config.gpu_queue_capacity(),
            devices,
            prover_workers_per_device: config.gpus.gpu_workers_per_device,
            max_batch_size: config.scheduler.max_batch_size.max(1),
        }
    }

    /// Partitions the workers and the queue hold at most at once (with
    /// full batches).
    pub fn max_partitions(&self) -> u64 {
        let units = self.partition_workers + self.gpu_queue + self.devices * self.prover_workers_per_device;
        (units * self.max_batch_size) as u64
    }
}

/// A device as the engine found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceSummary {
    pub ordinal: u32,
    pub name: String,
    /// What the engine may use of its VRAM; None: the CPU backend's
    /// stand-in device, which has none.
    pub vram_budget: Option<u64>,
    /// The last bytes of that budget only urgent partitions may take
    /// (`gpus.urgent_vram_reserve`, capped at an eighth of it).
    pub urgent_vram_reserve: u64,
}

/// The start-up report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartReport {
    pub backend: String,
    pub budget: u64,
    /// How the budget was set, e.g. `memory.total_budget`, or
    /// `MemTotal(125GiB)-memory.safety_margin(5GiB)`.
    pub budget_source: String,
    /// The part of the budget only urgent partitions take (as
    /// [`super::memory::MemoryBudget`] keeps it: at most an eighth).
    pub urgent_reserve: u64,
    pub devices: Vec<DeviceSummary>,
    pub pipeline: Pipeline,
}

/// How the budget of `cfg` (resolved to `budget` bytes) was set.
pub fn budget_source(cfg: &MemoryConfig, budget: u64) -> String {
    match cfg.total_budget {
        TotalBudget::Bytes(_) => "memory.total_budget".into(),
        TotalBudget::Auto => format!(
            "MemTotal({})-memory.safety_margin({})",
            format_size(budget.saturating_add(cfg.safety_margin.0)),
            format_size(cfg.safety_margin.0)
        ),
    }
}

impl StartReport {
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "plan host memory_budget={} source={} urgent_reserve={} backend={}",
            format_size(self.budget),
            self.budget_source,
            format_size(self.urgent_reserve),
            self.backend
        )];
        for d in &self.devices {
            lines.push(match d.vram_budget {
                Some(v) => format!(
                    "plan device gpu={} name={:?} vram_budget={} urgent_vram_reserve={}",
                    d.ordinal,
                    d.name,
                    format_size(v),
                    format_size(d.urgent_vram_reserve)
                ),
                None => "plan device cpu vram=none proves_on=cpu".into(),
            });
        }
        let p = &self.pipeline;
        lines.push(format!(
            "plan pipeline partition_workers={} gpu_queue={} prover_workers={} max_batch_size={} partitions_in_flight_max={} per_circuit=\"plan budget/partitions/device lines at its first partition\"",
            p.partition_workers,
            p.gpu_queue,
            p.devices * p.prover_workers_per_device,
            p.max_batch_size,
            p.max_partitions()
        ));
        lines
    }
}

/// What a synthesized partition's host reservation counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PartitionReservation {
    /// Its witness only: a, b, c are computed on the device from the
    /// circuit's matrices there.
    WitnessOnly,
    /// Its witness and a, b, c from the CPU SpMV; the H term on the device.
    WithAbc,
    /// The whole estimate: a, b, c and the working copies an H term on the
    /// host makes (no PCE, or a card without room for the H term).
    Whole,
}

impl PartitionReservation {
    pub fn as_str(self) -> &'static str {
        match self {
            PartitionReservation::WitnessOnly => "witness_only",
            PartitionReservation::WithAbc => "with_abc",
            PartitionReservation::Whole => "whole",
        }
    }
}

/// Where a device keeps a circuit's SRS points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrsAt {
    /// Resident in VRAM (`bytes` of it); the host points beside it as
    /// [`SrsHost`] says.
    Vram { bytes: u64 },
    /// Streamed from host memory by every MSM, but for A's MSM where
    /// `a_vram` (its points' bytes) says they are resident on their own.
    /// `resident_needs`: the VRAM budget that would keep it resident (None:
    /// residency is off).
    Host { resident_needs: Option<u64>, a_vram: Option<u64> },
}

/// What becomes of an SRS's host points beside the devices' copies (the
/// rule of [`super::srs_handle::release_where_every_device_holds`],
/// applied to where each device plans to keep them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrsHost {
    /// Kept in host memory: a device reads its points from there (it
    /// streams them, or proves on the CPU).
    Needed,
    /// Kept though every device keeps a copy in VRAM: generated in memory,
    /// they have no file to be read again from.
    KeptNoFile,
    /// Released once every device has its copy in VRAM (after its first
    /// partition), their bytes back to the budget; read again from their
    /// file, within the budget, where a device needs them again.
    Released,
}

impl SrsHost {
    /// What the budget line of the SRS says of its host points.
    fn note(self) -> &'static str {
        match self {
            SrsHost::Needed => "host points, read by a device that streams them or proves on the CPU",
            SrsHost::KeptNoFile => "host points kept beside the cards' copies: generated in memory, no file to read them again from",
            SrsHost::Released => {
                "host points released once every device has its copy in VRAM, read again from their file where one needs them"
            }
        }
    }
}

/// Where a device reads a circuit's constraint matrices (its PCE) from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatricesAt {
    /// Resident in VRAM (`bytes` of it): a, b, c computed there.
    Vram { bytes: u64 },
    /// Streamed from host memory for the SpMV on the device.
    Streamed,
    /// Not on the device: a, b, c come from the CPU.
    Host,
    /// The circuit has no PCE (classic synthesis).
    None,
}

/// What one GPU plans for a circuit's partitions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuPlan {
    pub srs: SrsAt,
    pub matrices: MatricesAt,
    /// VRAM one partition's call reserves (H buffers, the largest MSM
    /// whole, z), points where `srs` says.
    pub working_set: u64,
    /// The H term's buffers fit beside the smallest MSM workspace.
    pub h_term_on_device: bool,
}

/// What one device plans for a circuit's partitions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevicePlan {
    pub ordinal: u32,
    /// What its normal partitions plan within: the VRAM budget less the
    /// urgent reserve.
    pub vram_budget: u64,
    /// None: the CPU proves (no VRAM).
    pub gpu: Option<GpuPlan>,
}

impl DevicePlan {
    /// A device that proves on the CPU.
    pub fn on_cpu(ordinal: u32) -> Self {
        DevicePlan { ordinal, vram_budget: 0, gpu: None }
    }

    /// Whether the device keeps the SRS's points in VRAM (its proofs need
    /// no host points).
    pub fn keeps_srs_in_vram(&self) -> bool {
        matches!(self.gpu, Some(GpuPlan { srs: SrsAt::Vram { .. }, .. }))
    }
}

impl GpuPlan {
    /// VRAM the device keeps for the circuit beyond its calls.
    fn kept_bytes(&self) -> u64 {
        let srs = match self.srs {
            SrsAt::Vram { bytes } => bytes,
            SrsAt::Host { a_vram, .. } => a_vram.unwrap_or(0),
        };
        let matrices = match self.matrices {
            MatricesAt::Vram { bytes } => bytes,
            _ => 0,
        };
        srs + matrices
    }

    /// Working sets that fit the VRAM budget beside what is kept.
    fn working_sets_fit(&self, vram_budget: u64) -> u64 {
        vram_budget.saturating_sub(self.kept_bytes()).checked_div(self.working_set).unwrap_or(0)
    }
}

/// The report at a circuit's first plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitReport {
    pub circuit_id: String,
    pub reservation: PartitionReservation,
    pub budget: u64,
    pub urgent_reserve: u64,
    /// Host bytes of the SRS's points.
    pub srs_bytes: u64,
    /// Whether the budget keeps them (see [`SrsHost`]).
    pub srs_host: SrsHost,
    /// Host bytes of the circuit's PCE (0: none).
    pub pce_bytes: u64,
    /// Host bytes one synthesized partition reserves.
    pub per_partition: u64,
    pub pipeline: Pipeline,
    pub devices: Vec<DevicePlan>,
}

/// One item of the budget's split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetItem {
    pub name: &'static str,
    pub bytes: u64,
}

impl CircuitReport {
    /// Host bytes the SRS holds of the budget once every device has its
    /// copy: none where its points are released.
    pub fn srs_held_bytes(&self) -> u64 {
        match self.srs_host {
            SrsHost::Released => 0,
            SrsHost::Needed | SrsHost::KeptNoFile => self.srs_bytes,
        }
    }

    /// Partitions the budget holds beside the SRS, the PCE and the urgent
    /// reserve.
    pub fn budget_allows(&self) -> u64 {
        let room = self.budget.saturating_sub(self.urgent_reserve).saturating_sub(self.srs_held_bytes()).saturating_sub(self.pce_bytes);
        room.checked_div(self.per_partition).unwrap_or(u64::MAX)
    }

    /// Partitions in flight: what the budget holds, at most the pipeline's
    /// ceiling.
    pub fn in_flight(&self) -> u64 {
        self.budget_allows().min(self.pipeline.max_partitions())
    }

    /// The budget item by item; the items sum to the budget where the SRS,
    /// the PCE and the reserve fit it (else `unplanned` is 0 and they
    /// exceed it).
    pub fn budget_items(&self) -> Vec<BudgetItem> {
        let partitions = self.in_flight() * self.per_partition;
        let planned = self.srs_held_bytes() + self.pce_bytes + partitions + self.urgent_reserve;
        vec![
            BudgetItem { name: "srs", bytes: self.srs_held_bytes() },
            BudgetItem { name: "pce", bytes: self.pce_bytes },
            BudgetItem { name: "partitions", bytes: partitions },
            BudgetItem { name: "urgent_reserve", bytes: self.urgent_reserve },
            BudgetItem { name: "unplanned", bytes: self.budget.saturating_sub(planned) },
        ]
    }

    pub fn lines(&self) -> Vec<String> {
        let id = &self.circuit_id;
        let mut lines = Vec::new();
        for item in self.budget_items() {
            let mut line = format!("plan budget circuit_id={id} item={} bytes={}", item.name, format_size(item.bytes));
            match item.name {
                "srs" => {
                    let _ = write!(line, " points={} note=\"{}\"", format_size(self.srs_bytes), self.srs_host.note());
                }
                "partitions" => {
                    let _ = write!(
                        line,
                        " count={} each={} reservation={}",
                        self.in_flight(),
                        format_size(self.per_partition),
                        self.reservation.as_str()
                    );
                }
                _ => {}
            }
            lines.push(line);
        }
        lines.push(format!("plan budget circuit_id={id} item=total bytes={}", format_size(self.budget)));
        lines.push(self.partitions_line());
        let per_device = self.pipeline.prover_workers_per_device as u64;
        for d in &self.devices {
            lines.push(match &d.gpu {
                None => format!("plan device cpu circuit_id={id} srs=host vram=none proves_on=cpu"),
                Some(g) => {
                    let mut line = format!("plan device gpu={} circuit_id={id}", d.ordinal);
                    match g.srs {
                        SrsAt::Vram { bytes } => {
                            let _ = write!(line, " srs=vram srs_vram={}", format_size(bytes));
                        }
                        SrsAt::Host { resident_needs: Some(n), a_vram } => {
                            let _ = write!(line, " srs=host srs_resident_needs_vram_budget={}", format_size(n));
                            if let Some(a) = a_vram {
                                let _ = write!(line, " srs_a=vram srs_a_vram={}", format_size(a));
                            }
                        }
                        SrsAt::Host { resident_needs: None, .. } => line.push_str(" srs=host srs_resident=off"),
                    }
                    match g.matrices {
                        MatricesAt::Vram { bytes } => {
                            let _ = write!(line, " matrices=vram matrices_vram={}", format_size(bytes));
                        }
                        MatricesAt::Streamed => line.push_str(" matrices=streamed"),
                        MatricesAt::Host => line.push_str(" matrices=host"),
                        MatricesAt::None => line.push_str(" matrices=none"),
                    }
                    let fit = g.working_sets_fit(d.vram_budget);
                    let _ = write!(
                        line,
                        " working_set={} vram_budget={} working_sets_fit={fit} partitions_in_flight={}{} h_term={}",
                        format_size(g.working_set),
                        format_size(d.vram_budget),
                        // With none whole, one runs chunked within what is free.
                        fit.clamp(1, per_device.max(1)),
                        if fit == 0 { " msms=chunked_within_free" } else { "" },
                        if g.h_term_on_device { "device" } else { "host" }
                    );
                    line
                }
            });
        }
        lines
    }

    /// Partitions in flight, what limits them, and what more budget buys.
    fn partitions_line(&self) -> String {
        let (allows, workers) = (self.budget_allows(), self.pipeline.max_partitions());
        let mut line = format!("plan partitions circuit_id={} in_flight={}", self.circuit_id, self.in_flight());
        if allows < workers {
            let _ = write!(
                line,
                " limited_by=host_budget budget_allows={allows} workers_allow={workers} each_more_needs={} workers_max_needs={}",
                format_size(self.per_partition),
                format_size((workers - allows) * self.per_partition)
            );
        } else {
            let _ = write!(
                line,
                " limited_by=workers budget_allows={} workers_allow={workers}",
                if allows == u64::MAX { "any".to_string() } else { allows.to_string() }
            );
        }
        line
    }
}

/// The (circuit, reservation) pairs whose plan has been logged: each
/// once per engine.
#[derive(Default)]
pub struct PlanLog {
    logged: Mutex<HashSet<(String, PartitionReservation)>>,
}

impl PlanLog {
    /// Whether this is the first call for the pair (then the caller
    /// logs its plan).
    pub fn first(&self, circuit_id: &str, reservation: PartitionReservation) -> bool {
        self.logged.lock().unwrap_or_else(|e| e.into_inner()).insert((circuit_id.to_string(), reservation))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;

    fn pipeline(devices: usize) -> Pipeline {
        Pipeline { partition_workers: 16, gpu_queue: 1, devices, prover_workers_per_device: 2, max_batch_size: 1 }
    }

    /// A 32 GiB PoRep stream on an 80 GB card under a 64 GiB budget: the
    /// SRS resident beside the matrices (its host points released),
    /// witness-only partitions.
    fn porep_h100() -> CircuitReport {
        CircuitReport {
            circuit_id: "porep-32g".into(),
            reservation: PartitionReservation::WitnessOnly,
            budget: 64 * GIB,
            urgent_reserve: GIB,
            srs_bytes: 44 * GIB,
            srs_host: SrsHost::Released,
            pce_bytes: 7 * GIB,
            per_partition: 3994 * MIB,
            pipeline: pipeline(1),
            devices: vec![DevicePlan {
                ordinal: 0,
                vram_budget: 78 * GIB,
                gpu: Some(GpuPlan {
                    srs: SrsAt::Vram { bytes: 44 * GIB },
                    matrices: MatricesAt::Vram { bytes: 7 * GIB },
                    working_set: 17 * GIB,
                    h_term_on_device: true,
                }),
            }],
        }
    }

    fn line<'a>(lines: &'a [String], prefix: &str) -> &'a str {
        lines.iter().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no line {prefix:?} in {lines:#?}"))
    }

    #[test]
    fn budget_items_sum_to_the_budget_and_partitions_are_limited_by_it() {
        let r = porep_h100();
        // (64 - 1 - 7) GiB = 56 GiB of 3994 MiB partitions: the SRS's host
        // points are released.
        assert_eq!(r.budget_allows(), 14);
        assert_eq!(r.in_flight(), 14, "the budget allows fewer than the 19 the workers hold");
        let items = r.budget_items();
        assert_eq!(items.iter().map(|i| i.bytes).sum::<u64>(), r.budget);
        let names: Vec<_> = items.iter().map(|i| i.name).collect();
        assert_eq!(names, ["srs", "pce", "partitions", "urgent_reserve", "unplanned"]);
        assert_eq!(items[0].bytes, 0);
        assert_eq!(items[2].bytes, 14 * 3994 * MIB);
        let lines = r.lines();
        assert_eq!(
            line(&lines, "plan budget circuit_id=porep-32g item=srs"),
            "plan budget circuit_id=porep-32g item=srs bytes=0B points=44GiB note=\"host points released once every device has its copy in VRAM, read again from their file where one needs them\""
        );
        assert_eq!(line(&lines, "plan budget circuit_id=porep-32g item=pce"), "plan budget circuit_id=porep-32g item=pce bytes=7GiB");
        assert_eq!(
            line(&lines, "plan budget circuit_id=porep-32g item=partitions"),
            "plan budget circuit_id=porep-32g item=partitions bytes=54.61GiB count=14 each=3.90GiB reservation=witness_only"
        );
        assert_eq!(line(&lines, "plan budget circuit_id=porep-32g item=total"), "plan budget circuit_id=porep-32g item=total bytes=64GiB");
        assert_eq!(
            line(&lines, "plan partitions"),
            "plan partitions circuit_id=porep-32g in_flight=14 limited_by=host_budget budget_allows=14 workers_allow=19 each_more_needs=3.90GiB workers_max_needs=19.50GiB"
        );
    }

    /// Host points that stay (a device streams them; or, generated in
    /// memory, they cannot be read again) hold their bytes of the budget:
    /// in 64 GiB, (64 - 1 - 44 - 7) GiB = 12 GiB of partitions.
    #[test]
    fn host_points_kept_hold_the_budget() {
        for (srs_host, note) in [
            (SrsHost::Needed, "host points, read by a device that streams them or proves on the CPU"),
            (SrsHost::KeptNoFile, "host points kept beside the cards' copies: generated in memory, no file to read them again from"),
        ] {
            let r = CircuitReport { srs_host, ..porep_h100() };
            assert_eq!(r.srs_held_bytes(), 44 * GIB);
            assert_eq!(r.budget_allows(), 3);
            let items = r.budget_items();
            assert_eq!(items.iter().map(|i| i.bytes).sum::<u64>(), r.budget);
            assert_eq!(items[0], BudgetItem { name: "srs", bytes: 44 * GIB });
            assert_eq!(
                line(&r.lines(), "plan budget circuit_id=porep-32g item=srs"),
                format!("plan budget circuit_id=porep-32g item=srs bytes=44GiB points=44GiB note=\"{note}\"")
            );
        }
    }

    #[test]
    fn a_device_line_says_where_the_srs_is_and_how_many_working_sets_fit() {
        let mut r = porep_h100();
        let lines = r.lines();
        assert_eq!(
            line(&lines, "plan device gpu=0"),
            "plan device gpu=0 circuit_id=porep-32g srs=vram srs_vram=44GiB matrices=vram matrices_vram=7GiB working_set=17GiB vram_budget=78GiB working_sets_fit=1 partitions_in_flight=1 h_term=device"
        );
        // A 16 GiB card: the points and the matrices stream from the host,
        // and a bigger card would keep the SRS resident.
        r.devices[0] = DevicePlan {
            ordinal: 1,
            vram_budget: 15 * GIB,
            gpu: Some(GpuPlan {
                srs: SrsAt::Host { resident_needs: Some(61 * GIB), a_vram: None },
                matrices: MatricesAt::Streamed,
                working_set: 20 * GIB,
                h_term_on_device: true,
            }),
        };
        let lines = r.lines();
        assert_eq!(
            line(&lines, "plan device gpu=1"),
            "plan device gpu=1 circuit_id=porep-32g srs=host srs_resident_needs_vram_budget=61GiB matrices=streamed working_set=20GiB vram_budget=15GiB working_sets_fit=0 partitions_in_flight=1 msms=chunked_within_free h_term=device"
        );
        // A 48 GB card: the matrices and A's points resident, the rest of
        // the points from the host.
        r.devices[0] = DevicePlan {
            ordinal: 2,
            vram_budget: 43 * GIB,
            gpu: Some(GpuPlan {
                srs: SrsAt::Host { resident_needs: Some(72 * GIB), a_vram: Some(12 * GIB) },
                matrices: MatricesAt::Vram { bytes: 7 * GIB },
                working_set: 20 * GIB,
                h_term_on_device: true,
            }),
        };
        assert_eq!(
            line(&r.lines(), "plan device gpu=2"),
            "plan device gpu=2 circuit_id=porep-32g srs=host srs_resident_needs_vram_budget=72GiB srs_a=vram srs_a_vram=12GiB matrices=vram matrices_vram=7GiB working_set=20GiB vram_budget=43GiB working_sets_fit=1 partitions_in_flight=1 h_term=device"
        );
        // An H200: two working sets beside the SRS and the matrices, one per
        // prover worker.
        r.devices[0] = DevicePlan { vram_budget: 131 * GIB, ..porep_h100().devices[0].clone() };
        assert!(line(&r.lines(), "plan device gpu=0").contains(" working_sets_fit=4 partitions_in_flight=2 "));
    }

    #[test]
    fn the_cpu_backend_reports_no_vram_and_a_budget_that_holds_every_worker() {
        let r = CircuitReport {
            circuit_id: "builtin-synthetic-1024-4".into(),
            reservation: PartitionReservation::Whole,
            budget: 8 * GIB,
            urgent_reserve: GIB,
            srs_bytes: MIB,
            srs_host: SrsHost::Needed,
            pce_bytes: 0,
            per_partition: MIB,
            pipeline: Pipeline { partition_workers: 2, gpu_queue: 1, devices: 1, prover_workers_per_device: 1, max_batch_size: 4 },
            devices: vec![DevicePlan::on_cpu(0)],
        };
        assert_eq!(r.pipeline.max_partitions(), 16);
        assert_eq!(r.in_flight(), 16);
        let lines = r.lines();
        assert_eq!(line(&lines, "plan device"), "plan device cpu circuit_id=builtin-synthetic-1024-4 srs=host vram=none proves_on=cpu");
        assert_eq!(
            line(&lines, "plan partitions"),
            "plan partitions circuit_id=builtin-synthetic-1024-4 in_flight=16 limited_by=workers budget_allows=7167 workers_allow=16"
        );
        let items = r.budget_items();
        assert_eq!(items.iter().map(|i| i.bytes).sum::<u64>(), r.budget);
        assert_eq!(items[4], BudgetItem { name: "unplanned", bytes: 8 * GIB - GIB - 17 * MIB });
        assert!(line(&lines, "plan budget circuit_id=builtin-synthetic-1024-4 item=partitions")
            .ends_with(" count=16 each=1MiB reservation=whole"));
    }

    /// An SRS whose host points stay, larger than the budget, leaves no
    /// partition: the line says so, and what one more needs.
    #[test]
    fn no_partition_fits_beside_an_srs_too_large_for_the_budget() {
        let r = CircuitReport { budget: 48 * GIB, srs_host: SrsHost::Needed, ..porep_h100() };
        assert_eq!(r.in_flight(), 0);
        assert!(line(&r.lines(), "plan partitions")
            .starts_with("plan partitions circuit_id=porep-32g in_flight=0 limited_by=host_budget budget_allows=0 "));
        assert_eq!(r.budget_items()[4].bytes, 0, "nothing unplanned where the SRS and PCE exceed the budget");
    }

    #[test]
    fn the_start_report_names_the_budget_devices_and_pipeline() {
        let mut cfg = MemoryConfig::default();
        assert_eq!(budget_source(&cfg, 120 * GIB), "MemTotal(125GiB)-memory.safety_margin(5GiB)");
        cfg.total_budget = TotalBudget::Bytes(116 * GIB);
        let r = StartReport {
            backend: "cuda".into(),
            budget: 116 * GIB,
            budget_source: budget_source(&cfg, 116 * GIB),
            urgent_reserve: GIB,
            devices: vec![DeviceSummary {
                ordinal: 0,
                name: "NVIDIA H100 80GB HBM3".into(),
                vram_budget: Some(78 * GIB),
                urgent_vram_reserve: GIB,
            }],
            pipeline: pipeline(1),
        };
        assert_eq!(
            r.lines(),
            [
                "plan host memory_budget=116GiB source=memory.total_budget urgent_reserve=1GiB backend=cuda",
                "plan device gpu=0 name=\"NVIDIA H100 80GB HBM3\" vram_budget=78GiB urgent_vram_reserve=1GiB",
                "plan pipeline partition_workers=16 gpu_queue=1 prover_workers=2 max_batch_size=1 partitions_in_flight_max=19 per_circuit=\"plan budget/partitions/device lines at its first partition\"",
            ]
        );
        let cpu =
            StartReport { devices: vec![DeviceSummary { ordinal: 0, name: "cpu".into(), vram_budget: None, urgent_vram_reserve: 0 }], ..r };
        assert_eq!(cpu.lines()[1], "plan device cpu vram=none proves_on=cpu");
    }

    #[test]
    fn each_plan_is_logged_once_per_circuit_and_reservation() {
        let log = PlanLog::default();
        assert!(log.first("a", PartitionReservation::Whole));
        assert!(!log.first("a", PartitionReservation::Whole));
        assert!(log.first("a", PartitionReservation::WitnessOnly), "the PCE arrived: a new plan");
        assert!(log.first("b", PartitionReservation::Whole));
    }
}

//! What a device plans for a circuit's partitions, for the plan report
//! ([`crate::engine::plan_report`]): the rules `keep_resident` keeps an SRS
//! resident by (`keeps_srs_resident`, else A's points by
//! `keeps_query_resident`) and `h_term_on_device` decides by
//! (`h_term_fits`), and the working set a prover worker reserves, applied
//! to the device's VRAM budget and the copies it keeps now. Nothing is uploaded,
//! reserved or counted as used.

use super::{GpuBackend, GpuDevice};
use crate::engine::interlock::DeviceLocks;
use crate::engine::plan_report::{DevicePlan, GpuPlan, MatricesAt, SrsAt};
use crate::engine::srs_handle::SrsHandle;
use crate::groth16::gpu_srs::DeviceSrs;
use crate::pce::Pce;
use crate::srs::KeyShape;
use std::sync::Arc;

impl GpuBackend {
    /// `dev`'s plan (its budget in `locks`) for partitions of `srs`'s
    /// circuit, with its PCE `pce`, synthesized witness-only where
    /// `witness_only`.
    pub(super) fn device_plan(
        &self,
        dev: &GpuDevice,
        locks: &DeviceLocks,
        srs: &SrsHandle,
        pce: Option<&Arc<Pce>>,
        witness_only: bool,
    ) -> DevicePlan {
        let total = locks.vram.normal_total();
        let constraints = pce.map_or(srs.counts().h + 1, |p| p.num_constraints());
        let matrices = match pce {
            None => MatricesAt::None,
            Some(p) => match Self::resident_pce_bytes(dev, p) {
                Some(bytes) => MatricesAt::Vram { bytes },
                None if Self::is_streamed(dev, p) => MatricesAt::Streamed,
                None => MatricesAt::Host,
            },
        };
        let matrices_bytes = match matrices {
            MatricesAt::Vram { bytes } => bytes,
            _ => 0,
        };
        // z of the SpMV on the device, in the working set where the
        // partitions carry their witness only.
        let z = pce.filter(|_| witness_only).map_or(0, |p| p.z_bytes());
        let srs_bytes = DeviceSrs::bytes(srs);
        // As `make_resident` decides it: z only beside resident matrices.
        let resident_z = if matrices_bytes > 0 { z } else { 0 };
        let resident = Self::is_resident(dev, srs)
            || (self.keep_srs_resident
                && Self::keeps_srs_resident(dev, srs, constraints, total, matrices_bytes, resident_z).unwrap_or(false));
        let srs_at = if resident {
            SrsAt::Vram { bytes: srs_bytes }
        } else {
            let needs = Self::srs_working_set(dev, srs, constraints, resident_z)
                .ok()
                .map(|w| srs_bytes.saturating_add(matrices_bytes).saturating_add(w));
            // As `make_query_resident` decides it: for witness-only partitions.
            let a_vram = self.query_resident_bytes(dev, srs, pce.filter(|_| witness_only), total);
            SrsAt::Host { resident_needs: needs.filter(|_| self.keep_srs_resident), a_vram }
        };
        let h_term_on_device = Self::h_term_fits(dev, srs, total, resident);
        let working_set = Self::working_set(dev, srs, constraints, z, resident);
        DevicePlan {
            ordinal: dev.info.ordinal,
            vram_budget: total,
            gpu: Some(GpuPlan { srs: srs_at, matrices, working_set, h_term_on_device }),
        }
    }
}

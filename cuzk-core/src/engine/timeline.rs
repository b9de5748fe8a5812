//! The machine-readable timeline: one JSON object per line per pipeline
//! event, e.g.
//! `{"t_us":1712000000123456,"ev":"gpu_start","job":"job-3","partition":0,"worker":1,"gpu":0}`.
//!
//! Events: job_submitted, job_dispatched, synth_start, synth_end,
//! gpu_queued, gpu_picked, gpu_start, gpu_end (with `path`), job_done.
//! synth_end has `path` too: how the partition was synthesized (pce_store's
//! SynthPath: `pce-witness` where it carries its witness only).
//! [`super::timeline_stats`] turns a file of them into busy fractions.

use super::request::JobId;
use serde::Serialize;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

#[derive(Serialize, Default)]
pub struct Event<'a> {
    pub t_us: u64,
    pub ev: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'a str>,
}

impl<'a> Event<'a> {
    pub fn new(ev: &'a str, job: JobId) -> Self {
        Event { ev, job: Some(job.to_string()), ..Default::default() }
    }

    pub fn partition(mut self, p: usize) -> Self {
        self.partition = Some(p);
        self
    }

    pub fn worker(mut self, w: usize) -> Self {
        self.worker = Some(w);
        self
    }

    pub fn gpu(mut self, g: u32) -> Self {
        self.gpu = Some(g);
        self
    }

    pub fn path(mut self, p: &'a str) -> Self {
        self.path = Some(p);
        self
    }
}

/// Writes events to a file, or nowhere when no path is configured.
#[derive(Default)]
pub struct Timeline {
    out: Option<Mutex<BufWriter<File>>>,
}

impl Timeline {
    pub fn open(path: Option<&Path>) -> std::io::Result<Self> {
        let out = match path {
            Some(p) => Some(Mutex::new(BufWriter::new(File::options().create(true).append(true).open(p)?))),
            None => None,
        };
        Ok(Self { out })
    }

    pub fn enabled(&self) -> bool {
        self.out.is_some()
    }

    /// Appends one event stamped with the current time. Each line is
    /// flushed so the file can be followed while the engine runs.
    pub fn record(&self, mut event: Event<'_>) {
        let Some(out) = &self.out else { return };
        event.t_us = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64);
        let mut line = serde_json::to_vec(&event).expect("events serialize");
        line.push(b'\n');
        let mut w = out.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = w.write_all(&line).and_then(|_| w.flush()) {
            log::warn!("timeline write failed: {e}");
        }
    }
}

//! The batch collector's rules: jobs of one circuit are proved together
//! (one SRS pass for all) up to `max_batch_size`; a partial batch waits at
//! most `max_batch_wait_ms` for more, and is sent at once when the next job
//! in line is of another kind or circuit, or when the engine shuts down.

use std::time::Duration;

#[derive(Clone, Copy, Debug)]
pub struct BatchRules {
    pub max_batch_size: usize,
    pub max_wait: Duration,
}

/// What the collector does next with a batch of `len` (≥ 1) jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchDecision {
    /// Add the next job in line.
    Take,
    /// Send the batch as it is.
    Flush,
    /// Wait this long for another job, then decide again.
    Wait(Duration),
}

/// The job in line after the batch, as the collector sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextJob {
    None,
    SameCircuit,
    OtherCircuit,
}

impl BatchRules {
    pub fn decide(&self, len: usize, next: NextJob, waited: Duration, shutting_down: bool) -> BatchDecision {
        if len >= self.max_batch_size {
            return BatchDecision::Flush;
        }
        match next {
            NextJob::SameCircuit => BatchDecision::Take,
            NextJob::OtherCircuit => BatchDecision::Flush,
            NextJob::None if shutting_down || waited >= self.max_wait => BatchDecision::Flush,
            NextJob::None => BatchDecision::Wait(self.max_wait - waited),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use BatchDecision::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn batch_size_one_is_off() {
        let r = BatchRules { max_batch_size: 1, max_wait: 10_000 * MS };
        assert_eq!(r.decide(1, NextJob::SameCircuit, Duration::ZERO, false), Flush);
        assert_eq!(r.decide(1, NextJob::None, Duration::ZERO, false), Flush);
    }

    #[test]
    fn fills_then_flushes_when_full() {
        let r = BatchRules { max_batch_size: 3, max_wait: 100 * MS };
        assert_eq!(r.decide(1, NextJob::SameCircuit, Duration::ZERO, false), Take);
        assert_eq!(r.decide(2, NextJob::SameCircuit, Duration::ZERO, false), Take);
        assert_eq!(r.decide(3, NextJob::SameCircuit, Duration::ZERO, false), Flush);
    }

    #[test]
    fn flushes_on_other_circuit_timeout_and_shutdown() {
        let r = BatchRules { max_batch_size: 3, max_wait: 100 * MS };
        assert_eq!(r.decide(1, NextJob::OtherCircuit, Duration::ZERO, false), Flush);
        assert_eq!(r.decide(2, NextJob::None, 40 * MS, false), Wait(60 * MS));
        assert_eq!(r.decide(2, NextJob::None, 100 * MS, false), Flush);
        assert_eq!(r.decide(2, NextJob::None, Duration::ZERO, true), Flush);
    }
}

//! How long each phase of a run took, for `--timings`.

use std::fmt;
use std::time::{Duration, Instant};

/// Phase durations in the order they ran, and a line on the work's size, so that
/// the engine's own time can be told from parsing.
///
/// ```
/// use karpenter::sim::Timings;
///
/// let mut timings = Timings::new();
/// let sum: u64 = timings.time("read", || (1..=100).sum());
/// timings.set_size(format!("{sum} things"));
/// assert!(timings.to_string().starts_with("timings: read "));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Timings {
    phases: Vec<(&'static str, Duration)>,
    size: Option<String>,
}

impl Timings {
    /// No phases yet.
    pub fn new() -> Self {
        Timings::default()
    }

    /// Runs `phase` and records how long it took under `name`.
    pub fn time<T>(&mut self, name: &'static str, phase: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = phase();
        self.phases.push((name, start.elapsed()));
        out
    }

    /// Records a phase measured elsewhere.
    pub fn record(&mut self, name: &'static str, took: Duration) {
        self.phases.push((name, took));
    }

    /// Describes the size of the work (`20000 pods, 0 nodes`).
    pub fn set_size(&mut self, size: String) {
        self.size = Some(size);
    }

    /// The phases recorded so far.
    pub fn phases(&self) -> &[(&'static str, Duration)] {
        &self.phases
    }
}

/// `1.234 s`, `12.3 ms`, `45 µs`: three significant figures a person can read.
fn human(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs >= 1.0 {
        format!("{secs:.3} s")
    } else if secs >= 1e-3 {
        format!("{:.1} ms", secs * 1e3)
    } else {
        format!("{:.0} µs", secs * 1e6)
    }
}

impl fmt::Display for Timings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("timings:")?;
        for (i, (name, took)) in self.phases.iter().enumerate() {
            let sep = if i == 0 { " " } else { ", " };
            write!(f, "{sep}{name} {}", human(*took))?;
        }
        if let Some(size) = &self.size {
            write!(f, " ({size})")?;
        }
        Ok(())
    }
}

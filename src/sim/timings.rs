//! How long each phase of a run took, for `--timings`.

use std::fmt;
use std::time::{Duration, Instant};

/// Phase durations in the order they ran, and a line on the work's size, so that
/// the engine's own time can be told from parsing; on Linux, also the process's
/// peak resident memory at the end of each phase (what `/usr/bin/time` reports as
/// maximum resident set size, phase by phase).
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
    /// The peak resident memory, in bytes, when each phase ended (when known).
    peaks: Vec<Option<u64>>,
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
        self.record(name, start.elapsed());
        out
    }

    /// Records a phase measured elsewhere.
    pub fn record(&mut self, name: &'static str, took: Duration) {
        self.phases.push((name, took));
        self.peaks.push(peak_resident_bytes());
    }

    /// Describes the size of the work (`20000 pods, 0 nodes`).
    pub fn set_size(&mut self, size: String) {
        self.size = Some(size);
    }

    /// The phases recorded so far.
    pub fn phases(&self) -> &[(&'static str, Duration)] {
        &self.phases
    }

    /// The process's peak resident memory in bytes when the last phase ended, where
    /// the system says it (Linux).
    pub fn peak_memory(&self) -> Option<u64> {
        self.peaks.last().copied().flatten()
    }
}

/// The process's peak resident set size so far (`VmHWM`), where the system says it.
fn peak_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    let kib: u64 = line.trim().strip_suffix("kB")?.trim().parse().ok()?;
    kib.checked_mul(1024)
}

/// `964 MB`: bytes in decimal megabytes, as `/usr/bin/time` users convert them.
fn megabytes(bytes: u64) -> String {
    format!("{} MB", bytes.saturating_add(500_000) / 1_000_000)
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
        // The peak after each phase, so that a reader sees which phase set it.
        if self.peaks.iter().any(Option::is_some) {
            f.write_str("; peak memory")?;
            for (i, ((name, _), peak)) in self.phases.iter().zip(&self.peaks).enumerate() {
                let sep = if i == 0 { " " } else { ", " };
                let peak = peak.map_or_else(|| "?".to_string(), megabytes);
                write!(f, "{sep}{peak} after {name}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_phase_says_the_peak_memory_where_the_system_says_it() {
        let mut timings = Timings::new();
        // Touch a few megabytes so that the peak is not zero anywhere.
        let buffer = timings.time("read", || vec![1u8; 4 << 20]);
        timings.record("write", Duration::from_millis(1));
        let line = timings.to_string();
        if cfg!(target_os = "linux") {
            let peak = timings.peak_memory().expect("Linux says VmHWM");
            assert!(peak >= buffer.len() as u64, "{peak}");
            assert!(line.contains("; peak memory "), "{line}");
            assert!(
                line.contains(" MB after read, ") && line.ends_with(" MB after write"),
                "{line}"
            );
        } else {
            assert!(!line.contains("peak memory"), "{line}");
        }
    }

    #[test]
    fn megabytes_round_to_the_nearest() {
        assert_eq!(megabytes(964_499_999), "964 MB");
        assert_eq!(megabytes(964_500_000), "965 MB");
        assert_eq!(megabytes(0), "0 MB");
    }
}

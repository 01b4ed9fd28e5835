//! A progress bar on standard error for replays that last more than a
//! second; nothing when standard error is not a terminal (a pipe, a file,
//! CI), so captured output stays clean.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// Draws `label [=====>    ] 45% 650/1440 steps` in place, at most ten
/// times a second, once the work has lasted a second.
pub(crate) struct Progress {
    label: String,
    started: Instant,
    last_drawn: Option<Instant>,
    on: bool,
}

impl Progress {
    pub(crate) fn new(label: impl Into<String>) -> Progress {
        Progress {
            label: label.into(),
            started: Instant::now(),
            last_drawn: None,
            on: std::io::stderr().is_terminal(),
        }
    }

    /// Notes `done` of `total` steps.
    pub(crate) fn update(&mut self, done: u64, total: u64) {
        if !self.on || self.started.elapsed() < Duration::from_secs(1) {
            return;
        }
        if self
            .last_drawn
            .is_some_and(|t| t.elapsed() < Duration::from_millis(100))
        {
            return;
        }
        self.last_drawn = Some(Instant::now());
        const WIDTH: u64 = 30;
        let filled = (done * WIDTH)
            .checked_div(total)
            .unwrap_or(WIDTH)
            .min(WIDTH);
        let percent = (done * 100).checked_div(total).unwrap_or(100);
        let bar: String = (0..WIDTH)
            .map(|i| match i.cmp(&filled) {
                std::cmp::Ordering::Less => '=',
                std::cmp::Ordering::Equal => '>',
                std::cmp::Ordering::Greater => ' ',
            })
            .collect();
        let mut stderr = std::io::stderr().lock();
        let _ = write!(
            stderr,
            "\r{} [{bar}] {percent:>3}% {done}/{total} steps",
            self.label
        );
        let _ = stderr.flush();
    }

    /// Clears the bar, if one was drawn.
    pub(crate) fn finish(&mut self) {
        if self.last_drawn.take().is_some() {
            let mut stderr = std::io::stderr().lock();
            let _ = write!(stderr, "\r\x1b[2K");
            let _ = stderr.flush();
        }
    }
}

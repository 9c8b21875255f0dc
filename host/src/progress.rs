//! Progress on stderr for work that takes a while (the emulator's sums, the
//! benchmark's sizes): shown only when stderr is a terminal and the results
//! are text, so logs, pipes and `--json` stay clean.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// Whether progress is drawn at all.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    enabled: bool,
}

impl Progress {
    /// Progress for a run whose results go to stdout as text (`json` false).
    pub fn new(json: bool) -> Progress {
        Progress { enabled: !json && std::io::stderr().is_terminal() }
    }

    /// A spinner with `message` until the returned bar is dropped.
    pub fn spinner(&self, message: impl Into<String>) -> Step {
        if !self.enabled {
            return Step(None);
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("a valid template"));
        bar.set_message(message.into());
        bar.enable_steady_tick(Duration::from_millis(120));
        Step(Some(bar))
    }

    /// A bar of `len` steps.
    pub fn bar(&self, len: u64, message: impl Into<String>) -> Step {
        if !self.enabled {
            return Step(None);
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        bar.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} ({elapsed})").expect("a valid template"));
        bar.set_message(message.into());
        Step(Some(bar))
    }
}

/// One piece of work in progress; cleared when dropped.
pub struct Step(Option<ProgressBar>);

impl Step {
    /// Advances a bar by one, with a new message.
    pub fn advance(&self, message: impl Into<String>) {
        if let Some(b) = &self.0 {
            b.inc(1);
            b.set_message(message.into());
        }
    }

    /// A new message for a spinner.
    pub fn say(&self, message: &str) {
        if let Some(b) = &self.0 {
            b.set_message(message.to_string());
        }
    }
}

impl Drop for Step {
    fn drop(&mut self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

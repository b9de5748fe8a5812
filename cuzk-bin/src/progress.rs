//! Progress output for long steps: a bar when a person is watching a
//! terminal, nothing otherwise (logs stay clean).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;

pub fn bar(len: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(ProgressStyle::with_template("{msg:>12} [{bar:40}] {pos}/{len} ({percent}%, {eta} left)").unwrap().progress_chars("=> "));
    pb.set_message(what.to_string());
    pb
}

pub fn spinner(what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_message(what.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

//! Progress bars for long jobs (the benchmarks', and the `cairn` tools' that reuse them): drawn
//! on stderr when it is a terminal, hidden otherwise, and for jobs too short to need one.

use indicatif::{ProgressBar, ProgressStyle};

/// Below this many bytes a job ends too quickly for a bar to help.
const MIN_BYTES_FOR_BAR: u64 = 64 << 20;

/// A byte-count bar titled `what`; hidden for small jobs.
pub fn bytes(what: &str, total: u64) -> ProgressBar {
    if total < MIN_BYTES_FOR_BAR {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>12} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// An item-count bar titled `what`; hidden for small jobs.
pub fn count(what: &str, total: u64) -> ProgressBar {
    if total < 1_000_000 {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>12} [{bar:30}] {human_pos}/{human_len} {per_sec} eta {eta}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

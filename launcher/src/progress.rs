//! A progress line on stderr while a recording or a sweep runs: the
//! tape's size so far and the time, redrawn a few times a second. Only when
//! stderr is a terminal, and only once the step has taken a second (short
//! runs print nothing).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Shows the progress of a step until dropped.
pub struct Progress {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts showing `what` (e.g. "recording") with the size of the tape
    /// being recorded into `dir`, if stderr is a terminal.
    pub fn start(what: &'static str, dir: Option<PathBuf>) -> Progress {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::io::stderr().is_terminal().then(|| {
            let stop = stop.clone();
            std::thread::spawn(move || show(what, dir, &stop))
        });
        Progress { stop, thread }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn show(what: &str, dir: Option<PathBuf>, stop: &AtomicBool) {
    let start = Instant::now();
    let tick = Duration::from_millis(100);
    while start.elapsed() < Duration::from_secs(1) {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(tick);
    }
    let bar = ProgressBar::new_spinner().with_elapsed(start.elapsed());
    bar.set_style(
        ProgressStyle::with_template("dgad: {spinner} {msg} [{elapsed}]")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    while !stop.load(Ordering::Relaxed) {
        let size = dir.as_deref().and_then(tape_size);
        bar.set_message(match size {
            Some(bytes) => format!("{what}: tape {}", human(bytes)),
            None => what.to_string(),
        });
        bar.tick();
        std::thread::sleep(tick);
    }
    bar.finish_and_clear();
}

/// The size of the tape being recorded into `dir`, in either format.
fn tape_size(dir: &std::path::Path) -> Option<u64> {
    [
        tape_format::file_name::TAPE,
        tape_format::file_name::COMPACT_TAPE,
    ]
    .iter()
    .find_map(|name| std::fs::metadata(dir.join(name)).ok())
    .map(|m| m.len())
}

/// `bytes` in B, KB, MB or GB (decimal, three digits).
fn human(bytes: u64) -> String {
    let units = ["B", "KB", "MB", "GB", "TB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < units.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.3} {}", units[u])
    }
}

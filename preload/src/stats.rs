//! Counters behind `DGAD_STATS=1`, printed once on stderr at exit.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Process-wide counters (relaxed atomics: they are only summed at exit).
pub struct Stats {
    /// Blocks translated.
    pub blocks: AtomicU64,
    /// Guest instructions translated.
    pub guest_insns: AtomicU64,
    /// Bytes of cache code written.
    pub cache_bytes: AtomicU64,
    /// Direct branches linked block to block.
    pub links: AtomicU64,
    /// Blocks dropped because their guest code was unmapped or reprotected.
    pub invalidated: AtomicU64,
    /// Guest system calls executed.
    pub syscalls: AtomicU64,
    /// Signals delivered to guest handlers.
    pub signals: AtomicU64,
    /// Single steps taken to bring a thread from inside an instruction's
    /// translation to the next boundary, where a signal is delivered.
    pub steps: AtomicU64,
    /// Signals that arrived inside an instruction's inserted code and were
    /// delivered at its start (`rewriter::restart`), without stepping.
    pub restarts: AtomicU64,
    /// Indirect-branch lookups that missed (summed from exited threads).
    pub ibl_misses: AtomicU64,
    /// Indirect-branch lookups that hit (summed from exited threads).
    pub ibl_hits: AtomicU64,
    /// Of those, hits in the table's second way.
    pub ibl_hits2: AtomicU64,
    /// Guest instructions that have no entry in the semantics table yet.
    pub no_semantics: AtomicU64,
    /// Instruction forms that dropped derivatives (record mode warnings).
    pub lost_derivatives: AtomicU64,
    /// Tape chunks written by the tape writer thread (record mode).
    pub writer_chunks: AtomicU64,
    /// Blocks whose tangent code uses dot mode's tangent cache.
    pub tangent_cache_blocks: AtomicU64,
    /// Client requests answered (counted only with `DGAD_STATS`).
    pub requests: AtomicU64,
    /// Of them, those answered on the light path.
    pub light_requests: AtomicU64,
}

/// The counters.
pub static STATS: Stats = Stats {
    blocks: AtomicU64::new(0),
    guest_insns: AtomicU64::new(0),
    cache_bytes: AtomicU64::new(0),
    links: AtomicU64::new(0),
    invalidated: AtomicU64::new(0),
    syscalls: AtomicU64::new(0),
    signals: AtomicU64::new(0),
    steps: AtomicU64::new(0),
    restarts: AtomicU64::new(0),
    ibl_misses: AtomicU64::new(0),
    ibl_hits: AtomicU64::new(0),
    ibl_hits2: AtomicU64::new(0),
    no_semantics: AtomicU64::new(0),
    lost_derivatives: AtomicU64::new(0),
    writer_chunks: AtomicU64::new(0),
    tangent_cache_blocks: AtomicU64::new(0),
    requests: AtomicU64::new(0),
    light_requests: AtomicU64::new(0),
};

/// Counts one client request answered (`light`: on the light path), with
/// `DGAD_STATS`.
pub fn request(light: bool) {
    if crate::init::config().stats {
        STATS.requests.fetch_add(1, Ordering::Relaxed);
        if light {
            STATS.light_requests.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Instructions whose AD rule the runtime applied (an exit from the cache
/// each), by instruction form (`iced_x86::Code`), counted only with
/// `DGAD_STATS`.
static RUNTIME_RULES: [AtomicU32; CODES] = [const { AtomicU32::new(0) }; CODES];

/// Room for every `iced_x86::Code` (about 4,900 of them).
const CODES: usize = 8192;

/// Counts one runtime application of `insn`'s AD rule (`DGAD_STATS`).
pub fn runtime_rule(insn: &iced_x86::Instruction) {
    if crate::init::config().stats {
        if let Some(c) = RUNTIME_RULES.get(insn.code() as usize) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// "N runtime applications of AD rules (form n, …)": the total and the
/// five most frequent instruction forms.
fn runtime_rules_summary() -> String {
    let mut counts: Vec<(u32, usize)> = RUNTIME_RULES
        .iter()
        .enumerate()
        .map(|(code, c)| (c.load(Ordering::Relaxed), code))
        .filter(|&(n, _)| n > 0)
        .collect();
    let total: u64 = counts.iter().map(|&(n, _)| u64::from(n)).sum();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let top: Vec<String> = counts
        .iter()
        .take(5)
        .map(|&(n, code)| match iced_x86::Code::try_from(code) {
            Ok(code) => format!("{code:?} {n}"),
            Err(_) => format!("code {code} {n}"),
        })
        .collect();
    if top.is_empty() {
        format!("{total} runtime applications of AD rules")
    } else {
        format!(
            "{total} runtime applications of AD rules ({})",
            top.join(", ")
        )
    }
}

/// Prints the one-line summary if `DGAD_STATS` asked for it, and writes
/// the code cache if `DGAD_DUMP_CACHE` asked for it.
pub fn report() {
    if let Some(path) = &crate::init::config().dump_cache {
        crate::cache::dump(path);
    }
    if !crate::init::config().stats {
        return;
    }
    let (mut hits, mut hits2, mut misses) = (
        STATS.ibl_hits.load(Ordering::Relaxed),
        STATS.ibl_hits2.load(Ordering::Relaxed),
        STATS.ibl_misses.load(Ordering::Relaxed),
    );
    crate::threads::for_each_context(|c| {
        hits += c.ibl_hits;
        hits2 += c.ibl_hits2;
        misses += c.ibl_misses;
    });
    // A way-1 hit enters its translation's lookup entry, which counts it
    // among the hits as well.
    let lookups = hits + misses;
    let rate = if lookups == 0 {
        100.0
    } else {
        100.0 * hits as f64 / lookups as f64
    };
    let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
    crate::dgad_eprintln!(
        "stats pid {}: {} blocks, {} guest instructions translated, {} cache bytes, {} links, {} invalidated, \
         {} syscalls, {} signals ({} of them from inside an instruction's code delivered at its start, {} single steps to reach a boundary), indirect lookups {} ({:.2}% hit, {} of them in the table's second way; {} missed), {} instructions with no semantic entry, \
         {} blocks with the tangent cache, {} tape chunks written by the writer thread, {} client requests ({} on the light path), {}{}",
        crate::init::pid(),
        l(&STATS.blocks),
        l(&STATS.guest_insns),
        l(&STATS.cache_bytes),
        l(&STATS.links),
        l(&STATS.invalidated),
        l(&STATS.syscalls),
        l(&STATS.signals),
        l(&STATS.restarts),
        l(&STATS.steps),
        lookups,
        rate,
        hits2,
        misses,
        l(&STATS.no_semantics),
        l(&STATS.tangent_cache_blocks),
        l(&STATS.writer_chunks),
        l(&STATS.requests),
        l(&STATS.light_requests),
        runtime_rules_summary(),
        crate::lazy::stats_text().map_or(String::new(), |t| format!("; {t}"))
    );
}

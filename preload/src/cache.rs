//! The code cache: where translated blocks live, how guest addresses find
//! them, block linking and invalidation.
//!
//! Memory comes in chunks placed within ±1 GiB of the guest code they serve,
//! so RIP-relative operands and direct links stay in rel32 reach. Blocks are
//! never freed: an invalidated block is unlinked and forgotten, but a thread
//! still inside it finishes safely.
//!
//! Two ways in: [`CACHE`] (a mutex, for the dispatcher) and [`find_block`]
//! (lock-free, for the signal handler), which reads the append-only
//! `CHUNKS` table and per-chunk block indices.

use crate::context::ThreadCtx;
use crate::lock::Lock;
use crate::stats::STATS;
use crate::sys;
use rewriter::translate::{ExitRecord, InsnMapEntry, TranslateError, EXIT_STUB_LEN};
use rewriter::{ExitKind, TranslateOptions};
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const CHUNK_BYTES: u64 = 64 << 20;
const MAX_CHUNKS: usize = 256;
/// Upper bound of blocks per chunk (a block is at least 24 bytes).
const CHUNK_BLOCK_SLOTS: usize = (CHUNK_BYTES / 32) as usize;
/// How far a chunk may be from the guest code it serves.
const REACH: u64 = 1 << 30;
const RWX: i32 = libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC;

/// A translated block. Immutable after creation except `incoming`
/// (guarded by the cache lock); leaked, so `&'static` references stay valid.
pub struct Block {
    /// First guest address.
    pub guest_start: u64,
    /// One past the last guest byte.
    pub guest_end: u64,
    /// Cache address of the first instruction.
    pub cache_start: u64,
    /// Where direct links and the runtime enter (after the prologue that
    /// lookup-table hits enter at `lookup_entry`).
    pub entry: u64,
    /// Where lookup-table hits enter: code that checks the target is this
    /// block's guest address (the translation starts with it).
    pub lookup_entry: u64,
    /// Bytes of cache code.
    pub cache_len: u64,
    /// Guest-instruction boundaries inside the block.
    pub insn_map: Box<[InsnMapEntry]>,
    /// For a block whose guest code is in writable memory: a copy of that
    /// code, which its entry compares with memory (`ExitKind::Verify`).
    pub guest_bytes: Option<Box<[u8]>>,
}

struct ChunkDesc {
    base: AtomicU64,
    /// Number of blocks published in `index`.
    count: AtomicUsize,
    /// `CHUNK_BLOCK_SLOTS` pointers to `Block`, in increasing cache address.
    index: AtomicU64,
}

/// Chunks, readable without a lock (published with release ordering).
static CHUNKS: [ChunkDesc; MAX_CHUNKS] = [const {
    ChunkDesc {
        base: AtomicU64::new(0),
        count: AtomicUsize::new(0),
        index: AtomicU64::new(0),
    }
}; MAX_CHUNKS];
static CHUNK_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Hashes guest addresses (already well spread in their low bits) with
/// one multiplication: the keys are the program's own code addresses,
/// not input an adversary chooses.
#[derive(Default)]
struct PcHasher(u64);

impl Hasher for PcHasher {
    fn finish(&self) -> u64 {
        self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).rotate_left(5);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

type PcHash = BuildHasherDefault<PcHasher>;

/// The lock-protected part of the cache.
pub struct CodeCache {
    /// Guest start address → block (ordered, so that invalidation can find
    /// the blocks overlapping a range without visiting all of them).
    blocks: BTreeMap<u64, &'static Block>,
    /// The same blocks by guest address, for the exact lookups of every
    /// runtime entry (the ordered map's search was a visible part of
    /// start-up).
    by_pc: HashMap<u64, &'static Block, PcHash>,
    /// Per chunk: next free byte.
    cursors: Vec<u64>,
    /// Patched branch fields pointing at each block: (field, stub) pairs.
    incoming: HashMap<u64, Vec<(u64, u64)>, PcHash>,
    /// Translation settings.
    opts: TranslateOptions,
    /// Executable mappings (start → end, writable) as `/proc/self/maps`
    /// showed them, minus those unmapped or reprotected since: guest code
    /// is read only from these (directly, fault-tolerant), so that jumping
    /// into memory without execute permission faults as it does natively;
    /// code in writable ones is checked at each block entry.
    executable: BTreeMap<u64, (u64, bool)>,
    /// Gigabytes of the address space (`guest_pc / REACH`) where no new
    /// chunk could be placed within reach of the code.
    crowded: Vec<u64>,
    /// The chunk placed anywhere that code in `crowded` regions uses now.
    far: Option<usize>,
}

/// The code cache.
pub static CACHE: Lock<Option<CodeCache>> = Lock::new(None);

/// Creates the cache. Called once by `init`.
pub fn init(opts: TranslateOptions) {
    *CACHE.lock() = Some(CodeCache {
        blocks: BTreeMap::new(),
        by_pc: HashMap::default(),
        cursors: Vec::new(),
        incoming: HashMap::default(),
        opts,
        executable: BTreeMap::new(),
        crowded: Vec::new(),
        far: None,
    });
}

/// Reads guest code for translation: only from executable mappings (the
/// ones known, else those `/proc/self/maps` shows now), copied directly
/// and fault-tolerantly. Returns how many bytes could be read: fewer at the
/// end of executable memory.
fn read_code(executable: &mut BTreeMap<u64, (u64, bool)>, addr: u64, buf: &mut [u8]) -> usize {
    let mut done = 0;
    let mut retried = false;
    while done < buf.len() {
        let a = addr + done as u64;
        let Some(end) = executable_end(executable, a) else {
            return done;
        };
        let n = (end - a).min((buf.len() - done) as u64) as usize;
        let piece = &mut buf[done..done + n];
        // SAFETY: `piece` is our own buffer; a fault on the guest side (the
        // mapping went away behind our back) is recovered by safe_copy.
        if !unsafe { sys::safe_copy(piece.as_mut_ptr(), a as *const u8, n) } {
            // What we knew is stale: look again, once.
            forget_executable(executable, a, a + n as u64);
            if retried {
                return done;
            }
            retried = true;
            continue;
        }
        done += n;
    }
    done
}

/// The end of the executable mapping containing `addr`, consulting
/// `/proc/self/maps` when no known one does.
fn executable_end(executable: &mut BTreeMap<u64, (u64, bool)>, addr: u64) -> Option<u64> {
    let known = |m: &BTreeMap<u64, (u64, bool)>| {
        m.range(..=addr)
            .next_back()
            .filter(|&(_, &(end, _))| addr < end)
            .map(|(_, &(end, _))| end)
    };
    if let Some(end) = known(executable) {
        return Some(end);
    }
    crate::diag::for_each_mapping(|m| {
        if m.executable {
            // Code in a shared mapping can change through another view of
            // its pages (the W^X dual mapping of JIT compilers) without a
            // write or `mprotect` here: check it at each entry like code
            // in writable memory.
            executable.insert(m.start, (m.end, m.writable || m.shared));
        }
        true
    });
    known(executable)
}

/// Whether any known executable mapping overlapping `[start, end)` is
/// writable (its code may change without `mprotect`).
fn writable_code(executable: &BTreeMap<u64, (u64, bool)>, start: u64, end: u64) -> bool {
    executable
        .range(..end)
        .any(|(_, &(e, writable))| writable && e > start)
}

/// Forgets the executable mappings overlapping `[start, end)`.
fn forget_executable(executable: &mut BTreeMap<u64, (u64, bool)>, start: u64, end: u64) {
    let doomed: Vec<u64> = executable
        .range(..end)
        .filter(|&(_, &(e, _))| e > start)
        .map(|(&s, _)| s)
        .collect();
    for s in doomed {
        executable.remove(&s);
    }
}

/// Reads guest code without faulting (a short count at an unmapped page).
pub fn read_guest(addr: u64, buf: &mut [u8]) -> usize {
    // Stop at page boundaries one page at a time so a partially mapped
    // window still yields its mapped prefix.
    let mut done = 0;
    while done < buf.len() {
        let a = addr + done as u64;
        let page_left = (4096 - (a & 4095)) as usize;
        let n = page_left.min(buf.len() - done);
        // SAFETY: the kernel copies into our own buffer's n bytes and
        // reports unreadable guest memory as an error instead of faulting.
        let r = unsafe { sys::process_vm(false, buf[done..].as_mut_ptr(), a, n) };
        if r <= 0 {
            break;
        }
        done += r as usize;
        if (r as usize) < n {
            break;
        }
    }
    done
}

impl CodeCache {
    /// The cache address of the translation of `guest_pc`, translating it
    /// first if needed.
    pub fn lookup_or_translate(&mut self, guest_pc: u64) -> Result<&'static Block, TranslateError> {
        if let Some(b) = self.by_pc.get(&guest_pc) {
            return Ok(b);
        }
        self.translate(guest_pc, None)
    }

    /// A translation of `guest_pc` of at most `max_insns` instructions for
    /// one use (a debugger's breakpoint or single step,
    /// [`crate::gdbserver`]): never looked up or linked to, so that the
    /// next arrival at `guest_pc` comes through the runtime again.
    pub fn translate_once(
        &mut self,
        guest_pc: u64,
        max_insns: usize,
    ) -> Result<&'static Block, TranslateError> {
        self.translate(guest_pc, Some(max_insns))
    }

    /// Translates `guest_pc` into the cache; with `once` (at most that many
    /// instructions) the block is not kept for lookups.
    fn translate(
        &mut self,
        guest_pc: u64,
        once: Option<usize>,
    ) -> Result<&'static Block, TranslateError> {
        let mut chunk = self.chunk_near(guest_pc, 0);
        let layout = ThreadCtx::LAYOUT;
        let mut opts = self.opts;
        if let Some(max) = once {
            opts.max_insns = opts.max_insns.min(max);
        }
        opts.probe_entry = crate::tool::tool().probed(guest_pc);
        if !crate::lazy::active() {
            // Nothing is active yet: the plain translation null mode makes.
            opts.instrument = None;
            opts.tangent_cache = false;
            opts.hold_registers = false;
        }
        let t = loop {
            let Some(ci) = chunk else {
                crate::diag::fatal_at(
                    guest_pc,
                    "no code-cache memory left (256 chunks of 64 MiB, or mmap refused)",
                );
            };
            let cache_pc = self.cursors[ci].next_multiple_of(16);
            let executable = &mut self.executable;
            let mut read = |a: u64, b: &mut [u8]| read_code(executable, a, b);
            let t = match crate::tool::tool().intercepted(guest_pc) {
                // A statically linked guest's wrappers run on the host's
                // %fs base, through a thunk that takes them in r10.
                Some((wrapper, reg, desc)) if crate::static_exec::active() => {
                    rewriter::translate::translate_native_call(
                        guest_pc,
                        cache_pc,
                        &layout,
                        crate::entry::native_host_fs_addr(),
                        &[(reg, desc), (10, wrapper)],
                    )
                }
                Some((wrapper, reg, desc)) => rewriter::translate::translate_native_call(
                    guest_pc,
                    cache_pc,
                    &layout,
                    wrapper,
                    &[(reg, desc)],
                ),
                None => rewriter::translate_block(&mut read, guest_pc, cache_pc, &layout, &opts)?,
            };
            if !opts.verify_entry
                && writable_code(&self.executable, guest_pc, guest_pc + t.guest_len)
            {
                // Code the program can change without mprotect (an
                // executable stack, RWX memory): check it at every entry.
                opts.verify_entry = true;
                continue;
            }
            let base = CHUNKS[ci].base.load(Ordering::Relaxed);
            if cache_pc + t.code.len() as u64 <= base + CHUNK_BYTES {
                break (ci, cache_pc, t);
            }
            chunk = self.chunk_near(guest_pc, 4096);
            if chunk == Some(ci) {
                chunk = self.new_chunk(guest_pc).or_else(|| self.new_far_chunk());
            }
        };
        let (ci, cache_pc, t) = t;
        // SAFETY: [cache_pc, +len) is free cache memory in chunk `ci`, RWX,
        // owned by the cache lock we hold.
        unsafe {
            core::ptr::copy_nonoverlapping(t.code.as_ptr(), cache_pc as *mut u8, t.code.len())
        };
        self.cursors[ci] = cache_pc + t.code.len() as u64;
        let block: &'static Block = Box::leak(Box::new(Block {
            guest_start: guest_pc,
            guest_end: guest_pc + t.guest_len,
            cache_start: cache_pc,
            entry: cache_pc + u64::from(t.entry_off),
            lookup_entry: cache_pc + u64::from(t.lookup_off),
            cache_len: t.code.len() as u64,
            insn_map: t.insn_map.into_boxed_slice(),
            guest_bytes: opts.verify_entry.then(|| {
                let mut bytes = vec![0u8; t.guest_len as usize];
                let n = read_code(&mut self.executable, guest_pc, &mut bytes);
                bytes.truncate(n);
                bytes.into_boxed_slice()
            }),
        }));
        publish(ci, block);
        if once.is_none() {
            self.blocks.insert(guest_pc, block);
            self.by_pc.insert(guest_pc, block);
        }
        // Branches to code translated already are linked now rather than
        // at their first run, which would enter the runtime only for that
        // (not for a block of one use: a single step must come back).
        for &rec in t.exits.iter().filter(|_| once.is_none()) {
            let rec_addr = cache_pc + rec as u64;
            let r = exit_record(rec_addr);
            if ExitKind::from_u32(r.kind) == Some(ExitKind::Branch) && r.patch != 0 {
                if let Some(&target) = self.by_pc.get(&r.target) {
                    self.link(
                        rec_addr.wrapping_add(r.patch as i64 as u64),
                        rec_addr,
                        target,
                    );
                }
            }
        }

        STATS.blocks.fetch_add(1, Ordering::Relaxed);
        if t.tangent_cache_used {
            STATS.tangent_cache_blocks.fetch_add(1, Ordering::Relaxed);
        }
        STATS
            .guest_insns
            .fetch_add(t.guest_insns as u64, Ordering::Relaxed);
        STATS
            .cache_bytes
            .fetch_add(t.code.len() as u64, Ordering::Relaxed);
        Ok(block)
    }

    /// Whether the guest code of the block at `guest_pc` is as it was
    /// translated (for blocks of writable code, at each entry).
    pub fn unchanged(&mut self, guest_pc: u64) -> bool {
        let Some(block) = self.by_pc.get(&guest_pc) else {
            return false;
        };
        let Some(saved) = &block.guest_bytes else {
            return true;
        };
        let mut now = vec![0u8; saved.len()];
        read_code(&mut self.executable, guest_pc, &mut now) == saved.len() && now[..] == saved[..]
    }

    /// Links the branch whose rel32 field is at `field` (belonging to the
    /// exit whose record is at `record`) to `block`, if in reach.
    pub fn link(&mut self, field: u64, record: u64, block: &'static Block) {
        let rel = rewriter::translate::link_field_value(field, block.entry).or_else(|| {
            let via = self.trampoline(field, block)?;
            rewriter::translate::link_field_value(field, via)
        });
        let Some(rel) = rel else {
            return;
        };
        // SAFETY: `field` is the rel32 field of a patchable branch of a
        // block in the cache (never unmapped); we hold the cache lock.
        unsafe { patch_rel32(field, rel) };
        self.incoming
            .entry(block.guest_start)
            .or_default()
            .push((field, record - EXIT_STUB_LEN as u64));
        STATS.links.fetch_add(1, Ordering::Relaxed);
    }

    /// A `jmp [rip]` to `block`'s entry, with the address after it, in the
    /// chunk of the branch field `field`: how a branch links to a block of
    /// a chunk out of its rel32 reach (code in a chunk placed anywhere,
    /// decision 27). It is published as a block of its own, one guest
    /// boundary at `block`'s first instruction, so that a signal arriving
    /// there is delivered as at that instruction. Unlinking the branch
    /// leaves it unused.
    fn trampoline(&mut self, field: u64, block: &'static Block) -> Option<u64> {
        let n = CHUNK_COUNT.load(Ordering::Relaxed);
        let ci = (0..n).find(|&ci| {
            let base = CHUNKS[ci].base.load(Ordering::Relaxed);
            (base..base + CHUNK_BYTES).contains(&field)
        })?;
        if !self.has_room(ci, 16) {
            return None;
        }
        let at = self.cursors[ci].next_multiple_of(16);
        let mut code = [0u8; 14];
        code[..6].copy_from_slice(&[0xff, 0x25, 0, 0, 0, 0]);
        code[6..].copy_from_slice(&block.entry.to_le_bytes());
        // SAFETY: [at, at + 14) is free cache memory in chunk `ci`, RWX,
        // owned by the cache lock we hold; no branch reaches it yet.
        unsafe { core::ptr::copy_nonoverlapping(code.as_ptr(), at as *mut u8, code.len()) };
        self.cursors[ci] = at + code.len() as u64;
        let boundary = InsnMapEntry {
            cache_off: 0,
            guest_pc: block.guest_start,
            boundary: true,
            spills: 0,
            stack_bias: 0,
            scratch: 0,
            tangents: 0,
            held: 0,
            flags_dead: false,
        };
        publish(
            ci,
            Box::leak(Box::new(Block {
                guest_start: block.guest_start,
                guest_end: block.guest_start,
                cache_start: at,
                entry: at,
                lookup_entry: at,
                cache_len: code.len() as u64,
                insn_map: Box::new([boundary]),
                guest_bytes: None,
            })),
        );
        Some(at)
    }

    /// Forgets every block overlapping `[start, end)` and unlinks branches
    /// into them. Returns the lowest guest address of a dropped block, if
    /// any: a block may start before `start` and run into the range, and
    /// the lookup tables must forget its address too.
    pub fn invalidate(&mut self, start: u64, end: u64) -> Option<u64> {
        forget_executable(&mut self.executable, start, end);
        // A block covers at most MAX_BLOCK_INSNS instructions of ≤ 15 bytes.
        let reach = (rewriter::translate::MAX_BLOCK_INSNS * 15) as u64;
        let doomed: Vec<u64> = self
            .blocks
            .range(start.saturating_sub(reach)..end)
            .map(|(_, b)| b)
            .filter(|b| b.guest_start < end && b.guest_end > start)
            .map(|b| b.guest_start)
            .collect();
        for g in &doomed {
            self.blocks.remove(g);
            self.by_pc.remove(g);
            unlink(self.incoming.remove(g).unwrap_or_default());
        }
        STATS
            .invalidated
            .fetch_add(doomed.len() as u64, Ordering::Relaxed);
        doomed.iter().copied().min()
    }

    /// Forgets every block and unlinks every branch between blocks (their
    /// code stays where it is, for a thread still inside one); returns how
    /// many were dropped. The caller drops the lookup tables' entries.
    pub fn forget_all(&mut self) -> u64 {
        for (_, links) in self.incoming.drain() {
            unlink(links);
        }
        let n = self.blocks.len() as u64;
        self.blocks.clear();
        self.by_pc.clear();
        n
    }

    /// A chunk with room for `need` more bytes, within reach of
    /// `guest_pc` where the address space around it has room for one;
    /// else (a JIT compiler's reservations fill the gigabyte around its
    /// code) one anywhere: the translator then rewrites RIP-relative
    /// operands with absolute addresses, and branches to blocks of other
    /// chunks out of reach link through trampolines ([`Self::trampoline`]).
    fn chunk_near(&mut self, guest_pc: u64, need: u64) -> Option<usize> {
        let n = CHUNK_COUNT.load(Ordering::Relaxed);
        for ci in (0..n).rev() {
            let base = CHUNKS[ci].base.load(Ordering::Relaxed);
            let within =
                guest_pc.abs_diff(base) < REACH && guest_pc.abs_diff(base + CHUNK_BYTES) < REACH;
            if within && self.has_room(ci, need) {
                return Some(ci);
            }
        }
        let region = guest_pc / REACH;
        if !self.crowded.contains(&region) {
            if let Some(ci) = self.new_chunk(guest_pc) {
                return Some(ci);
            }
            // Searching again for every block of this code would cost
            // some thirty refused mappings each time.
            self.crowded.push(region);
        }
        match self.far {
            Some(ci) if self.has_room(ci, need) => Some(ci),
            _ => self.new_far_chunk(),
        }
    }

    fn has_room(&self, ci: usize, need: u64) -> bool {
        self.cursors[ci] + need + 8192 < CHUNKS[ci].base.load(Ordering::Relaxed) + CHUNK_BYTES
    }

    /// Maps a new chunk within reach of `guest_pc`.
    fn new_chunk(&mut self, guest_pc: u64) -> Option<usize> {
        if CHUNK_COUNT.load(Ordering::Relaxed) >= MAX_CHUNKS {
            return None;
        }
        let around = guest_pc & !(CHUNK_BYTES - 1);
        for k in 1..16u64 {
            for cand in [
                around.wrapping_sub(k * CHUNK_BYTES),
                around.wrapping_add(k * CHUNK_BYTES),
            ] {
                if cand > 0x10000 && cand < (1 << 47) - CHUNK_BYTES {
                    if let Some(base) = sys::map_anon(CHUNK_BYTES as usize, RWX, cand, true) {
                        return self.add_chunk(base);
                    }
                }
            }
        }
        None
    }

    /// Maps a new chunk wherever the kernel puts it, for code with no
    /// free address space within reach.
    fn new_far_chunk(&mut self) -> Option<usize> {
        if CHUNK_COUNT.load(Ordering::Relaxed) >= MAX_CHUNKS {
            return None;
        }
        let base = sys::map_anon(CHUNK_BYTES as usize, RWX, 0, false)?;
        let ci = self.add_chunk(base)?;
        self.far = Some(ci);
        Some(ci)
    }

    /// Publishes the chunk mapped at `base`.
    fn add_chunk(&mut self, base: u64) -> Option<usize> {
        let n = CHUNK_COUNT.load(Ordering::Relaxed);
        sys::advise_huge_pages(base, CHUNK_BYTES as usize);
        let index = sys::map_anon(
            CHUNK_BLOCK_SLOTS * 8,
            libc::PROT_READ | libc::PROT_WRITE,
            0,
            false,
        )?;
        CHUNKS[n].index.store(index, Ordering::Relaxed);
        CHUNKS[n].base.store(base, Ordering::Relaxed);
        self.cursors.push(base);
        CHUNK_COUNT.store(n + 1, Ordering::Release);
        Some(n)
    }

    /// Takes the place of the cache's own state in a child after `fork`:
    /// nothing to do, the copy is consistent because the lock was held.
    pub fn fork_child(&mut self) {}
}

/// Points each linked branch `(field, stub)` back at its exit stub.
fn unlink(links: Vec<(u64, u64)>) {
    for (field, stub) in links {
        let rel =
            rewriter::translate::link_field_value(field, stub).expect("stub is near its branch");
        // SAFETY: `field` is the rel32 field of a patchable branch of a
        // block in the cache (never unmapped), its stub within reach; the
        // caller holds the cache lock.
        unsafe { patch_rel32(field, rel) };
    }
}

/// Makes `block`, the latest code of chunk `ci`, findable by
/// [`find_block`].
fn publish(ci: usize, block: &'static Block) {
    let desc = &CHUNKS[ci];
    let n = desc.count.load(Ordering::Relaxed);
    if n < CHUNK_BLOCK_SLOTS {
        // SAFETY: the index has CHUNK_BLOCK_SLOTS slots; slot n is unused.
        unsafe {
            *(desc.index.load(Ordering::Relaxed) as *mut u64).add(n) = block as *const Block as u64
        };
        desc.count.store(n + 1, Ordering::Release);
    }
}

/// Whether `pc` lies in cache memory.
pub fn in_cache(pc: u64) -> bool {
    chunk_of(pc).is_some()
}

fn chunk_of(pc: u64) -> Option<&'static ChunkDesc> {
    let n = CHUNK_COUNT.load(Ordering::Acquire);
    CHUNKS[..n].iter().find(|c| {
        let base = c.base.load(Ordering::Relaxed);
        pc >= base && pc < base + CHUNK_BYTES
    })
}

/// The block containing cache address `pc`, without taking any lock
/// (signal-safe).
pub fn find_block(pc: u64) -> Option<&'static Block> {
    let c = chunk_of(pc)?;
    let n = c.count.load(Ordering::Acquire);
    let index = c.index.load(Ordering::Relaxed) as *const u64;
    // SAFETY: the first `n` slots were published with release ordering and
    // point at leaked, immutable blocks.
    let slots = unsafe { core::slice::from_raw_parts(index, n) };
    let start_of = |b: u64| {
        // SAFETY: as above.
        unsafe { (*(b as *const Block)).cache_start }
    };
    let i = slots.partition_point(|&b| start_of(b) <= pc);
    if i == 0 {
        return None;
    }
    // SAFETY: as above.
    let b = unsafe { &*(slots[i - 1] as *const Block) };
    (pc < b.cache_start + b.cache_len).then_some(b)
}

/// The decoded instruction of an instrument exit's record.
pub fn instrument_record(addr: u64) -> &'static iced_x86::Instruction {
    // SAFETY: instrument exits carry an `InstrumentRecord`, whose `insn`
    // points at an instruction the translator leaked for the life of the
    // process.
    unsafe {
        let rec = core::ptr::read_unaligned(addr as *const rewriter::translate::InstrumentRecord);
        &*(rec.insn as *const iced_x86::Instruction)
    }
}

/// Reads an exit record placed in the cache by the translator.
pub fn exit_record(addr: u64) -> ExitRecord {
    // SAFETY: exit stubs pass the address of their own record, which lives
    // in cache memory that is never unmapped.
    unsafe { core::ptr::read_unaligned(addr as *const ExitRecord) }
}

/// Writes `rel` into the rel32 field at `field` (which `Emitter::align_field`
/// placed inside one aligned 8-byte word) with one atomic store of that
/// word, so that a thread executing the branch meanwhile sees the old or
/// the new target, never a mix. The word's other bytes are written back
/// unchanged; callers serialise patches (the cache lock).
///
/// # Safety
/// `field` must be the rel32 field of a patchable branch of a block in
/// the cache, which is writable and never unmapped.
unsafe fn patch_rel32(field: u64, rel: i32) {
    let word = field & !7;
    let shift = (field - word) * 8;
    debug_assert!(field - word <= 4, "field crosses an 8-byte word");
    // SAFETY: the caller's contract: `word` is the aligned 8-byte word
    // holding the field, in mapped cache memory.
    let w = unsafe { &*(word as *const core::sync::atomic::AtomicU64) };
    let old = w.load(core::sync::atomic::Ordering::Relaxed);
    let mask = 0xffff_ffffu64 << shift;
    let new = (old & !mask) | (u64::from(rel as u32) << shift);
    w.store(new, core::sync::atomic::Ordering::Release);
}

/// Writes every block of the cache to `path` (`DGAD_DUMP_CACHE`), a text
/// file of one `block <guest start> <guest end> <cache start> <entry>
/// <cache bytes>` line per block, followed by its map (`map <cache
/// offset> <guest pc> <boundary>`) and its code as hex (`code <hex>`).
/// `scripts/cache_profile.py` reads it beside a callgrind profile. Called
/// at exit; never in signal context.
pub fn dump(path: &[u8]) {
    use std::fmt::Write as _;
    let file = match crate::user_files::replace("DGAD_DUMP_CACHE", path) {
        Ok(file) => file,
        Err(e) => {
            crate::dgad_eprintln!("{}", e);
            return;
        }
    };
    let fd = file.fd;
    let guard = CACHE.lock();
    let Some(cache) = guard.as_ref() else {
        let _ = file.commit();
        return;
    };
    let mut out = String::new();
    for b in cache.blocks.values() {
        let _ = writeln!(
            out,
            "block {:#x} {:#x} {:#x} {:#x} {}",
            b.guest_start, b.guest_end, b.cache_start, b.entry, b.cache_len
        );
        for e in b.insn_map.iter() {
            let _ = writeln!(
                out,
                "map {} {:#x} {}",
                e.cache_off,
                e.guest_pc,
                u8::from(e.boundary)
            );
        }
        // SAFETY: the block's cache bytes are mapped for the process's life.
        let code = unsafe {
            core::slice::from_raw_parts(b.cache_start as *const u8, b.cache_len as usize)
        };
        out.push_str("code ");
        for byte in code {
            let _ = write!(out, "{byte:02x}");
        }
        out.push('\n');
        if out.len() > 1 << 20 {
            sys::write_all(fd, out.as_bytes());
            out.clear();
        }
    }
    sys::write_all(fd, out.as_bytes());
    drop(guard);
    if let Err(e) = file.commit() {
        crate::dgad_eprintln!(
            "cannot write DGAD_DUMP_CACHE={}: {}",
            String::from_utf8_lossy(path),
            std::io::Error::from_raw_os_error(e as i32)
        );
    }
}

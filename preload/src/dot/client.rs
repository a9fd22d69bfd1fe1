//! Derivgrind's client requests in dot mode: `DG_SET_DOTVALUE` and
//! `DG_GET_DOTVALUE` move tangents between a variable's shadow and a
//! variable of the program's; `DG_GET_MODE` answers `d`.
//!
//! The recording requests have a meaning here too, so that a program
//! marked for record mode runs in dot mode unchanged: an index becomes a
//! *token* naming a tangent (or a marked input, or a variable), kept for a
//! few requests in the thread's state ([`Marks`]). An input mark
//! (`NEW_INDEX` of nothing, `SET_INDEX` on the variable, `INDEX_TO_FILE`)
//! seeds the variable with the next line of `dg-input-dots`; an output
//! mark (`GET_INDEX`, a `NEW_INDEX` of it with partial 1, `INDEX_TO_FILE`)
//! appends its tangent to `dg-output-dots` ([`super::files`]). Without a
//! record directory the marks change no tangent. `GET_INDEX` leaves the
//! index as the program had it, as Derivgrind's forward mode does; the
//! `NEW_INDEX` right after it takes the variable it asked about for its
//! operand 0. `NEW_INDEX`
//! combines tangents with the given partials and `SET_INDEX` of such a
//! token sets a variable's tangent: the custom-derivative pattern works as
//! in record mode. A variable's type (float, double, x87) is told by
//! comparing its bytes with the value the request carries.

use super::files;
use super::mode::{load, store};
use super::DotState;
use crate::context::{reg, ThreadCtx};
use crate::guest_mem::read_mem;
use crate::tool::request::*;
use rewriter::semantics::Elem;

/// The request block's six words; a word that cannot be read is 0.
fn load_words(addr: u64) -> [u64; 6] {
    let mut w = [0u64; 6];
    if !crate::guest_mem::read_words(addr, &mut w) {
        return [0; 6];
    }
    w
}

/// The type of a `size`-byte floating-point variable: float, double, or
/// x87 long double (10 bytes, or 16 with its padding).
fn elem_of(size: u64) -> Option<Elem> {
    match size {
        4 => Some(Elem::F32),
        8 => Some(Elem::F64),
        10 | 12 | 16 => Some(Elem::F80),
        _ => None,
    }
}

/// Bytes of a value of type `e`.
fn width(e: Elem) -> usize {
    crate::ad::elem_bytes(e)
}

/// Answers the request; sets `rdx` to its result (unknown requests keep
/// the default).
pub fn handle(ctx: &mut ThreadCtx) {
    let args = load_words(ctx.regs.gpr[reg::RAX]);
    let asked = core::mem::take(&mut ctx.dot().marks.asked);
    if args[0] == NEW_INDEX || args[0] == NEW_INDEX_NOACTIVITYANALYSIS {
        ctx.dot().marks.asked = asked;
    }
    if args[0] == MARK_INPUT || args[0] == MARK_OUTPUT {
        mark(ctx, args);
        ctx.regs.gpr[reg::RDX] = 1;
        return;
    }
    let result = match args[0] {
        GET_MODE => Some(u64::from(b'd')),
        SET_DOTVALUE | GET_DOTVALUE => {
            let (addr, daddr, size) = (args[1], args[2], args[3]);
            match elem_of(size) {
                Some(e)
                    if shadowmem::is_app_range(addr, addr + width(e) as u64)
                        && shadowmem::is_app_range(daddr, daddr + width(e) as u64) =>
                {
                    if args[0] == SET_DOTVALUE {
                        set_dot(ctx, addr, daddr, e);
                    } else {
                        get_dot(addr, daddr, e);
                    }
                    Some(1)
                }
                _ => {
                    crate::dgad_eprintln!(
                        "dot: DG_{}_DOTVALUE with size {} at {:#x} ignored (sizes: 4 float, 8 double, 10 or 16 long double)",
                        if args[0] == SET_DOTVALUE { "SET" } else { "GET" },
                        size,
                        addr
                    );
                    None
                }
            }
        }
        DISABLE => Some(0),
        // The index stays as the program had it (Derivgrind's forward
        // mode answers nothing); the variable is remembered for an output
        // mark's `NEW_INDEX`, which comes next.
        GET_INDEX => {
            ctx.dot().marks.asked = args[1];
            Some(1)
        }
        NEW_INDEX | NEW_INDEX_NOACTIVITYANALYSIS => {
            new_index(ctx, args[0], args[1]);
            Some(1)
        }
        SET_INDEX => {
            if let Some(token) = crate::guest_mem::read_u64(args[2]) {
                set_index(ctx, args[1], token);
            }
            Some(1)
        }
        INDEX_TO_FILE => {
            if let Some(token) = crate::guest_mem::read_u64(args[2]) {
                index_to_file(ctx, args[1], token);
            }
            None
        }
        GET_FLAGS => Some(0),
        _ => None,
    };
    if let Some(v) = result {
        ctx.regs.gpr[reg::RDX] = v;
    }
}

/// The `n` shadow bytes of application memory at `addr` (zeros outside it).
fn shadow_read(addr: u64, n: usize) -> [u8; 10] {
    let mut b = [0u8; 10];
    if shadowmem::is_app_range(addr, addr + n as u64) {
        // SAFETY: application memory, whose shadow is mapped for the
        // whole process.
        unsafe {
            core::ptr::copy_nonoverlapping(
                shadowmem::shadow_of(addr) as *const u8,
                b.as_mut_ptr(),
                n,
            )
        };
    }
    b
}

/// Writes the shadow of application memory at `addr` (nothing outside it).
fn shadow_write(addr: u64, bytes: &[u8]) {
    if shadowmem::is_app_range(addr, addr + bytes.len() as u64) {
        // SAFETY: as in `shadow_read`.
        unsafe {
            core::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                shadowmem::shadow_of(addr) as *mut u8,
                bytes.len(),
            )
        };
    }
}

/// The tangent of the variable at `addr` becomes the value of the
/// program's variable at `daddr` (same type): a tangent has its value's
/// format, so its bytes are the seed's.
fn set_dot(ctx: &mut ThreadCtx, addr: u64, daddr: u64, e: Elem) {
    let mut v = [0u8; 10];
    if read_mem(daddr, &mut v[..width(e)]) {
        note_narrow(ctx, &v, e);
        shadow_write(addr, &v[..width(e)]);
    }
}

/// The program's variable at `daddr` gets the tangent of the variable at
/// `addr`; its own bytes are a passive value.
fn get_dot(addr: u64, daddr: u64, e: Elem) {
    let t = shadow_read(addr, width(e));
    crate::guest_mem::write_result(daddr, &t[..width(e)]);
}

/// What a token names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mark {
    /// Nothing (a free slot).
    None,
    /// A tangent with the value it belongs to (`NEW_INDEX`).
    Tangent(f64, f64),
    /// A new input whose value is this (`NEW_INDEX` of nothing).
    Input(f64),
    /// An input attached to the variable at this address, of this type
    /// (`SET_INDEX`), waiting for its `INDEX_TO_FILE`.
    InputAt(u64, Elem),
}

const MARKS: usize = 8;
/// Tokens look like no index a tape would reach.
const TOKEN_BASE: u64 = 0x4447 << 48;

/// A thread's latest tokens (all zeros: none).
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Marks {
    count: u64,
    slots: [(u64, Mark); MARKS],
    /// The variable of the latest `GET_INDEX`, until the next request.
    asked: u64,
}

impl Marks {
    /// A new token naming `m`.
    fn make(&mut self, m: Mark) -> u64 {
        self.count += 1;
        let token = TOKEN_BASE + self.count;
        self.slots[(self.count as usize) % MARKS] = (token, m);
        token
    }

    /// What `token` names (`Mark::None`: not one of the latest).
    fn get(&self, token: u64) -> Mark {
        match self.slots[(token as usize) % MARKS] {
            (t, m) if t == token && token > TOKEN_BASE => m,
            _ => Mark::None,
        }
    }

    fn set(&mut self, token: u64, m: Mark) {
        let slot = &mut self.slots[(token as usize) % MARKS];
        if slot.0 == token {
            slot.1 = m;
        }
    }
}

/// The type of the variable at `addr` that holds `value`: a double, a
/// float or an x87 long double, by its bytes (`None`: none of them).
fn elem_holding(addr: u64, value: f64) -> Option<Elem> {
    let mut b = [0u8; 10];
    if !read_mem(addr, &mut b) && !read_mem(addr, &mut b[..8]) {
        return None;
    }
    // A mark without its value: none.
    let (double, float, x87) = crate::ad::guest::mark_readings(&b, value)?;
    let same = |v: f64| v == value || v.is_nan() && value.is_nan();
    if same(double) {
        Some(Elem::F64)
    } else if same(float) {
        Some(Elem::F32)
    } else if same(x87) {
        Some(Elem::F80)
    } else {
        None
    }
}

/// The tangent of the variable at `addr` of type `e`.
fn tangent_at(addr: u64, e: Elem) -> f64 {
    load(&shadow_read(addr, width(e))[..width(e)], e)
}

/// Gives the variable at `addr` of type `e` tangent `t`.
fn set_tangent(ctx: &mut ThreadCtx, addr: u64, e: Elem, t: f64) {
    let mut b = [0u8; 10];
    store(&mut b[..width(e)], e, t);
    note_narrow(ctx, &b, e);
    shadow_write(addr, &b[..width(e)]);
}

/// The tangent a token stands for.
fn tangent_of(ctx: &ThreadCtx, token: u64) -> f64 {
    match ctx.dot_ref().marks.get(token) {
        Mark::Tangent(t, _) => t,
        _ => 0.0,
    }
}

/// The tangent of the variable the `GET_INDEX` just before asked about
/// (holding `value`), 0 without one.
fn asked_tangent(ctx: &ThreadCtx, value: f64) -> f64 {
    match ctx.dot_ref().marks.asked {
        0 => 0.0,
        addr => match elem_holding(addr, value) {
            Some(e) => tangent_at(addr, e),
            None => {
                if files::active() {
                    untyped_mark();
                }
                0.0
            }
        },
    }
}

/// An index (8 bytes) for the program: its bytes carry no tangent.
fn store_u64(addr: u64, v: u64) {
    crate::guest_mem::write_result(addr, &v.to_le_bytes());
}

/// dgad's one-request marks (`MARK_INPUT`, `MARK_OUTPUT`: `args` is the
/// request block): what the header's three requests of the mark do, in
/// their order, with the token for the program's index variable.
fn mark(ctx: &mut ThreadCtx, args: [u64; 6]) {
    let (addr, value, to_file) = (args[1], f64::from_bits(args[2]), args[3] != 0);
    let token = if args[0] == MARK_INPUT {
        // NEW_INDEX_NOACTIVITYANALYSIS of nothing, then SET_INDEX, which
        // finds the variable's type for its seed: without a record
        // directory there is none, and nothing else tells the difference.
        let token = new_token(ctx, NEW_INDEX_NOACTIVITYANALYSIS, [0, 0], [0.0, 0.0], value);
        if files::active() {
            set_index(ctx, addr, token);
        }
        token
    } else {
        // GET_INDEX (the program's index variable keeps its 0), then
        // NEW_INDEX_NOACTIVITYANALYSIS of it with partial 1.
        ctx.dot().marks.asked = addr;
        new_token(ctx, NEW_INDEX_NOACTIVITYANALYSIS, [0, 0], [1.0, 0.0], value)
    };
    if to_file {
        // INDEX_TO_FILE, which forgets the variable asked about.
        ctx.dot().marks.asked = 0;
        index_to_file(ctx, u64::from(args[0] == MARK_OUTPUT), token);
    }
    store_u64(args[4], token);
}

/// `NEW_INDEX`: the pointers to the operand tokens, the partials, the new
/// token's place and the result's value are at `info`.
fn new_index(ctx: &mut ThreadCtx, request: u64, info: u64) {
    let p = load_words(info);
    let word = |a: u64| crate::guest_mem::read_u64(a).unwrap_or(0);
    let (i1, i2) = (word(p[0]), word(p[1]));
    let (p1, p2) = (f64::from_bits(word(p[2])), f64::from_bits(word(p[3])));
    let value = f64::from_bits(word(p[5]));
    let token = new_token(ctx, request, [i1, i2], [p1, p2], value);
    store_u64(p[4], token);
}

/// The token `NEW_INDEX` (`request`) gives for operand tokens `[i1, i2]`
/// with partials `[p1, p2]` and the result's value.
fn new_token(
    ctx: &mut ThreadCtx,
    request: u64,
    [i1, i2]: [u64; 2],
    [p1, p2]: [f64; 2],
    value: f64,
) -> u64 {
    let output = i1 == 0 && p1 != 0.0 && ctx.dot_ref().marks.asked != 0;
    let token = if output {
        let t = p1 * asked_tangent(ctx, value);
        ctx.dot().marks.make(Mark::Tangent(t, value))
    } else if i1 == 0 && i2 == 0 {
        if request == NEW_INDEX {
            0 // activity analysis: a passive result
        } else {
            ctx.dot().marks.make(Mark::Input(value))
        }
    } else {
        let term = |i: u64, p: f64| {
            if i == 0 || p == 0.0 {
                0.0
            } else {
                p * tangent_of(ctx, i)
            }
        };
        let t = term(i1, p1) + term(i2, p2);
        ctx.dot().marks.make(Mark::Tangent(t, value))
    };
    token
}

/// `SET_INDEX`: the variable at `addr` becomes what `token` names.
fn set_index(ctx: &mut ThreadCtx, addr: u64, token: u64) {
    match ctx.dot_ref().marks.get(token) {
        Mark::Input(value) => {
            if let Some(e) = elem_holding(addr, value) {
                ctx.dot().marks.set(token, Mark::InputAt(addr, e));
            }
        }
        Mark::Tangent(t, value) => {
            if let Some(e) = elem_holding(addr, value) {
                set_tangent(ctx, addr, e, t);
            }
        }
        // Index 0 (a passive copy) and unknown indices: a tangent has no
        // place for them (Derivgrind's forward mode ignores them too).
        _ => {}
    }
}

/// `INDEX_TO_FILE`: an input takes its seed, an output's tangent is kept.
fn index_to_file(ctx: &mut ThreadCtx, which: u64, token: u64) {
    match (which, ctx.dot_ref().marks.get(token)) {
        (0, Mark::InputAt(addr, e)) => {
            if let Some(seed) = files::next_input_seed() {
                set_tangent(ctx, addr, e, seed);
            }
        }
        (0, m) => {
            // An input mark whose variable was not found: its line is
            // still used up, so the next inputs keep theirs.
            if files::next_input_seed().is_some() && matches!(m, Mark::Input(_)) {
                untyped_mark();
            }
        }
        (_, Mark::Tangent(t, _)) => files::output(t),
        (_, _) => files::output(0.0),
    }
}

/// Says once that a marked input's tangent from `dg-input-dots` was not
/// set, or a marked output's is not known: the mark's value matched none
/// of the variable's readings (a float, a double, an x87 value), which is
/// how a mark without its value looks.
fn untyped_mark() {
    static SAID: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, core::sync::atomic::Ordering::Relaxed) {
        crate::dgad_eprintln!(
            "dot: a variable marked without its value (Derivgrind's Fortran dg_inputf(c_loc(x)) and dg_outputf do not say x's type), or with one it does not hold: an input's tangent from dg-input-dots is not set (its line is used up), an output's is written as 0; in dot mode, seed and read such variables with dg_set_dotvalue and dg_get_dotvalue"
        );
    }
}

/// A float's or an x87 value's tangent (its bytes `t`) set here is noted
/// as a narrow value's (`ad::apply::NarrowValues`), as record mode notes
/// such inputs: put together again from 32-bit words in a general
/// register, it keeps its tangent.
fn note_narrow(ctx: &mut ThreadCtx, t: &[u8; 10], e: Elem) {
    let word = u32::from_le_bytes(t[..4].try_into().unwrap());
    if e != Elem::F64 && word != 0 {
        ctx.dot().rule_memory.narrow.note(word);
    }
}

/// Derivgrind's monitor commands in forward mode: `get ADDR` (also `fget`,
/// `lget` for a float or long double) answers `dot value: X`; `set ADDR
/// VALUE` (`fset`, `lset`) sets the tangent of the variable at ADDR.
pub fn monitor(ctx: &mut ThreadCtx, words: &[&str]) -> Option<String> {
    let (command, rest) = words.split_first()?;
    let (elem, set) = match *command {
        "get" => (Elem::F64, false),
        "fget" => (Elem::F32, false),
        "lget" => (Elem::F80, false),
        "set" => (Elem::F64, true),
        "fset" => (Elem::F32, true),
        "lset" => (Elem::F80, true),
        _ => return None,
    };
    let usage = || {
        Some(format!(
            "usage: {command} ADDRESS{}\n",
            if set { " VALUE" } else { "" }
        ))
    };
    let Some(addr) = rest.first().and_then(|a| parse_address(a)) else {
        return usage();
    };
    if !shadowmem::is_app_range(addr, addr + width(elem) as u64) {
        return Some(format!(
            "{command}: {addr:#x} is not in the program's memory\n"
        ));
    }
    if set {
        let Some(value) = rest.get(1).and_then(|v| v.parse::<f64>().ok()) else {
            return usage();
        };
        let mut t = [0u8; 10];
        store(&mut t, elem, value);
        note_narrow(ctx, &t, elem);
        shadow_write(addr, &t[..width(elem)]);
        Some(String::new())
    } else {
        let t = shadow_read(addr, width(elem));
        Some(format!("dot value: {}\n", load(&t, elem)))
    }
}

/// An address as gdb prints it (`0x…`) or in decimal.
pub fn parse_address(text: &str) -> Option<u64> {
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => text.parse().ok(),
    }
}

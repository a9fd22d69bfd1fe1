//! Derivgrind's client requests (`valgrind/derivgrind.h`), answered by the
//! runtime: the guest executed the request sequence with `rax` pointing to
//! `{request, arg1, …, arg5}` and the default result in `rdx`.

use super::recorder;
use super::RecordState;
use crate::ad::guest::{read_index, read_u64, ShadowLoc};
use crate::context::{reg, ThreadCtx};
use crate::tool::request::*;
use std::sync::atomic::Ordering;

/// Reads the six words at `addr` in one go (a request block, or
/// `NEW_INDEX`'s pointers); a word that cannot be read is 0.
fn load_words(addr: u64) -> [u64; 6] {
    let mut w = [0u64; 6];
    if crate::guest_mem::read_words(addr, &mut w) {
        w
    } else {
        core::array::from_fn(|i| read_u64(addr + 8 * i as u64).unwrap_or(0))
    }
}

/// An index for the program (an integer: its bytes carry no derivative).
fn store_u64(addr: u64, v: u64) {
    crate::guest_mem::write_result(addr, &v.to_le_bytes());
}

fn shadow_at(addr: u64) -> Option<ShadowLoc> {
    shadowmem::is_app(addr).then(|| ShadowLoc::Mem(shadowmem::shadow_of(addr)))
}

/// Answers the request; sets `rdx` to its result (unknown requests and
/// requests of other modes leave the default).
pub fn handle(ctx: &mut ThreadCtx) {
    let Some(r) = recorder() else {
        return;
    };
    let args = load_words(ctx.regs.gpr[reg::RAX]);
    let word = |i: usize| args[i];
    let request = word(0);
    let result = match request {
        GET_MODE => Some(u64::from(b'b')),
        DISABLE => {
            let delta = word(1) as i64 - word(2) as i64;
            let previous = r.disabled.fetch_add(delta, Ordering::AcqRel);
            if previous + delta > 0 {
                super::stop_inline_recording();
            }
            Some(previous as u64)
        }
        // Like Derivgrind, handled requests answer 1 (GET_MODE answers the
        // mode, INDEX_TO_FILE keeps the default; DISABLE answers the
        // previous counter, a dgad choice documented in the header).
        GET_INDEX => {
            if let Some(loc) = shadow_at(word(1)) {
                store_u64(word(2), u64::from(read_index(ctx, loc)));
            }
            Some(1)
        }
        SET_INDEX => {
            if let (Some(loc), Some(index)) = (shadow_at(word(1)), read_u64(word(2))) {
                set_index(ctx, loc, index);
                note_narrow_input(ctx, word(1), index);
            }
            Some(1)
        }
        NEW_INDEX | NEW_INDEX_NOACTIVITYANALYSIS => {
            let info = load_words(word(1));
            let ptr = |i: usize| info[i];
            let (i1, i2) = (read_u64(ptr(0)).unwrap_or(0), read_u64(ptr(1)).unwrap_or(0));
            let p1 = f64::from_bits(read_u64(ptr(2)).unwrap_or(0));
            let p2 = f64::from_bits(read_u64(ptr(3)).unwrap_or(0));
            let index = if request == NEW_INDEX && i1 == 0 && i2 == 0 {
                0
            } else {
                r.new_block(ctx, i1, p1, i2, p2)
            };
            let value = f64::from_bits(read_u64(ptr(5)).unwrap_or(0));
            ctx.rec().rule_memory.new_index = (index as u32, value);
            store_u64(ptr(4), index);
            Some(1)
        }
        // dgad's one-request marks: what the header's three requests do,
        // in their order, the index variable written last.
        MARK_INPUT | MARK_OUTPUT => {
            let (addr, value, to_file) = (word(1), f64::from_bits(word(2)), word(3) != 0);
            let index = if request == MARK_INPUT {
                let index = r.new_block(ctx, 0, 0.0, 0, 0.0);
                ctx.rec().rule_memory.new_index = (index as u32, value);
                if let Some(loc) = shadow_at(addr) {
                    set_index(ctx, loc, index);
                    note_narrow_input(ctx, addr, index);
                }
                index
            } else {
                let of_value = shadow_at(addr).map_or(0, |loc| u64::from(read_index(ctx, loc)));
                let index = r.new_block(ctx, of_value, 1.0, 0, 0.0);
                ctx.rec().rule_memory.new_index = (index as u32, value);
                index
            };
            if to_file {
                r.declare(u64::from(request == MARK_OUTPUT), index);
            }
            store_u64(word(4), index);
            Some(1)
        }
        INDEX_TO_FILE => {
            if let Some(index) = read_u64(word(2)) {
                r.declare(word(1), index);
            }
            None
        }
        GET_FLAGS => Some(0),
        // Dot values do not exist in record mode; the bit-trick finder's
        // flags are not implemented. Both leave memory as it is.
        GET_DOTVALUE | SET_DOTVALUE | SET_FLAGS => None,
        _ => None,
    };
    if let Some(v) = result {
        ctx.regs.gpr[reg::RDX] = v;
    }
}

/// An input (`NEW_INDEX` with its value, then `SET_INDEX` on the
/// variable) whose bytes hold the value as a float or a long double, not
/// as a double: its index is noted as a narrow value's
/// (`apply::NarrowValues`), so that a float input packed beside another
/// word in a general register keeps its derivative.
fn note_narrow_input(ctx: &mut ThreadCtx, addr: u64, index: u64) {
    let (new, value) = ctx.rec().rule_memory.new_index;
    if index == 0 || u64::from(new) != index {
        return;
    }
    let mut b = [0u8; 10];
    if !crate::ad::guest::read_mem(addr, &mut b) {
        return;
    }
    // A mark without a value tells nothing.
    let Some((double, float, x87)) = crate::ad::guest::mark_readings(&b, value) else {
        return;
    };
    if double != value && (float == value || x87 == value) {
        ctx.rec().rule_memory.narrow.note(new);
    }
}

/// Gives the value at `loc` the index `index` (its first granule).
fn set_index(ctx: &mut ThreadCtx, loc: ShadowLoc, index: u64) {
    let Ok(i) = u32::try_from(index) else {
        crate::dgad_eprintln!(
            "record: DG_SET_INDEX with index {} beyond the 4-byte index range; ignored",
            index
        );
        return;
    };
    crate::ad::guest::write_shadow(ctx, loc, &i.to_le_bytes());
}

/// Derivgrind's monitor commands when recording: `mark ADDR` makes the
/// double at ADDR an input (a new index, which it answers as `index: N`;
/// the input index file is the caller's to write, as with Derivgrind), and
/// `index ADDR` answers the index of the value at ADDR.
pub fn monitor(ctx: &mut ThreadCtx, words: &[&str]) -> Option<String> {
    let (command, rest) = words.split_first()?;
    if !matches!(*command, "mark" | "index") {
        return None;
    }
    let Some(addr) = rest
        .first()
        .and_then(|a| crate::dot::client::parse_address(a))
    else {
        return Some(format!("usage: {command} ADDRESS\n"));
    };
    let Some(loc) = shadow_at(addr) else {
        return Some(format!(
            "{command}: {addr:#x} is not in the program's memory\n"
        ));
    };
    let index = if *command == "mark" {
        let Some(r) = recorder() else {
            return Some("mark: not recording\n".into());
        };
        let index = r.new_block(ctx, 0, 0.0, 0, 0.0);
        set_index(ctx, loc, index);
        index
    } else {
        u64::from(read_index(ctx, loc))
    };
    Some(format!("index: {index}\n"))
}

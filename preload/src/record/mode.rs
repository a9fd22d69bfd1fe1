//! Record mode as a back-end of the shared AD rules ([`crate::ad`]): a
//! shade is a tape index, kept in a value's first 4-byte shadow granule,
//! and combining shades appends a tape block.

use super::{recorder, RecordState};
use crate::ad::apply::RuleMemory;
use crate::ad::{Mode, Shade};
use crate::context::ThreadCtx;
use rewriter::semantics::Elem;

/// Record mode's back-end.
pub struct RecordMode;

/// The back-end the record tool hands to the rules.
pub static RECORD_MODE: RecordMode = RecordMode;

impl Mode for RecordMode {
    fn name(&self) -> &'static str {
        "record"
    }

    fn producing(&self) -> bool {
        recorder().is_some_and(|r| r.records())
    }

    fn read(&self, sh: &[u8], _elem: Elem) -> Shade {
        match sh.get(..4) {
            Some(g) => Shade(u64::from(u32::from_le_bytes(g.try_into().unwrap()))),
            None => Shade::PASSIVE,
        }
    }

    fn write(&self, out: &mut [u8], _elem: Elem, s: Shade) {
        out.fill(0);
        if let Some(g) = out.get_mut(..4) {
            g.copy_from_slice(&(s.0 as u32).to_le_bytes());
        }
    }

    fn combine(&self, ctx: &mut ThreadCtx, (a, pa): (Shade, f64), (b, pb): (Shade, f64)) -> Shade {
        match recorder() {
            Some(r) => Shade(r.new_block(ctx, a.0, pa, b.0, pb)),
            None => Shade::PASSIVE,
        }
    }

    fn memory<'a>(&self, ctx: &'a mut ThreadCtx) -> &'a mut RuleMemory {
        &mut ctx.rec().rule_memory
    }

    fn memory_ref<'a>(&self, ctx: &'a ThreadCtx) -> &'a RuleMemory {
        &ctx.rec_ref().rule_memory
    }

    /// An index names its value alone.
    fn key(&self, s: Shade, _value_bits: u64) -> u32 {
        s.0 as u32
    }

    fn granules_tell_layout(&self) -> bool {
        true
    }
}

//! Dot mode as the engine's [`Tool`].

use crate::context::ThreadCtx;
use crate::tool::{After, Interception, Planner, Tool};
use iced_x86::Instruction;

/// `DGAD_MODE=dot`.
pub struct DotTool;

/// The dot tool.
pub static DOT: DotTool = DotTool;

impl Tool for DotTool {
    fn name(&self) -> &'static str {
        "dot"
    }

    fn has_shadows(&self) -> bool {
        true
    }

    fn follows_data(&self) -> bool {
        true
    }

    fn start(&self) -> Result<(), String> {
        crate::ad::start::<super::math::DotHost>()
    }

    fn planner(&self) -> Option<Planner> {
        Some(rewriter::instrument::dot_plan)
    }

    fn starts_lazily(&self) -> bool {
        true
    }

    fn caches_tangents(&self) -> bool {
        crate::init::config().tangent_cache && crate::cpu::has_avx512vl()
    }

    fn holds_registers(&self) -> bool {
        crate::init::config().tangent_cache && !crate::cpu::has_avx512vl()
    }

    fn instruction(&self, ctx: &mut ThreadCtx, insn: &Instruction) -> After {
        crate::ad::apply::instrument(ctx, insn, &super::mode::DOT_MODE)
    }

    fn monitor(&self, ctx: &mut ThreadCtx, words: &[&str]) -> Option<String> {
        super::client::monitor(ctx, words)
    }

    fn client_request(&self, ctx: &mut ThreadCtx) {
        super::client::handle(ctx);
    }

    /// Every request: answering one copies tangents between memory and
    /// shadows, and converts long doubles in software
    /// (`ad::guest::f80_to_f64`, `dot::mode::f64_to_f80`).
    fn light_request(&self) -> bool {
        true
    }

    fn intercepted(&self, guest_pc: u64) -> Option<Interception> {
        crate::ad::libm::interception(guest_pc)
    }

    fn probed(&self, guest_pc: u64) -> bool {
        crate::ad::probes::is_probe(guest_pc)
    }

    fn probe(&self, ctx: &mut ThreadCtx, guest_pc: u64) {
        crate::ad::probes::probe(ctx, guest_pc);
    }

    /// Bytes written behind the program's back have no tangent.
    fn mem_written(&self, addr: u64, len: u64) {
        crate::ad::shadow::clear_shadow(addr, len);
    }

    /// Tangents move with the data.
    fn mem_moved(&self, from: u64, to: u64, len: u64) {
        crate::ad::shadow::move_shadow(from, to, len);
    }

    /// The marked outputs' tangents go to `dg-output-dots`.
    fn process_ending(&self, _how: crate::tool::Ending) {
        super::files::finish();
    }
}

//! Record mode as the engine's [`Tool`]: each event mapped to what the
//! tape needs.

use super::RecordState;
use crate::context::ThreadCtx;
use crate::tool::{After, Interception, Planner, Tool};
use iced_x86::Instruction;

/// `DGAD_MODE=record`.
pub struct RecordTool;

/// The record tool (armed by [`super::init`] first).
pub static RECORD: RecordTool = RecordTool;

impl Tool for RecordTool {
    fn name(&self) -> &'static str {
        "record"
    }

    fn has_shadows(&self) -> bool {
        true
    }

    fn follows_data(&self) -> bool {
        true
    }

    /// The tape is completed before a default action ends the process.
    fn keeps_fatal_signals(&self) -> bool {
        true
    }

    fn start(&self) -> Result<(), String> {
        crate::ad::start::<super::math::RuntimeHost>()
    }

    fn planner(&self) -> Option<Planner> {
        Some(rewriter::instrument::record_plan)
    }

    fn starts_lazily(&self) -> bool {
        true
    }

    fn instruction(&self, ctx: &mut ThreadCtx, insn: &Instruction) -> After {
        crate::ad::apply::instrument(ctx, insn, &super::mode::RECORD_MODE)
    }

    fn monitor(&self, ctx: &mut ThreadCtx, words: &[&str]) -> Option<String> {
        super::client::monitor(ctx, words)
    }

    fn client_request(&self, ctx: &mut ThreadCtx) {
        super::client::handle(ctx);
    }

    /// Every request once the record files exist: answering one then
    /// writes blocks and index lines with system calls of its own. Before,
    /// the first declaration creates the files, the full path.
    fn light_request(&self) -> bool {
        super::recorder().is_none_or(|r| r.files_created())
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

    /// Bytes written behind the program's back are passive.
    fn mem_written(&self, addr: u64, len: u64) {
        crate::ad::shadow::clear_shadow(addr, len);
    }

    /// The indices move with the data.
    fn mem_moved(&self, from: u64, to: u64, len: u64) {
        crate::ad::shadow::move_shadow(from, to, len);
    }

    fn thread_exiting(&self, ctx: &mut ThreadCtx) {
        super::flush_thread(ctx);
    }

    /// Until the writer thread is done with its tape buffers.
    fn context_idle(&self, ctx: &ThreadCtx) -> bool {
        ctx.rec_ref().tape_ring.idle()
    }

    /// The next block takes a fresh chunk; the old chunk's unused rest
    /// stays zero blocks nobody refers to. The buffers stay.
    fn context_reused(&self, ctx: &mut ThreadCtx) {
        let t = &mut ctx.rec().tape;
        t.base = 0;
        t.next = 0;
        t.end = 0;
        t.flushed = 0;
    }

    fn own_thread_running(&self) -> bool {
        super::writer::running()
    }

    fn process_ending(&self, how: crate::tool::Ending) {
        super::process_ending(how);
    }

    fn dying_in_signal(&self, sig: Option<i32>) {
        if !super::has_files() || !crate::context::installed() {
            return;
        }
        let blocks = super::flush_all_in_signal();
        if let Some(sig) = sig {
            crate::dgad_eprintln!(
                "record: the program is ending on signal {}; the tape is complete ({} blocks)",
                sig,
                blocks
            );
        }
    }

    fn fork_lock(&self) -> Option<crate::lock::Guard<'static, ()>> {
        Some(super::writer::fork_lock())
    }

    fn fork_child(&self, ctx: &mut ThreadCtx) {
        super::after_fork_child(ctx);
    }
}

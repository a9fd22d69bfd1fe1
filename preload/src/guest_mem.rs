//! Reading the guest's memory from the runtime: fault-tolerant, and only
//! inside application memory (never the runtime's or shadow memory).

/// Reads a guest word, if readable.
pub fn read_u64(addr: u64) -> Option<u64> {
    let mut w = [0u64; 1];
    read_words(addr, &mut w).then_some(w[0])
}

/// Reads guest words (client requests' argument blocks); false if any of
/// them is not readable.
pub fn read_words(addr: u64, out: &mut [u64]) -> bool {
    let end = addr.checked_add(8 * out.len() as u64);
    // SAFETY: application memory (checked), read with recovered faults.
    end.is_some_and(|end| shadowmem::is_app_range(addr, end))
        && unsafe { crate::sys::safe_load_words(addr, out) }
}

/// Reads guest memory (the guest's own bytes); false if any of it is not
/// readable. Whole words of a short read one load each (client requests
/// read their argument blocks so), the rest as bytes.
pub fn read_mem(addr: u64, buf: &mut [u8]) -> bool {
    let end = addr.checked_add(buf.len() as u64);
    if !end.is_some_and(|end| shadowmem::is_app_range(addr, end)) {
        return false;
    }
    let words = if buf.len() <= 64 { buf.len() / 8 } else { 0 };
    let mut w = [0u64; 8];
    // SAFETY: application memory (checked above), read with recovered
    // faults.
    if !unsafe { crate::sys::safe_load_words(addr, &mut w[..words]) } {
        return false;
    }
    for (i, v) in w[..words].iter().enumerate() {
        buf[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes());
    }
    let rest = &mut buf[8 * words..];
    // SAFETY: `safe_copy` turns a fault on the source into `false`; the
    // destination is our own buffer.
    rest.is_empty()
        || unsafe {
            crate::sys::safe_copy(
                rest.as_mut_ptr(),
                (addr + 8 * words as u64) as *const u8,
                rest.len(),
            )
        }
}

/// Writes a client request's result for the program: `bytes` (at most a
/// page) at `addr`, their shadow cleared (a result carries no derivative).
/// An address the program cannot write gets nothing, and the first such
/// request one line on stderr: natively the request writes nothing, and
/// the runtime's own store would fault there.
pub fn write_result(addr: u64, bytes: &[u8]) {
    use core::sync::atomic::{AtomicBool, Ordering};
    let writable = addr
        .checked_add(bytes.len() as u64)
        .is_some_and(|end| shadowmem::is_app_range(addr, end))
        && crate::sys::first_unwritable(addr, bytes.len()).is_none();
    if !writable {
        static TOLD: AtomicBool = AtomicBool::new(false);
        if !TOLD.swap(true, Ordering::Relaxed) {
            crate::dgad_eprintln!(
                "a client request's result address {addr:#x} is not writable: nothing is written there"
            );
        }
        return;
    }
    // SAFETY: application memory the program can write (probed just
    // above); writing the result there is what the request means.
    unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), addr as *mut u8, bytes.len()) };
    // SAFETY: the shadow of application memory is mapped.
    unsafe { core::ptr::write_bytes(shadowmem::shadow_of(addr) as *mut u8, 0, bytes.len()) };
}

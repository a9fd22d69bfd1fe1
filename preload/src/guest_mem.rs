//! Reading the guest's memory from the runtime: fault-tolerant, and only
//! inside application memory (never the runtime's or shadow memory).

/// Reads a guest word, if readable.
pub fn read_u64(addr: u64) -> Option<u64> {
    if !addr
        .checked_add(8)
        .is_some_and(|end| shadowmem::is_app_range(addr, end))
    {
        return None;
    }
    // SAFETY: application memory (checked), read with a recovered fault.
    unsafe { crate::sys::safe_load8(addr) }
}

/// Reads guest memory (the guest's own bytes); false if any of it is not
/// readable. Whole words one load each (client requests read their
/// argument blocks so), the rest as bytes.
pub fn read_mem(addr: u64, buf: &mut [u8]) -> bool {
    let end = addr.checked_add(buf.len() as u64);
    if !end.is_some_and(|end| shadowmem::is_app_range(addr, end)) {
        return false;
    }
    let words = if buf.len() <= 64 { buf.len() / 8 } else { 0 };
    for i in 0..words {
        // SAFETY: application memory (checked above), read with a
        // recovered fault.
        match unsafe { crate::sys::safe_load8(addr + 8 * i as u64) } {
            Some(w) => buf[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes()),
            None => return false,
        }
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

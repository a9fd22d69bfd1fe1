//! Reading the guest's memory from the runtime: fault-tolerant, and only
//! inside application memory (never the runtime's or shadow memory).

/// Reads a guest word, if readable.
pub fn read_u64(addr: u64) -> Option<u64> {
    let mut b = [0u8; 8];
    read_mem(addr, &mut b).then(|| u64::from_le_bytes(b))
}

/// Reads guest memory (the guest's own bytes); false if any of it is not
/// readable.
pub fn read_mem(addr: u64, buf: &mut [u8]) -> bool {
    let end = addr.checked_add(buf.len() as u64);
    if !end.is_some_and(|end| shadowmem::is_app_range(addr, end)) {
        return false;
    }
    // SAFETY: `safe_copy` turns a fault on the source into `false`; the
    // destination is our own buffer.
    unsafe { crate::sys::safe_copy(buf.as_mut_ptr(), addr as *const u8, buf.len()) }
}

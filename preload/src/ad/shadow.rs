//! Shadow memory for the tools that keep one (`shadowmem`'s address
//! map): reserved at start-up, cleared where the kernel writes, moved with
//! `mremap`.

use crate::sys;

/// Below this, shadow bytes are zeroed by storing; above, whole pages are
/// dropped (`MADV_DONTNEED`: zero on next touch, memory given back).
const STORE_LIMIT: u64 = 64 * 1024;

/// Maps the shadow regions and fences off the gaps of the address map
/// (`shadowmem`), after checking that nothing is mapped outside the
/// application ranges.
pub fn reserve_shadow() -> Result<(), String> {
    let mut stray = None;
    crate::diag::for_each_mapping(|m| {
        if m.start < shadowmem::USER_END
            && !shadowmem::is_app_range(m.start, m.end.min(shadowmem::USER_END))
        {
            stray = Some(format!(
                "{:#x}-{:#x} {}",
                m.start,
                m.end,
                String::from_utf8_lossy(m.path)
            ));
            return false;
        }
        true
    });
    if let Some(m) = stray {
        return Err(format!("the process has a mapping where dgad's shadow memory must go ({m}); this mode cannot run"));
    }
    for (start, end, accessible) in shadowmem::RESERVATIONS {
        let prot = if accessible {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_NONE
        };
        if sys::map_anon((end - start) as usize, prot, start, true).is_none() {
            let why = match sys::address_space_limit() {
                Ok(l) if l.rlim_cur != libc::RLIM_INFINITY => format!(
                    "; dgad reserves terabytes of address space (no memory) for it, \
                     and the virtual memory limit is {} KiB: lift it (`ulimit -v unlimited`)",
                    l.rlim_cur / 1024
                ),
                _ => String::new(),
            };
            return Err(format!(
                "cannot reserve shadow memory at {start:#x}-{end:#x}{why}"
            ));
        }
    }
    Ok(())
}

/// Marks `[addr, addr + len)` passive (the parts inside application
/// memory).
pub fn clear_shadow(addr: u64, len: u64) {
    for (lo, hi) in shadowmem::APP_RANGES {
        let (start, end) = (addr.max(lo), addr.saturating_add(len).min(hi));
        if start < end {
            clear_app(start, end);
        }
    }
}

fn clear_app(start: u64, end: u64) {
    let (s, e) = (
        shadowmem::shadow_of(start),
        shadowmem::shadow_of(end - 1) + 1,
    );
    if end - start < STORE_LIMIT {
        // SAFETY: the shadow of application memory is mapped read-write.
        unsafe { core::ptr::write_bytes(s as *mut u8, 0, (e - s) as usize) };
        return;
    }
    let (page_lo, page_hi) = (s.next_multiple_of(4096), e & !4095);
    // SAFETY: as above, for the partial pages at both ends.
    unsafe {
        core::ptr::write_bytes(s as *mut u8, 0, (page_lo - s) as usize);
        core::ptr::write_bytes(page_hi as *mut u8, 0, (e - page_hi) as usize);
    }
    // SAFETY: whole pages of the shadow region, which reads back as zeros
    // after MADV_DONTNEED (private anonymous memory).
    unsafe {
        sys::syscall3(
            libc::SYS_madvise,
            page_lo,
            page_hi - page_lo,
            libc::MADV_DONTNEED as u64,
        )
    };
}

/// `len` bytes of application memory moved from `from` to `to` (`mremap`;
/// not overlapping): their shadows move with them; outside application
/// memory the destination is passive.
pub fn move_shadow(from: u64, to: u64, len: u64) {
    let in_app = |addr: u64| len > 0 && shadowmem::is_app_range(addr, addr + len);
    if in_app(from) && in_app(to) {
        // SAFETY: both shadow ranges are mapped; a moved mapping never
        // overlaps its old place.
        unsafe {
            core::ptr::copy_nonoverlapping(
                shadowmem::shadow_of(from) as *const u8,
                shadowmem::shadow_of(to) as *mut u8,
                len as usize,
            )
        };
    } else {
        clear_shadow(to, len);
    }
}

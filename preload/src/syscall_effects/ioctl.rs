//! `ioctl`: what a request writes through its argument. Requests built with
//! `_IOR`/`_IOWR` say it themselves (direction in bits 30–31, size in bits
//! 16–29); the classic terminal, file and socket requests, which predate
//! that encoding, are in a table; any other request that succeeds is
//! reported once.

use super::clear;
use super::special::read_u32;
use crate::guest_mem::read_u64;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a classic (unencoded) request writes through its argument.
#[derive(Clone, Copy)]
enum Classic {
    /// Nothing (a set request, or the argument is a value).
    Nothing,
    /// This many bytes.
    Bytes(u64),
    /// Worked out by a function of the argument.
    Custom(fn(u64)),
    /// Something dgad cannot delimit (sub-commands, pointers inside).
    Unknown,
}

/// The kernel's `struct termios` (without the speeds glibc adds).
const TERMIOS: Classic = Classic::Bytes(36);
/// `struct ifreq`: a name and a 24-byte union.
const IFREQ: Classic = Classic::Bytes(40);
const INT: Classic = Classic::Bytes(4);

/// Classic requests on x86-64, sorted by number.
const CLASSIC: &[(u32, Classic)] = {
    use Classic::{Bytes, Custom, Nothing, Unknown};
    &[
        (0x0001, INT),            // FIBMAP (block number in and out)
        (0x0002, INT),            // FIGETBSZ
        (0x5401, TERMIOS),        // TCGETS
        (0x5402, Nothing),        // TCSETS
        (0x5403, Nothing),        // TCSETSW
        (0x5404, Nothing),        // TCSETSF
        (0x5405, Bytes(18)),      // TCGETA (struct termio)
        (0x5406, Nothing),        // TCSETA
        (0x5407, Nothing),        // TCSETAW
        (0x5408, Nothing),        // TCSETAF
        (0x5409, Nothing),        // TCSBRK
        (0x540a, Nothing),        // TCXONC
        (0x540b, Nothing),        // TCFLSH
        (0x540c, Nothing),        // TIOCEXCL
        (0x540d, Nothing),        // TIOCNXCL
        (0x540e, Nothing),        // TIOCSCTTY
        (0x540f, INT),            // TIOCGPGRP
        (0x5410, Nothing),        // TIOCSPGRP
        (0x5411, INT),            // TIOCOUTQ
        (0x5412, Nothing),        // TIOCSTI
        (0x5413, Bytes(8)),       // TIOCGWINSZ
        (0x5414, Nothing),        // TIOCSWINSZ
        (0x5415, INT),            // TIOCMGET
        (0x5416, Nothing),        // TIOCMBIS
        (0x5417, Nothing),        // TIOCMBIC
        (0x5418, Nothing),        // TIOCMSET
        (0x5419, INT),            // TIOCGSOFTCAR
        (0x541a, Nothing),        // TIOCSSOFTCAR
        (0x541b, INT),            // FIONREAD
        (0x541c, Unknown),        // TIOCLINUX (sub-commands)
        (0x541d, Nothing),        // TIOCCONS
        (0x541e, Bytes(72)),      // TIOCGSERIAL
        (0x541f, Nothing),        // TIOCSSERIAL
        (0x5420, Nothing),        // TIOCPKT
        (0x5421, Nothing),        // FIONBIO
        (0x5422, Nothing),        // TIOCNOTTY
        (0x5423, Nothing),        // TIOCSETD
        (0x5424, INT),            // TIOCGETD
        (0x5425, Nothing),        // TCSBRKP
        (0x5427, Nothing),        // TIOCSBRK
        (0x5428, Nothing),        // TIOCCBRK
        (0x5429, INT),            // TIOCGSID
        (0x542e, Bytes(32)),      // TIOCGRS485
        (0x542f, Bytes(32)),      // TIOCSRS485 (written back as applied)
        (0x5437, Nothing),        // TIOCVHANGUP
        (0x5450, Nothing),        // FIONCLEX
        (0x5451, Nothing),        // FIOCLEX
        (0x5452, Nothing),        // FIOASYNC
        (0x5453, Nothing),        // TIOCSERCONFIG
        (0x5454, INT),            // TIOCSERGWILD
        (0x5455, Nothing),        // TIOCSERSWILD
        (0x5456, TERMIOS),        // TIOCGLCKTRMIOS
        (0x5457, Nothing),        // TIOCSLCKTRMIOS
        (0x5459, INT),            // TIOCSERGETLSR
        (0x545c, Nothing),        // TIOCMIWAIT
        (0x545d, Bytes(80)),      // TIOCGICOUNT
        (0x5460, Bytes(8)),       // FIOQSIZE
        (0x8901, Nothing),        // FIOSETOWN
        (0x8902, Nothing),        // SIOCSPGRP
        (0x8903, INT),            // FIOGETOWN
        (0x8904, INT),            // SIOCGPGRP
        (0x8905, INT),            // SIOCATMARK
        (0x8906, Bytes(16)),      // SIOCGSTAMP
        (0x8907, Bytes(16)),      // SIOCGSTAMPNS
        (0x890b, Nothing),        // SIOCADDRT
        (0x890c, Nothing),        // SIOCDELRT
        (0x8910, IFREQ),          // SIOCGIFNAME
        (0x8912, Custom(ifconf)), // SIOCGIFCONF
        (0x8913, IFREQ),          // SIOCGIFFLAGS
        (0x8914, Nothing),        // SIOCSIFFLAGS
        (0x8915, IFREQ),          // SIOCGIFADDR
        (0x8916, Nothing),        // SIOCSIFADDR
        (0x8917, IFREQ),          // SIOCGIFDSTADDR
        (0x8918, Nothing),        // SIOCSIFDSTADDR
        (0x8919, IFREQ),          // SIOCGIFBRDADDR
        (0x891a, Nothing),        // SIOCSIFBRDADDR
        (0x891b, IFREQ),          // SIOCGIFNETMASK
        (0x891c, Nothing),        // SIOCSIFNETMASK
        (0x891d, IFREQ),          // SIOCGIFMETRIC
        (0x891e, Nothing),        // SIOCSIFMETRIC
        (0x891f, IFREQ),          // SIOCGIFMEM
        (0x8920, Nothing),        // SIOCSIFMEM
        (0x8921, IFREQ),          // SIOCGIFMTU
        (0x8922, Nothing),        // SIOCSIFMTU
        (0x8923, Nothing),        // SIOCSIFNAME
        (0x8924, Nothing),        // SIOCSIFHWADDR
        (0x8927, IFREQ),          // SIOCGIFHWADDR
        (0x8933, IFREQ),          // SIOCGIFINDEX
        (0x8935, IFREQ),          // SIOCGIFPFLAGS
        (0x8942, IFREQ),          // SIOCGIFTXQLEN
        (0x8946, Unknown),        // SIOCETHTOOL (a pointer inside the ifreq)
        (0x894b, INT),            // SIOCOUTQNSD
        (0x8954, Bytes(68)),      // SIOCGARP
        (0x8970, IFREQ),          // SIOCGIFMAP
    ]
};

/// `FS_IOC_FIEMAP`: its encoded size is the header's; the extents the
/// kernel fills follow it.
const FS_IOC_FIEMAP: u32 = 0xc020_660b;

/// After `ioctl(fd, request, arg)` returned `r`.
pub fn ioctl(a: &[u64; 7], r: i64) {
    if r < 0 {
        return;
    }
    let (request, arg) = (a[2] as u32, a[3]);
    match writes(request) {
        Classic::Nothing => {}
        Classic::Bytes(n) => clear(arg, n),
        Classic::Custom(f) => f(arg),
        Classic::Unknown => unknown(request),
    }
}

/// What `request` writes through its argument.
fn writes(request: u32) -> Classic {
    let (dir, size) = (request >> 30, u64::from((request >> 16) & 0x3fff));
    if request == FS_IOC_FIEMAP {
        Classic::Custom(fiemap)
    } else if dir & 2 != 0 {
        // _IOR, _IOWR: the structure the request names.
        Classic::Bytes(size)
    } else if dir == 1 {
        // _IOW: the kernel only reads.
        Classic::Nothing
    } else {
        // A classic request, or an `_IO` one (no data) or a classic one
        // dgad does not know: these two cannot be told apart.
        CLASSIC
            .binary_search_by_key(&request, |&(r, _)| r)
            .map_or(Classic::Unknown, |i| CLASSIC[i].1)
    }
}

/// `struct fiemap`: a 32-byte header (the number of extents mapped at
/// offset 20), then 56 bytes per extent.
fn fiemap(arg: u64) {
    let extents = read_u32(arg + 20).map_or(0, u64::from);
    clear(arg, 32 + 56 * extents.min(1 << 16));
}

/// `SIOCGIFCONF`: `struct ifconf` is the buffer's length (written back)
/// and a pointer to it.
fn ifconf(arg: u64) {
    if let (Some(len), Some(buf)) = (read_u32(arg), read_u64(arg + 8)) {
        if buf != 0 {
            clear(buf, u64::from(len));
        }
    }
    clear(arg, 4);
}

/// Requests reported so far (each plus one; 0 is a free slot).
static REPORTED: [AtomicU64; 32] = [const { AtomicU64::new(0) }; 32];

/// Reports `request` unless it was reported before in this process.
fn unknown(request: u32) {
    if first_report(request) {
        crate::dgad_eprintln!(
            "record: ioctl request {request:#x} is unknown to dgad: memory it may have \
             written (of a size dgad cannot know) may carry stale derivatives"
        );
    }
}

/// Whether `request` is reported for the first time; marks it reported.
/// Beyond `REPORTED.len()` distinct requests, none is reported any more.
fn first_report(request: u32) -> bool {
    let key = u64::from(request) + 1;
    for slot in &REPORTED {
        match slot.compare_exchange(0, key, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(k) if k == key => return false,
            Err(_) => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{first_report, writes, Classic, CLASSIC};

    #[test]
    fn each_unknown_request_is_reported_once() {
        assert!(first_report(0xae80));
        assert!(!first_report(0xae80));
        assert!(first_report(0xae81));
        assert!(!first_report(0xae80));
        assert!(!first_report(0xae81));
    }

    #[test]
    fn classic_requests_are_sorted_and_unique() {
        assert!(CLASSIC.windows(2).all(|w| w[0].0 < w[1].0));
    }

    fn bytes(request: u32) -> Option<u64> {
        match writes(request) {
            Classic::Bytes(n) => Some(n),
            _ => None,
        }
    }

    #[test]
    fn requests_are_decoded() {
        // _IOR('T', 0x30, unsigned int): TIOCGPTN.
        assert_eq!(bytes(0x8004_5430), Some(4));
        // _IOR('R', 0, int): RNDGETENTCNT.
        assert_eq!(bytes(0x8004_5200), Some(4));
        // _IOWR(0xAA, 3, struct uffdio_copy): 40 bytes.
        assert_eq!(bytes(0xc028_aa03), Some(40));
        // _IOW('T', 0x31, int): TIOCSPTLCK.
        assert!(matches!(writes(0x4004_5431), Classic::Nothing));
        // TCGETS, TIOCGWINSZ, FIONREAD, FIONBIO (classic).
        assert_eq!(bytes(0x5401), Some(36));
        assert_eq!(bytes(0x5413), Some(8));
        assert_eq!(bytes(0x541b), Some(4));
        assert!(matches!(writes(0x5421), Classic::Nothing));
        // _IO(0xAE, 0x80): KVM_RUN, no size to go by.
        assert!(matches!(writes(0xae80), Classic::Unknown));
        assert!(matches!(writes(0xc020_660b), Classic::Custom(_)));
    }
}

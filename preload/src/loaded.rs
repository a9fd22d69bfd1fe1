//! Symbols of the objects the dynamic loader has loaded, looked up in their
//! own dynamic symbol tables, without `dlopen`/`dlsym`.
//!
//! `dlopen(…, RTLD_NOLOAD)` runs the initialisers of the object and its
//! dependencies if the loader has not run them yet, and under the
//! launcher's early injection it has not: libc's own initialiser would then
//! run early, with no arguments, and leave `environ` null for the program.
//! `dlsym` on a handle the loader made for a dependency (a `struct
//! link_map` of the list) needs the search list that only `dlopen` builds.
//! So the runtime reads the loader's list (`_r_debug.r_map`) and each
//! object's `DT_GNU_HASH`, `DT_SYMTAB`, `DT_STRTAB` and version tables
//! itself, as the loader does, and calls an `IFUNC` symbol's resolver
//! (relocation is complete at the earliest takeover, so resolvers may run).

use core::ffi::CStr;

/// An object of the loader's list.
#[derive(Clone, Copy)]
pub struct Object {
    base: u64,
    symtab: u64,
    strtab: u64,
    gnu_hash: u64,
    /// `DT_HASH`, used where there is no `DT_GNU_HASH`.
    sysv_hash: u64,
    versym: u64,
    verdef: u64,
    verdefnum: u64,
}

/// Which definition of a name.
#[derive(Clone, Copy)]
pub enum Version<'a> {
    /// The default one (`name@@VERSION`, or an unversioned one): what
    /// `dlsym` returns.
    Default,
    /// The definition of this version (`name@VERSION` or `name@@VERSION`):
    /// what `dlvsym` returns.
    Named(&'a CStr),
}

#[repr(C)]
struct RDebug {
    r_version: i32,
    r_map: *const LinkMap,
}

#[repr(C)]
struct LinkMap {
    l_addr: u64,
    l_name: *const libc::c_char,
    l_ld: *const Dyn,
    l_next: *const LinkMap,
}

#[repr(C)]
struct Dyn {
    tag: i64,
    val: u64,
}

#[repr(C)]
struct Sym {
    name: u32,
    info: u8,
    other: u8,
    shndx: u16,
    value: u64,
    size: u64,
}

extern "C" {
    /// The debugger rendezvous structure of glibc's loader.
    static _r_debug: RDebug;
}

const DT_NULL: i64 = 0;
const DT_HASH: i64 = 4;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_GNU_HASH: i64 = 0x6fff_fef5;
const DT_VERSYM: i64 = 0x6fff_fff0;
const DT_VERDEF: i64 = 0x6fff_fffc;
const DT_VERDEFNUM: i64 = 0x6fff_fffd;
const STT_GNU_IFUNC: u8 = 10;

/// The loaded object whose file name is `name` (`libm.so.6`), if any.
pub fn find(name: &[u8]) -> Option<Object> {
    // SAFETY: `_r_debug` is the loader's, complete once it has relocated
    // the initial objects (the earliest takeover); the list is read at
    // start-up on the single thread there is, and every `l_name` is a
    // NUL-terminated string (empty for the main program).
    unsafe {
        let mut map = core::ptr::addr_of!(_r_debug).read().r_map;
        while !map.is_null() {
            let path = CStr::from_ptr((*map).l_name).to_bytes();
            let file = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
            if file == name && !(*map).l_ld.is_null() {
                return Object::of(&*map);
            }
            map = (*map).l_next;
        }
    }
    None
}

/// The main program's load bias (its `link_map`'s `l_addr`, the first of
/// the loader's list).
pub fn main_program_bias() -> Option<u64> {
    // SAFETY: as in `find`: the loader's list, complete at start-up.
    unsafe {
        let map = core::ptr::addr_of!(_r_debug).read().r_map;
        (!map.is_null()).then(|| (*map).l_addr)
    }
}

impl Object {
    /// Reads the dynamic section of a loaded object.
    ///
    /// # Safety
    /// `map` is an entry of the loader's list (its dynamic section mapped).
    unsafe fn of(map: &LinkMap) -> Option<Object> {
        let mut o = Object {
            base: map.l_addr,
            symtab: 0,
            strtab: 0,
            gnu_hash: 0,
            sysv_hash: 0,
            versym: 0,
            verdef: 0,
            verdefnum: 0,
        };
        let mut d = map.l_ld;
        // SAFETY: the dynamic section is an array ended by DT_NULL.
        unsafe {
            while (*d).tag != DT_NULL {
                let v = (*d).val;
                match (*d).tag {
                    DT_SYMTAB => o.symtab = v,
                    DT_STRTAB => o.strtab = v,
                    DT_GNU_HASH => o.gnu_hash = v,
                    DT_HASH => o.sysv_hash = v,
                    DT_VERSYM => o.versym = v,
                    DT_VERDEF => o.verdef = v,
                    DT_VERDEFNUM => o.verdefnum = v,
                    _ => {}
                }
                d = d.add(1);
            }
        }
        // glibc's loader turns these addresses absolute where the dynamic
        // section is writable (x86-64); otherwise they are offsets.
        let base = o.base;
        for p in [
            &mut o.symtab,
            &mut o.strtab,
            &mut o.gnu_hash,
            &mut o.sysv_hash,
            &mut o.versym,
            &mut o.verdef,
        ] {
            if *p != 0 && *p < base {
                *p += base;
            }
        }
        (o.symtab != 0 && o.strtab != 0 && (o.gnu_hash != 0 || o.sysv_hash != 0)).then_some(o)
    }

    /// The address of `name`'s definition in this object, an `IFUNC`
    /// resolved, or None.
    pub fn symbol(&self, name: &str, version: Version<'_>) -> Option<u64> {
        if self.gnu_hash == 0 {
            return self.symbol_sysv(name, version);
        }
        let hash = name
            .bytes()
            .fold(5381u32, |h, c| h.wrapping_mul(33).wrapping_add(c as u32));
        // SAFETY: every address read lies in the object's mapped hash,
        // symbol, string and version tables, whose layout is the ELF
        // one; the loader has relocated the object, so an IFUNC resolver
        // may be called (glibc's take no arguments on x86-64).
        unsafe {
            let h = self.gnu_hash as *const u32;
            let nbuckets = *h;
            let symoffset = *h.add(1);
            let bloom_words = *h.add(2) as usize;
            if nbuckets == 0 {
                return None;
            }
            let buckets = h.add(4 + 2 * bloom_words);
            let chains = buckets.add(nbuckets as usize);
            let mut i = *buckets.add((hash % nbuckets) as usize);
            if i < symoffset {
                return None;
            }
            loop {
                let chain = *chains.add((i - symoffset) as usize);
                if chain | 1 == hash | 1 {
                    if let Some(addr) = self.matching(i, name, version) {
                        return Some(addr);
                    }
                }
                if chain & 1 != 0 {
                    return None;
                }
                i += 1;
            }
        }
    }

    /// [`Object::symbol`] through the SysV `DT_HASH` table (objects linked
    /// without `DT_GNU_HASH`).
    fn symbol_sysv(&self, name: &str, version: Version<'_>) -> Option<u64> {
        let hash = name.bytes().fold(0u32, |h, c| {
            let h = (h << 4).wrapping_add(u32::from(c));
            (h ^ ((h & 0xf000_0000) >> 24)) & 0x0fff_ffff
        });
        // SAFETY: DT_HASH is `nbucket, nchain, bucket[nbucket],
        // chain[nchain]` of u32, mapped with the object; chain entries are
        // symbol indices below nchain.
        unsafe {
            let h = self.sysv_hash as *const u32;
            let (nbucket, nchain) = (*h, *h.add(1));
            if nbucket == 0 {
                return None;
            }
            let chains = h.add(2 + nbucket as usize);
            let mut i = *h.add(2 + (hash % nbucket) as usize);
            let mut steps = 0;
            while i != 0 && i < nchain && steps < nchain {
                if let Some(addr) = self.matching(i, name, version) {
                    return Some(addr);
                }
                i = *chains.add(i as usize);
                steps += 1;
            }
        }
        None
    }

    /// Symbol `i`'s address (its IFUNC resolved) if it is a definition of
    /// `name` in `version`.
    ///
    /// # Safety
    /// `i` is an index of the symbol table; the object is relocated.
    unsafe fn matching(&self, i: u32, name: &str, version: Version<'_>) -> Option<u64> {
        // SAFETY: as the caller guarantees; names are NUL-terminated in
        // the string table.
        unsafe {
            let sym = &*(self.symtab as *const Sym).add(i as usize);
            let sym_name = CStr::from_ptr((self.strtab + sym.name as u64) as *const _);
            if sym.shndx == 0
                || sym_name.to_bytes() != name.as_bytes()
                || !self.version_matches(i, version)
            {
                return None;
            }
            let addr = self.base + sym.value;
            if sym.info & 0xf == STT_GNU_IFUNC {
                let resolver: extern "C" fn() -> u64 = core::mem::transmute(addr);
                return Some(resolver());
            }
            Some(addr)
        }
    }

    /// Whether symbol `i` is the definition `version` asks for.
    ///
    /// # Safety
    /// `i` is an index of the symbol table.
    unsafe fn version_matches(&self, i: u32, version: Version<'_>) -> bool {
        if self.versym == 0 {
            return matches!(version, Version::Default);
        }
        // SAFETY: the version table has one entry per symbol.
        let v = unsafe { *(self.versym as *const u16).add(i as usize) };
        match version {
            Version::Default => v & 0x8000 == 0,
            Version::Named(want) => {
                // SAFETY: as the caller guarantees for `i`.
                let have = unsafe { self.version_name(v & 0x7fff) };
                have == Some(want)
            }
        }
    }

    /// The name of version definition `index`.
    ///
    /// # Safety
    /// The object's `DT_VERDEF` chain is well formed (the loader read it).
    unsafe fn version_name(&self, index: u16) -> Option<&CStr> {
        let mut d = self.verdef;
        for _ in 0..self.verdefnum {
            if d == 0 {
                break;
            }
            // SAFETY: Elf64_Verdef: vd_ndx at 4 (u16), vd_aux at 12 and
            // vd_next at 16 (u32); Elf64_Verdaux: vda_name at 0 (u32).
            unsafe {
                let ndx = *((d + 4) as *const u16);
                if ndx == index {
                    let aux = d + *((d + 12) as *const u32) as u64;
                    let name = *(aux as *const u32) as u64;
                    return Some(CStr::from_ptr((self.strtab + name) as *const _));
                }
                let next = *((d + 16) as *const u32) as u64;
                if next == 0 {
                    break;
                }
                d += next;
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `dlsym`/`dlvsym` answer on the same loaded libm and libc (the
    /// test process is no guest: `dlopen` may run initialisers here).
    fn dl(lib: &CStr, name: &CStr, version: Option<&CStr>) -> Option<u64> {
        // SAFETY: NUL-terminated names; RTLD_NOLOAD only finds loaded ones.
        unsafe {
            let h = libc::dlopen(lib.as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY);
            assert!(!h.is_null(), "{lib:?} is not loaded in the test process");
            let p = match version {
                None => libc::dlsym(h, name.as_ptr()),
                Some(v) => libc::dlvsym(h, name.as_ptr(), v.as_ptr()),
            };
            (!p.is_null()).then_some(p as u64)
        }
    }

    #[test]
    fn lookups_agree_with_dlsym() {
        // Keep libm loaded in this process.
        assert!(f64::sin(1.0) > 0.8);
        let libm = find(b"libm.so.6").expect("libm in the loader's list");
        let libc_ = find(b"libc.so.6").expect("libc in the loader's list");
        for name in [
            c"sin", c"exp", c"pow", c"log", c"atan2", c"sincos", c"lgamma",
        ] {
            let s = name.to_str().unwrap();
            assert_eq!(
                libm.symbol(s, Version::Default),
                dl(c"libm.so.6", name, None),
                "{s}"
            );
            let v = c"GLIBC_2.2.5";
            assert_eq!(
                libm.symbol(s, Version::Named(v)),
                dl(c"libm.so.6", name, Some(v)),
                "{s}@GLIBC_2.2.5"
            );
        }
        // IFUNCs resolved as the loader resolves them.
        for name in [c"strlen", c"memcpy", c"ldexp"] {
            let s = name.to_str().unwrap();
            assert_eq!(
                libc_.symbol(s, Version::Default),
                dl(c"libc.so.6", name, None),
                "{s}"
            );
        }
        assert_eq!(libm.symbol("no_such_function", Version::Default), None);
        if libm.sysv_hash != 0 {
            let gnu_less = Object {
                gnu_hash: 0,
                ..libm
            };
            for s in ["sin", "exp", "pow"] {
                assert_eq!(
                    gnu_less.symbol(s, Version::Default),
                    libm.symbol(s, Version::Default),
                    "{s} through DT_HASH"
                );
            }
        }
    }
}

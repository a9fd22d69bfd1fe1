//! Tells the tests whether this CPU runs AVX-512 and AVX2 code
//! (`cfg(host_avx512)`, `cfg(host_avx2)`) and lets programs set their
//! segment bases (`cfg(host_fsgsbase)`), so a test that needs it is
//! reported as ignored, with the reason, on a machine without it instead of
//! passing without having run.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(host_avx512)");
    println!("cargo::rustc-check-cfg=cfg(host_avx2)");
    println!("cargo::rustc-check-cfg=cfg(host_fsgsbase)");
    println!("cargo::rerun-if-changed=build.rs");
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let has = |flag: &str| cpuinfo.split_whitespace().any(|w| w == flag);
    if has("avx512f") {
        println!("cargo::rustc-cfg=host_avx512");
    }
    if has("avx2") {
        println!("cargo::rustc-cfg=host_avx2");
    }
    // The kernel enables the instructions where the CPU has them (5.9+).
    if has("fsgsbase") {
        println!("cargo::rustc-cfg=host_fsgsbase");
    }
}

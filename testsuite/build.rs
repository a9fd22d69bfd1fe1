//! Tells the tests whether this CPU runs AVX-512 code (`cfg(host_avx512)`),
//! so a test that needs it is reported as ignored, with the reason, on a
//! machine without it instead of passing without having run.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(host_avx512)");
    println!("cargo::rerun-if-changed=build.rs");
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    if cpuinfo.split_whitespace().any(|w| w == "avx512f") {
        println!("cargo::rustc-cfg=host_avx512");
    }
}

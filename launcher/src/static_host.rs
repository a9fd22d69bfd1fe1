//! `dgad-static-host`: the dynamic program inside which `libdgad.so` runs a
//! statically linked one (decision 45). The runtime takes this process
//! over, finds `DGAD_STATIC_EXEC` in the environment, maps the static
//! program and starts it with this process's arguments and environment:
//! `main` below never runs then. It runs only when the runtime did not
//! take over (started by hand, or `DGAD_DISABLE` set).

fn main() {
    eprintln!(
        "dgad-static-host: dgad runs statically linked programs in this host; \
         it does nothing without libdgad.so (use `dgad run -- PROG`)"
    );
    std::process::exit(127);
}

//! `DGAD_LOG=path`: debug lines appended to a file, never to the client's
//! stdout or stderr.

/// Appends one formatted line to the `DGAD_LOG` file, if one is open.
#[macro_export]
macro_rules! log {
    ($($arg:tt)*) => {{
        if let Some(cfg) = $crate::init::try_config() {
            if cfg.log_fd >= 0 {
                use core::fmt::Write as _;
                let mut b = $crate::sys::StackBuf::<512>::new();
                let _ = write!(b, "[{}] ", $crate::init::pid());
                let _ = write!(b, $($arg)*);
                let _ = b.write_str("\n");
                $crate::sys::write_all(cfg.log_fd, b.as_bytes());
            }
        }
    }};
}

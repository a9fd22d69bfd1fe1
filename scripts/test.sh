#!/usr/bin/env bash
# The whole test suite: set-up, formatting and lints, docs, unit and golden
# tests, and the transparency suite (programs natively vs. under libdgad.so).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q
cargo build --release -p preload
cargo test --workspace --release

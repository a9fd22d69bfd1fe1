#!/usr/bin/env bash
# The whole test suite: set-up, formatting and lints, docs, unit and golden
# tests, the client-API self-test, the transparency suite (programs natively
# vs. under libdgad.so) and the derivative matrix's native part.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q
cargo build --release -p preload -p evaluator -p launcher
bash preload/client/selftest.sh
cargo test --workspace --release

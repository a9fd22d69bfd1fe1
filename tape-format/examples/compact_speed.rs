//! How fast the compact format encodes and decodes a real tape, apart from
//! any sweep (decision 40): `cargo run --release -p tape-format --example
//! compact_speed -- DIR/dg-tape`, a tape of 32-byte blocks. Prints the
//! fastest of three runs of each, in ns per block (encoding also for one
//! chunk kept in the cache, as the writer thread meets it), and both sizes.

use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use tape_format::compact::{encode_piece, MAX_PIECE_BYTES, PIECE_ENTRIES};
use tape_format::{Block, Layout, Tape};

fn fastest(mut f: impl FnMut()) -> f64 {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: compact_speed DIR/dg-tape")?;
    let tape = Tape::open(Path::new(&path))?;
    let blocks: &[Block] = tape.blocks().ok_or("give a tape of 32-byte blocks")?;
    let n = blocks.len() as f64;

    // Encoding into one reused piece buffer (what the writer thread does).
    let mut piece = vec![0u8; MAX_PIECE_BYTES];
    let mut stream = Vec::with_capacity(blocks.len() * 10);
    let encode = fastest(|| {
        stream.clear();
        stream.extend_from_slice(&tape_format::compact::header(tape.block_count()));
        for (k, chunk) in blocks.chunks(PIECE_ENTRIES).enumerate() {
            let len = encode_piece((k * PIECE_ENTRIES) as u64, chunk, &mut piece);
            stream.extend_from_slice(&piece[..len]);
        }
    });
    let compact = Tape::from_compact_bytes(stream.clone(), "the encoded tape")?;
    let Layout::Compact(c) = compact.layout() else {
        unreachable!("a compact stream")
    };

    // Encoding one recording chunk (8,192 blocks from the tape's middle)
    // over and over: the writer's case, whose chunk is still in the cache.
    let middle = blocks.len() / 2;
    let chunk = &blocks[middle..(middle + 8192).min(blocks.len())];
    let rounds = 200;
    let hot = fastest(|| {
        for _ in 0..rounds {
            for (k, piece_blocks) in chunk.chunks(PIECE_ENTRIES).enumerate() {
                let first = (middle + k * PIECE_ENTRIES) as u64;
                black_box(encode_piece(first, piece_blocks, &mut piece));
            }
        }
    });

    // Decoding every entry, front to back, summing its fields.
    let decode = fastest(|| {
        let mut acc = 0u64;
        for p in c.pieces {
            for b in p.entries(c.bytes) {
                acc = acc.wrapping_add(b.index1 ^ b.index2 ^ b.partial1.to_bits())
                    ^ b.partial2.to_bits();
            }
        }
        black_box(acc);
    });
    println!(
        "{} blocks: {} bytes as blocks, {} compact ({:.2}x smaller)",
        blocks.len(),
        tape.byte_len(),
        stream.len(),
        tape.byte_len() as f64 / stream.len() as f64
    );
    println!("encode: {:.3} ns per block", encode * 1e9 / n);
    println!(
        "encode, one chunk in the cache: {:.3} ns per block",
        hot * 1e9 / (rounds * chunk.len()) as f64
    );
    println!("decode: {:.3} ns per block", decode * 1e9 / n);
    Ok(())
}

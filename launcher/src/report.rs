//! Printing derivatives: an aligned table, JSON or CSV on stdout.

use crate::Format;
use std::path::Path;

fn value(v: f64) -> String {
    tape_format::format_value(v)
}

fn json_number(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or_else(
        || serde_json::Value::String(value(v)),
        serde_json::Value::Number,
    )
}

/// The gradient of Σ seed_k · output_k with respect to each input.
pub fn gradient(format: Format, dir: &Path, seeds: &[f64], g: &[f64]) {
    match format {
        Format::Json => {
            let v = serde_json::json!({
                "record_dir": dir.display().to_string(),
                "output_seeds": seeds.iter().map(|&s| json_number(s)).collect::<Vec<_>>(),
                "gradient": g.iter().map(|&x| json_number(x)).collect::<Vec<_>>(),
            });
            println!("{v}");
        }
        Format::Csv => {
            println!("input,derivative");
            for (i, x) in g.iter().enumerate() {
                println!("{i},{}", value(*x));
            }
        }
        Format::Table => {
            let seeded: Vec<String> = seeds.iter().map(|s| value(*s)).collect();
            println!(
                "gradient of the outputs weighted by ({}), one line per input:",
                seeded.join(", ")
            );
            for (i, x) in g.iter().enumerate() {
                println!("  d/dx{i:<4} {}", value(*x));
            }
        }
    }
}

/// The Jacobian, one row per output (`dg-jacobian`'s layout).
pub fn jacobian(
    format: Format,
    dir: &Path,
    inputs: usize,
    outputs: usize,
    j: &tape_format::ValueTable,
) {
    let rows: Vec<&[f64]> = j.iter_rows().collect();
    match format {
        Format::Json => {
            let v = serde_json::json!({
                "record_dir": dir.display().to_string(),
                "inputs": inputs,
                "outputs": outputs,
                "jacobian": rows.iter().map(|r| r.iter().map(|&x| json_number(x)).collect::<Vec<_>>()).collect::<Vec<_>>(),
            });
            println!("{v}");
        }
        Format::Csv => {
            let head: Vec<String> = (0..inputs).map(|i| format!("d/dx{i}")).collect();
            println!("output,{}", head.join(","));
            for (k, r) in rows.iter().enumerate() {
                let vals: Vec<String> = r.iter().map(|x| value(*x)).collect();
                println!("{k},{}", vals.join(","));
            }
        }
        Format::Table => {
            println!("Jacobian, {outputs} outputs (rows) by {inputs} inputs (columns):");
            for (k, r) in rows.iter().enumerate() {
                let vals: Vec<String> = r.iter().map(|x| format!("{:>24}", value(*x))).collect();
                println!("  y{k:<4}{}", vals.join(""));
            }
        }
    }
}

/// The outputs' tangents along the seeded direction.
pub fn tangents(format: Format, seeds: &[f64], t: &[f64]) {
    match format {
        Format::Json => {
            let v = serde_json::json!({
                "input_seeds": seeds.iter().map(|&s| json_number(s)).collect::<Vec<_>>(),
                "tangents": t.iter().map(|&x| json_number(x)).collect::<Vec<_>>(),
            });
            println!("{v}");
        }
        Format::Csv => {
            println!("output,tangent");
            for (k, x) in t.iter().enumerate() {
                println!("{k},{}", value(*x));
            }
        }
        Format::Table => {
            println!("tangents of the outputs along the seeded inputs, one line per output:");
            for (k, x) in t.iter().enumerate() {
                println!("  dy{k:<4} {}", value(*x));
            }
        }
    }
}

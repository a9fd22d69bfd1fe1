//! What `dgad jacobian --json` and `dgad dot --json` print, read back and
//! checked against analytic derivatives (the launcher's tests and the
//! static programs').

use serde_json::Value;

/// A JSON array of numbers.
pub fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Equal within 1e-12, relative (absolute below 1).
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

/// Asserts that `v["jacobian"]` has `want`'s rows, each entry close to it.
pub fn assert_jacobian(what: &str, v: &Value, want: &[[f64; 3]]) {
    let rows = v["jacobian"].as_array().unwrap();
    assert_eq!(rows.len(), want.len(), "{what}: {v}");
    for (k, row) in rows.iter().enumerate() {
        let row = numbers(row);
        for i in 0..3 {
            assert!(
                close(row[i], want[k][i]),
                "{what}: J[{k}][{i}] = {} vs {}",
                row[i],
                want[k][i]
            );
        }
    }
}

/// Asserts that `v["tangents"]` is J·`seed` for the Jacobian `want`.
pub fn assert_tangents(what: &str, v: &Value, want: &[[f64; 3]], seed: [f64; 3]) {
    let t = numbers(&v["tangents"]);
    assert_eq!(t.len(), want.len(), "{what}: {v}");
    for (k, row) in want.iter().enumerate() {
        let jv: f64 = row.iter().zip(seed).map(|(j, s)| j * s).sum();
        assert!(close(t[k], jv), "{what}: dot y{k}: {} vs {jv}", t[k]);
    }
}

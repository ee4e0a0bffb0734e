//! The CPU twin learns: circle and XOR reach ≥ 95 % test accuracy within a fixed step budget.

mod common;

use mlp::Spec;

/// Settings of the accuracy tests (shared in spirit with the GPU test in gpu-runtime).
fn spec(data: &str) -> Spec {
    let q = format!("data={data}&layers=8,8&act=tanh&lr=0.03&batch=16&opt=adam&noise=0.05&seed=3");
    let pairs: Vec<(String, String)> = q
        .split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let (s, errors) =
        Spec::from_params(|k| pairs.iter().find(|(a, _)| a == k).map(|(_, b)| b.as_str()));
    assert!(errors.is_empty(), "{errors:?}");
    s
}

const STEPS: usize = 600;

fn train(data: &str) -> f32 {
    let (first, loss, acc) = common::train(&spec(data), STEPS);
    assert!(loss < first);
    acc
}

#[test]
fn circle_reaches_95_percent() {
    assert!(train("circle") >= 0.95);
}

#[test]
fn xor_reaches_95_percent() {
    assert!(train("xor") >= 0.95);
}

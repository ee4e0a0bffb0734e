//! Training the CPU twin from a spec, for the tests that check it learns.

use mlp::net::batch_order;
use mlp::{CpuTrainer, Spec};

/// (train loss before, test loss after, test accuracy after) `steps` steps of `s`.
pub fn train(s: &Spec, steps: usize) -> (f32, f32, f32) {
    let net = s.net();
    let (train, test) = s.data();
    let mut t = CpuTrainer::new(
        net.clone(),
        s.hyper(),
        net.init_params(s.seed),
        s.batch,
        train.features(&s.features),
        train.label.clone(),
        batch_order(train.len(), s.seed),
    );
    let first = t.evaluate(&train.features(&s.features), &train.label).0;
    for _ in 0..steps {
        t.step();
    }
    let (loss, acc) = t.evaluate(&test.features(&s.features), &test.label);
    eprintln!(
        "{:?}: loss {first} → {loss} (test), accuracy {acc}",
        s.dataset
    );
    (first, loss, acc)
}

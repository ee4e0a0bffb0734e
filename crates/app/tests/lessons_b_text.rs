//! Lessons 7 and 9–12 keep their text under `lb.*` keys (locales/<lang>/lessons-b.txt). The
//! shared text test only checks keys with the app's older prefixes, so this one checks every
//! `lb.` key these lessons name, and the keys they build at run time.

use std::path::Path;

use gpu_playground::i18n::has;

const FILES: [&str; 6] = [
    "vram.rs",
    "multi_gpu.rs",
    "stack.rs",
    "choosing.rs",
    "claims.rs",
    "conv.rs",
];

#[test]
fn every_lb_key_exists() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/components/learn");
    let mut missing = Vec::new();
    for f in FILES {
        let text = std::fs::read_to_string(dir.join(f)).expect("lesson source");
        for piece in text.split('"').skip(1).step_by(2) {
            let is_key = piece.starts_with("lb.")
                && !piece.ends_with('.')
                && piece
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
            if is_key && !has(piece) {
                missing.push(format!("{f}: {piece}"));
            }
        }
    }
    assert!(missing.is_empty(), "missing keys:\n{}", missing.join("\n"));
}

#[test]
fn keys_built_at_run_time_exist() {
    use lessons::vram::{Breakdown, Dtype, Optimiser};
    for d in Dtype::ALL {
        assert!(has(&format!("lb.vram.dtype.{}", d.code())), "{}", d.code());
    }
    for o in Optimiser::ALL {
        assert!(has(&format!("lb.vram.opt.{}", o.code())), "{}", o.code());
    }
    for (name, _) in Breakdown::default().parts() {
        assert!(has(&format!("lb.vram.part.{name}")), "{name}");
    }
}

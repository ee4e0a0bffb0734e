//! What the training tests share: the bars data set and the small net that learns it.

use cnn::data::Samples;
use cnn::net::{Block, Net};
use cpu_kernels::data::SplitMix64;

pub const SIDE: usize = 10;

/// `n` 10×10 images of one bar each, alternating classes: 0 a horizontal bar, 1 a vertical
/// one, 5 to 8 pixels long at a random place, on faint noise.
pub fn bars(n: usize, seed: u64) -> Samples {
    let mut rng = SplitMix64::new(seed);
    let mut pick = |below: usize| (rng.next_u64() % below as u64) as usize;
    let mut s = Samples {
        side: SIDE,
        ..Samples::default()
    };
    for i in 0..n {
        let class = (i % 2) as u32;
        let mut img = vec![0.0f32; SIDE * SIDE];
        for p in img.iter_mut() {
            *p = 0.1 * pick(4) as f32 / 3.0;
        }
        let len = 5 + pick(4);
        let (along, across) = (pick(SIDE - len + 1), pick(SIDE));
        for t in along..along + len {
            let (y, x) = if class == 0 { (across, t) } else { (t, across) };
            img[y * SIDE + x] = 1.0;
        }
        s.x.extend(img);
        s.y.push(class);
    }
    s
}

pub fn small_net() -> Net {
    // 10 → conv 3 → 8 → pool → 4; dense 4·4·4 = 64 → 2.
    Net::new(
        SIDE,
        vec![Block {
            c_in: 1,
            c_out: 4,
            kernel: 3,
        }],
        2,
    )
    .expect("fits")
}

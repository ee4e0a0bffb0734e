//! Runs the lessons' measuring kernels natively and prints what the browser widgets would show:
//! copy bandwidth, FMA-chain rate, useful bandwidth against stride, divergent vs uniform time,
//! and launch costs. Every result is verified against the CPU reference before it is printed.
//!
//! `cargo run --release -p gpu-runtime --example probes [--small]` (`--small` for software
//! adapters such as lavapipe).

use gpu_runtime::{measurements, Gpu, RunOptions};

fn main() {
    let small = std::env::args().any(|a| a == "--small");
    let gpu = match Gpu::request_blocking() {
        Ok(g) => g,
        Err(e) => {
            eprintln!("no GPU: {e}");
            std::process::exit(1);
        }
    };
    println!("adapter\t{}", gpu.adapter().name);
    let opts = RunOptions {
        warmup: 2,
        repetitions: 5,
    };
    use pollster::block_on as block;
    let (copy_n, fma_threads, fma_iters, strided_n, div_threads, div_iters) = if small {
        (1 << 20, 4096, 256, 1 << 18, 2048, 128)
    } else {
        (1 << 26, 1 << 21, 4096, 1 << 24, 1 << 18, 2048)
    };
    match block(measurements::bandwidth(&gpu, copy_n, &opts)) {
        Ok(v) => println!(
            "copy_bandwidth_GBps\t{v:.1}\t({} MiB copied)",
            (copy_n as u64 * 4) >> 20
        ),
        Err(e) => println!("copy_bandwidth\terror {e}"),
    }
    match block(measurements::fma_rate(&gpu, fma_threads, fma_iters, &opts)) {
        Ok(v) => println!("fma_GFLOPs\t{v:.1}"),
        Err(e) => println!("fma\terror {e}"),
    }
    let data = measurements::input(strided_n as usize);
    for stride in [1, 2, 4, 8, 16, 32, 64] {
        match block(measurements::strided_read(&gpu, &data, stride, &opts)) {
            Ok(v) => println!("strided_GBps\tstride {stride}\t{v:.1}"),
            Err(e) => println!("strided\tstride {stride}\terror {e}"),
        }
    }
    match block(measurements::divergence(
        &gpu,
        div_threads,
        div_iters,
        &opts,
    )) {
        Ok((d, u)) => println!(
            "divergence_ms\tdivergent {d:.4}\tuniform {u:.4}\tratio {:.2}",
            d / u
        ),
        Err(e) => println!("divergence\terror {e}"),
    }
    for n in [64, 256] {
        match block(measurements::launch_costs(&gpu, n, &Default::default(), |_| Ok(()))) {
            Ok(c) => println!(
                "launch\tN {n}\tfused {:.3} ms\tone_submit {:.3} ms\tseparate {:.3} ms\tper_dispatch {:.2} us\tper_round_trip {:.1} us",
                c.fused_ms, c.one_submit_ms, c.separate_ms, c.per_dispatch_us(), c.per_round_trip_us()
            ),
            Err(e) => println!("launch\terror {e}"),
        }
    }
}

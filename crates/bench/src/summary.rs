//! `bench summarise FILE…`: the median of several whole runs, with their spread, per
//! (path, kernel, size) — wgpu, Dawn and cuBLAS results alike — and the tuner's choice.
//!
//! Every result file is TSV with the header [`HEADER`]: one row per measured cell of one run.
//! A run's own figure for a cell is the median of its timed passes; this module never keeps
//! "the best of" anything.

/// Columns of every result file (wgpu bench, Dawn runner, cuBLAS script).
pub const HEADER: &str = "path\tkernel\tsize\trate\tunit\tms\ttiming\tverified\tpass_ms";

/// One row of a result file.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub path: String,
    pub kernel: String,
    pub size: u64,
    /// GFLOP/s for matmul, GB/s for the copy probe.
    pub rate: f64,
    pub unit: String,
    pub ms: f64,
    pub timing: String,
    pub verified: bool,
}

/// Parses result files' text; rows that fail to parse are reported, not skipped.
pub fn parse(text: &str) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with("path\t") {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let bad = || format!("line {}: `{line}`", i + 1);
        if f.len() < 8 {
            return Err(bad());
        }
        rows.push(Row {
            path: f[0].to_string(),
            kernel: f[1].to_string(),
            size: f[2].parse().map_err(|_| bad())?,
            rate: f[3].parse().map_err(|_| bad())?,
            unit: f[4].to_string(),
            ms: f[5].parse().map_err(|_| bad())?,
            timing: f[6].to_string(),
            verified: f[7] == "true",
        });
    }
    Ok(rows)
}

/// The median of a list (mean of the middle two for an even count); NaN when empty.
pub fn median(values: &[f64]) -> f64 {
    numbers::median(values).unwrap_or(f64::NAN)
}

/// The smallest and largest of a list (∞, −∞ when empty): a median's spread.
pub fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        })
}

/// One cell over several runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub path: String,
    pub kernel: String,
    pub size: u64,
    pub unit: String,
    pub runs: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub all_verified: bool,
    pub timing: String,
}

/// Groups rows by (path, kernel, size), in first-seen order.
pub fn cells(rows: &[Row]) -> Vec<Cell> {
    let mut keys: Vec<(String, String, u64)> = Vec::new();
    for r in rows {
        let key = (r.path.clone(), r.kernel.clone(), r.size);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys.into_iter()
        .map(|(path, kernel, size)| {
            let group: Vec<&Row> = rows
                .iter()
                .filter(|r| r.path == path && r.kernel == kernel && r.size == size)
                .collect();
            let rates: Vec<f64> = group.iter().map(|r| r.rate).collect();
            Cell {
                unit: group[0].unit.clone(),
                timing: group[0].timing.clone(),
                runs: group.len(),
                median: median(&rates),
                min: rates.iter().copied().fold(f64::INFINITY, f64::min),
                max: rates.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                all_verified: group.iter().all(|r| r.verified),
                path,
                kernel,
                size,
            }
        })
        .collect()
}

/// The tuner's choice: the fastest variant of `prefix` (by median over runs) on one path at
/// one size; only verified variants count. The Tensor Core stage (f16 tiles on the matrix
/// units) is never "the best matmul" here, whose percentage is of cuBLAS SGEMM's f32
/// arithmetic; its own comparison is with HGEMM (`crates/bench/h200/tensor_core.sh`), unless
/// `prefix` names it.
pub fn fastest<'a>(cells: &'a [Cell], path: &str, prefix: &str, size: u64) -> Option<&'a Cell> {
    const TENSOR_CORE: &str = "matmul-tensor-core";
    cells
        .iter()
        .filter(|c| {
            c.path == path
                && c.size == size
                && c.kernel.starts_with(prefix)
                && c.all_verified
                && (prefix.starts_with(TENSOR_CORE) || !c.kernel.starts_with(TENSOR_CORE))
        })
        .max_by(|a, b| a.median.total_cmp(&b.median))
}

/// Markdown: one row per cell, with its median, its spread (min–max over runs) and, for
/// matmul cells, the percentage of cuBLAS's median at the same size.
pub fn markdown(cells: &[Cell]) -> String {
    let mut out = String::from(
        "| path | kernel | size | median | min–max | runs | % of cuBLAS | timing | verified |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n",
    );
    for c in cells {
        let cublas = cells
            .iter()
            .find(|o| o.path == "cublas" && o.size == c.size && o.unit == "GFLOP/s");
        let pct = match cublas {
            Some(b) if c.unit == "GFLOP/s" && b.median > 0.0 => {
                format!("{:.0} %", 100.0 * c.median / b.median)
            }
            _ => "–".to_string(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {:.0} {} | {:.0}–{:.0} | {} | {pct} | {} | {} |\n",
            c.path,
            c.kernel,
            c.size,
            c.median,
            c.unit,
            c.min,
            c.max,
            c.runs,
            c.timing,
            if c.all_verified { "yes" } else { "NO" }
        ));
    }
    out
}

pub fn run(files: &[String]) -> Result<(), String> {
    if files.is_empty() {
        return Err("usage: bench summarise RESULT.tsv…".into());
    }
    let mut rows = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("reading {f}: {e}"))?;
        rows.extend(parse(&text).map_err(|e| format!("{f}: {e}"))?);
    }
    let cells = cells(&rows);
    print!("{}", markdown(&cells));
    let mut paths: Vec<&str> = cells.iter().map(|c| c.path.as_str()).collect();
    paths.dedup();
    let mut sizes: Vec<u64> = cells.iter().map(|c| c.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for path in paths {
        for &size in &sizes {
            let cublas = cells
                .iter()
                .find(|o| o.path == "cublas" && o.size == size && o.unit == "GFLOP/s");
            // The tuner's choice per kernel with tile variants, then the fastest matmul of all.
            for (what, prefix) in [
                ("tuner", "matmul-tuned@"),
                ("tuner", "matmul-double-buffer@"),
                ("best matmul", "matmul-"),
            ] {
                if let Some(best) = fastest(&cells, path, prefix, size) {
                    let pct = match cublas {
                        Some(b) if b.median > 0.0 => {
                            format!(", {:.1} % of cuBLAS", 100.0 * best.median / b.median)
                        }
                        _ => String::new(),
                    };
                    println!(
                        "{what} ({path}, {size}³): {} at {:.0} GFLOP/s (median of {}{pct})",
                        best.kernel, best.median, best.runs
                    );
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(path: &str, kernel: &str, rate: f64, verified: bool) -> String {
        format!("{path}\t{kernel}\t4096\t{rate}\tGFLOP/s\t1.0\ttimestamps\t{verified}\t1.0")
    }

    #[test]
    fn median_of_runs_not_best() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        let text = [
            HEADER.to_string(),
            row("wgpu", "k", 10.0, true),
            row("wgpu", "k", 30.0, true),
            row("wgpu", "k", 20.0, true),
            row("cublas", "cublas-sgemm", 40.0, true),
        ]
        .join("\n");
        let c = cells(&parse(&text).unwrap());
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].median, c[0].min, c[0].max, c[0].runs),
            (20.0, 10.0, 30.0, 3)
        );
        assert!(markdown(&c).contains("| wgpu | k | 4096 | 20 GFLOP/s | 10–30 | 3 | 50 % |"));
    }

    #[test]
    fn tuner_keeps_the_fastest_verified_variant() {
        let text = [
            row("dawn", "matmul-tuned@128x128x16", 30.0, true),
            row("dawn", "matmul-tuned@128x64x8", 50.0, false),
            row("dawn", "matmul-tuned@64x64x8", 40.0, true),
            row("wgpu", "matmul-tuned@128x128x8", 90.0, true),
        ]
        .join("\n");
        let c = cells(&parse(&text).unwrap());
        let best = fastest(&c, "dawn", "matmul-tuned@", 4096).map(|c| c.kernel.as_str());
        assert_eq!(best, Some("matmul-tuned@64x64x8"));
    }

    #[test]
    fn the_tensor_core_stage_is_not_the_best_f32_matmul() {
        let text = [
            row("wgpu", "matmul-tuned", 40.0, true),
            row("wgpu", "matmul-tensor-core", 200.0, true),
        ]
        .join("\n");
        let c = cells(&parse(&text).unwrap());
        let best = |prefix| fastest(&c, "wgpu", prefix, 4096).map(|c| c.kernel.as_str());
        assert_eq!(best("matmul-"), Some("matmul-tuned"));
        assert_eq!(best("matmul-tensor-core"), Some("matmul-tensor-core"));
    }

    #[test]
    fn malformed_rows_are_errors() {
        assert!(parse("wgpu\tk\tnot-a-size\t1\tGFLOP/s\t1\tt\ttrue").is_err());
        assert!(parse("wgpu\tk").is_err());
    }
}

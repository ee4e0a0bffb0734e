//! Layout arithmetic shared by the lessons' diagrams and the small charts (pure; components
//! only draw). A diagram is drawn at its rendered width (one viewBox unit = one CSS px), so
//! its text shows at the stylesheet's size on a phone; these helpers say how wide a text is,
//! where to break it, which tick labels fit and when a diagram stacks its parts.

/// Chars that take a full em (CJK ideographs, kana, fullwidth punctuation).
fn is_wide(c: char) -> bool {
    matches!(c as u32, 0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFF60)
}

/// An upper estimate of a text's width at `font_px`: Latin chars average under 0.6 em in the
/// page's sans-serif, CJK ones take 1 em. Over-estimating only wraps a little early.
pub fn text_width(text: &str, font_px: f64) -> f64 {
    text.chars()
        .map(|c| if is_wide(c) { 1.0 } else { 0.6 })
        .sum::<f64>()
        * font_px
}

/// `text` broken into lines no wider than `max_w` at `font_px`: between words, and between
/// any two CJK chars (Chinese has no spaces). A word wider than `max_w` keeps a line alone.
pub fn wrap(text: &str, font_px: f64, max_w: f64) -> Vec<String> {
    // Pieces that may start a line, each with the space before it.
    let mut pieces: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        let breaks = c == ' ' || (is_wide(c) && !cur.trim().is_empty() && !is_closing(c));
        if breaks && !cur.is_empty() {
            pieces.push(std::mem::take(&mut cur));
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        pieces.push(cur);
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for p in pieces {
        let joined = format!("{line}{p}");
        if line.trim().is_empty() || text_width(joined.trim(), font_px) <= max_w {
            line = joined;
        } else {
            lines.push(line.trim().to_string());
            line = p.trim_start().to_string();
        }
    }
    if !line.trim().is_empty() {
        lines.push(line.trim().to_string());
    }
    lines
}

/// CJK punctuation that must not start a line.
fn is_closing(c: char) -> bool {
    matches!(
        c,
        '，' | '。' | '、' | '：' | '；' | '）' | '」' | '！' | '？'
    )
}

/// Which of the tick labels centred at `xs` (ascending) to show so that no two are closer
/// than their half-widths plus `gap`: the first always, then every one that clears the last
/// shown; the last tick replaces the one before it when both do not fit.
pub fn thin_ticks(xs: &[f64], widths: &[f64], gap: f64) -> Vec<bool> {
    let n = xs.len().min(widths.len());
    let mut keep = vec![false; xs.len()];
    let mut last: Option<usize> = None;
    let clear = |a: usize, b: usize| xs[b] - xs[a] >= (widths[a] + widths[b]) / 2.0 + gap;
    for (i, k) in keep.iter_mut().enumerate().take(n) {
        if last.is_none_or(|l| clear(l, i)) {
            *k = true;
            last = Some(i);
        }
    }
    if n > 1 && !keep[n - 1] {
        // The largest size is the one a reader looks for: drop shown ones before it instead.
        for i in (1..n - 1).rev() {
            if keep[i] {
                keep[i] = false;
                if clear(prev_kept(&keep, i), n - 1) {
                    break;
                }
            }
        }
        keep[n - 1] = clear(prev_kept(&keep, n - 1), n - 1);
    }
    keep
}

fn prev_kept(keep: &[bool], before: usize) -> usize {
    (0..before).rev().find(|&i| keep[i]).unwrap_or(0)
}

/// The width a diagram is drawn at: its rendered width once measured, never below `min`;
/// `natural` until then.
pub fn drawn_width(measured: Option<f64>, natural: f64, min: f64) -> f64 {
    measured
        .filter(|w| w.is_finite() && *w > 0.0)
        .unwrap_or(natural)
        .max(min)
}

/// Where the labels of dots go so that no two overlap: each label (`widths[i]` wide at
/// `font_px`) beside its dot (`dots[i]`, radius ≤ 5) — above right, below right, above left,
/// below left, then further right — at the first place inside `bounds` (left, top, right,
/// bottom) clear of every dot and of the labels placed before it. Returns each label's start
/// x and baseline.
pub fn place_labels(
    dots: &[(f64, f64)],
    widths: &[f64],
    font_px: f64,
    bounds: (f64, f64, f64, f64),
) -> Vec<(f64, f64)> {
    let (l, t, r, b) = bounds;
    // A label's box from its start and baseline: glyphs rise about one em, descend a quarter.
    let boxed = |x: f64, y: f64, w: f64| (x, y - font_px, x + w, y + font_px * 0.25);
    let inside = |(x0, y0, x1, y1): (f64, f64, f64, f64)| x0 >= l && y0 >= t && x1 <= r && y1 <= b;
    let clear = |a: (f64, f64, f64, f64), c: (f64, f64, f64, f64)| {
        a.2 <= c.0 || c.2 <= a.0 || a.3 <= c.1 || c.3 <= a.1
    };
    let mut placed: Vec<(f64, f64, f64, f64)> = dots
        .iter()
        .map(|&(x, y)| (x - 5.0, y - 5.0, x + 5.0, y + 5.0))
        .collect();
    let mut out = Vec::new();
    for (&(x, y), &w) in dots.iter().zip(widths) {
        let (above, below) = (y - 6.0, y + 6.0 + font_px);
        let mut tries = vec![
            (x + 7.0, above),
            (x + 7.0, below),
            (x - 7.0 - w, above),
            (x - 7.0 - w, below),
        ];
        for k in 1..=6 {
            let dx = 7.0 + k as f64 * (font_px * 0.7);
            tries.push((x + dx, above));
            tries.push((x + dx, below));
        }
        let fits = |&(px, py): &(f64, f64)| inside(boxed(px, py, w));
        let free = |&(px, py): &(f64, f64)| placed.iter().all(|&q| clear(boxed(px, py, w), q));
        let at = tries
            .iter()
            .copied()
            .find(|p| fits(p) && free(p))
            .or_else(|| tries.iter().copied().find(fits))
            .unwrap_or(tries[0]);
        placed.push(boxed(at.0, at.1, w));
        out.push(at);
    }
    out
}

/// Pitch of `n` equal cells in `span` px, never more than `max` (the diagram's own size).
pub fn pitch(span: f64, n: usize, max: f64) -> f64 {
    (span / n.max(1) as f64).min(max)
}

/// The utilisation lesson's timeline (two rows of kernels): labels left of the rows where the
/// rows keep 300 px, above them otherwise.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    pub beside: bool,
    /// Where the rows start, the pitch of the ten small kernels, the rows' tops and the
    /// labels' baselines.
    pub x0: f64,
    pub pitch: f64,
    pub rows: [f64; 2],
    pub labels: [f64; 2],
}

pub fn timeline(w: f64, label_w: f64) -> Timeline {
    let label_w = label_w + 8.0;
    let beside = w - label_w >= 300.0;
    let x0 = if beside { label_w.max(180.0) } else { 4.0 };
    Timeline {
        beside,
        x0,
        pitch: (w - x0 - 10.0) / 10.0,
        rows: if beside { [16.0, 66.0] } else { [22.0, 72.0] },
        labels: if beside { [30.0, 80.0] } else { [15.0, 65.0] },
    }
}

/// The SIMT lesson's lanes: a uniform block of 4 steps and a divergent one of 8, side by side
/// where both fit, one above the other otherwise; a left column for the lanes' label.
#[derive(Clone, Debug, PartialEq)]
pub struct Lanes {
    pub side_by_side: bool,
    pub pitch: f64,
    pub uniform_x: f64,
    pub divergent_x: f64,
}

pub fn lanes(w: f64, lanes_label_w: f64, uniform_title_w: f64) -> Lanes {
    let left = (lanes_label_w + 14.0).max(60.0);
    let side_by_side = w >= left + 12.0 * 30.0 + 40.0;
    if side_by_side {
        // The divergent block moves right, as far as it can, to keep the uniform title on one
        // line.
        let min_x = left + 4.0 * 30.0 + 40.0;
        let wanted = left + uniform_title_w + 20.0;
        Lanes {
            side_by_side,
            pitch: 30.0,
            uniform_x: left,
            divergent_x: wanted.min(w - 8.0 * 30.0 - 10.0).max(min_x),
        }
    } else {
        Lanes {
            side_by_side,
            pitch: pitch(w - left - 4.0, 8, 30.0),
            uniform_x: left,
            divergent_x: left,
        }
    }
}

/// The latency-throughput lesson's cores: the GPU's 16 × 12 grid right of the CPU's 2 × 2
/// cores where it fits, under them otherwise.
#[derive(Clone, Debug, PartialEq)]
pub struct Cores {
    pub side_by_side: bool,
    pub gpu_x: f64,
    pub pitch: f64,
}

pub fn cores(w: f64) -> Cores {
    if w >= 560.0 {
        Cores {
            side_by_side: true,
            gpu_x: 270.0,
            pitch: 20.0,
        }
    } else {
        Cores {
            side_by_side: false,
            gpu_x: 20.0,
            pitch: pitch(w - 40.0, 16, 20.0),
        }
    }
}

/// The multi-GPU lesson's three panels, each `PANEL_W` wide: side by side from
/// `PANEL_ROW_W`, one above another below it. Where panel `k` goes and the diagram's height.
pub const PANEL_W: f64 = 240.0;
pub const PANEL_ROW_W: f64 = 730.0;

pub fn panels(w: f64) -> ([(f64, f64); 3], f64) {
    if w >= PANEL_ROW_W {
        ([(0.0, 0.0), (PANEL_W, 0.0), (2.0 * PANEL_W, 0.0)], 250.0)
    } else {
        ([(0.0, 0.0), (0.0, 240.0), (0.0, 480.0)], 720.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_is_wider_than_latin() {
        assert_eq!(text_width("ab", 10.0), 12.0);
        assert_eq!(text_width("时间", 10.0), 20.0);
    }

    #[test]
    fn wraps_between_words_and_between_chinese_chars() {
        let lines = wrap("Stride 4: eight threads, four segments", 10.0, 120.0);
        assert!(lines.len() > 1);
        assert_eq!(lines.join(" "), "Stride 4: eight threads, four segments");
        for l in &lines {
            assert!(text_width(l, 10.0) <= 120.0, "{l}");
        }
        let zh = wrap("步长 4：八个线程，四个段，75 % 的字节被浪费", 10.0, 80.0);
        assert!(zh.len() > 1);
        for l in &zh {
            assert!(text_width(l, 10.0) <= 80.0, "{l}");
            assert!(!l.starts_with('，') && !l.starts_with('：'), "{l}");
        }
        assert_eq!(
            zh.concat().replace(' ', ""),
            "步长4：八个线程，四个段，75%的字节被浪费"
        );
        // Short text stays one line; a long word keeps a line of its own.
        assert_eq!(wrap("time →", 11.0, 300.0), ["time →"]);
        assert_eq!(wrap("abcdefghij x", 10.0, 20.0), ["abcdefghij", "x"]);
        assert!(wrap("", 10.0, 100.0).is_empty());
    }

    #[test]
    fn ticks_that_would_touch_are_dropped_but_the_last_stays() {
        // Wide apart: all shown.
        assert_eq!(thin_ticks(&[0.0, 50.0, 100.0], &[20.0; 3], 4.0), [true; 3]);
        // 30 apart, 30 wide: every other one, and the last replaces its neighbour.
        let xs: Vec<f64> = (0..6).map(|i| i as f64 * 30.0).collect();
        let keep = thin_ticks(&xs, &[30.0; 6], 4.0);
        assert_eq!(keep, [true, false, true, false, false, true]);
        let keep = thin_ticks(&xs[..5], &[30.0; 5], 4.0);
        assert_eq!(keep, [true, false, true, false, true]);
        // Two that cannot both fit: the first only.
        assert_eq!(thin_ticks(&[0.0, 10.0], &[30.0; 2], 4.0), [true, false]);
        assert!(thin_ticks(&[], &[], 4.0).is_empty());
    }

    #[test]
    fn drawn_width_falls_back_and_has_a_floor() {
        assert_eq!(drawn_width(None, 640.0, 280.0), 640.0);
        assert_eq!(drawn_width(Some(350.0), 640.0, 280.0), 350.0);
        assert_eq!(drawn_width(Some(100.0), 640.0, 280.0), 280.0);
        assert_eq!(drawn_width(Some(f64::NAN), 640.0, 280.0), 640.0);
    }

    #[test]
    fn lesson_diagrams_keep_their_layout_wide_and_stack_on_a_phone() {
        // Timeline: the 620 px original, labels beside; at 350 px above the rows.
        let wide = timeline(620.0, 120.0);
        assert!(wide.beside);
        assert_eq!((wide.x0, wide.pitch), (180.0, 43.0));
        let phone = timeline(350.0, 120.0);
        assert!(!phone.beside && phone.x0 + 10.0 * phone.pitch <= 350.0 - 10.0 + 1e-9);
        assert!(phone.labels[0] < phone.rows[0] && phone.labels[1] < phone.rows[1]);

        // Lanes: side by side at 640, the divergent block inside the width.
        let wide = lanes(640.0, 40.0, 250.0);
        assert!(wide.side_by_side);
        assert!(wide.divergent_x + 8.0 * wide.pitch <= 640.0);
        assert_eq!(wide.divergent_x, 60.0 + 250.0 + 20.0);
        // A long title cannot push the divergent block off the diagram.
        assert_eq!(lanes(640.0, 40.0, 600.0).divergent_x, 640.0 - 250.0);
        let phone = lanes(350.0, 50.0, 250.0);
        assert!(!phone.side_by_side);
        assert!(phone.divergent_x + 8.0 * phone.pitch <= 350.0 - 4.0 + 1e-9);

        // Cores: the original at 620; at 350 the grid is under the cores, inside the width.
        assert_eq!(
            cores(620.0),
            Cores {
                side_by_side: true,
                gpu_x: 270.0,
                pitch: 20.0
            }
        );
        let phone = cores(350.0);
        assert!(!phone.side_by_side && phone.gpu_x + 16.0 * phone.pitch <= 350.0 - 20.0 + 1e-9);

        // Panels: a row of three from 730 px, a column below.
        let (row, h) = panels(730.0);
        assert_eq!((row[2], h), ((480.0, 0.0), 250.0));
        let (column, h) = panels(350.0);
        assert_eq!((column[2], h), ((0.0, 480.0), 720.0));

        assert_eq!(pitch(576.0, 32, 18.0), 18.0);
        assert_eq!(pitch(320.0, 32, 18.0), 10.0);
        assert_eq!(pitch(10.0, 0, 18.0), 10.0);
    }

    #[test]
    fn labels_of_close_dots_do_not_overlap_and_stay_inside() {
        let bounds = (70.0, 16.0, 340.0, 276.0);
        // Two dots 8 px apart: the second label goes elsewhere.
        let at = place_labels(&[(200.0, 100.0), (208.0, 104.0)], &[7.0, 7.0], 11.0, bounds);
        assert_eq!(at[0], (207.0, 94.0));
        let b = |(x, y): (f64, f64)| (x, y - 11.0, x + 7.0, y + 2.75);
        let (p, q) = (b(at[0]), b(at[1]));
        assert!(
            p.2 <= q.0 || q.2 <= p.0 || p.3 <= q.1 || q.3 <= p.1,
            "{at:?}"
        );
        // A dot at the right edge gets its label on its left.
        let at = place_labels(&[(338.0, 100.0)], &[14.0], 11.0, bounds);
        assert_eq!(at[0], (338.0 - 7.0 - 14.0, 94.0));
        // A label does not cover another dot: here the one just above right of the first.
        let at = place_labels(&[(200.0, 100.0), (210.0, 88.0)], &[7.0, 7.0], 11.0, bounds);
        assert_ne!(at[0], (207.0, 94.0));
        // A dot at the top gets its label below.
        let at = place_labels(&[(200.0, 18.0)], &[7.0], 11.0, bounds);
        assert_eq!(at[0], (207.0, 35.0));
    }
}

//! One training run without its GPU session: the network and data the settings make, the CPU
//! twin that trains beside the GPU, the run's [`Lifecycle`], and what the page shows of both
//! sides (the loss curves, the decision boundary's heat, the weights and neuron pictures,
//! each from the side that made it). The app's `components/train/runner.rs` adds the GPU
//! session and hands its evaluations to [`Board::show_gpu_eval`].

use mlp::data::grid_points;
use mlp::net::{batch_order, metrics};
use mlp::{CpuTrainer, Net, Points, Spec};

use super::picture::{neuron_pictures, output_shade};
use super::run::{push_sample, Lifecycle, Sample, CPU_EVAL_MS, GRID, NEURON_GRID, SLICE_MS};

/// Owned copies of what a GPU session is built from: network, initial parameters, training
/// features, labels, batch order, evaluation rows (the grid, then the training and test
/// points).
pub type SessionParts = (Net, Vec<f32>, Vec<f32>, Vec<u32>, Vec<u32>, Vec<f32>);

/// Most CPU-twin steps in one tick's slice.
const MAX_CPU_STEPS_PER_SLICE: u32 = 2000;

pub struct Board {
    pub spec: Spec,
    pub net: Net,
    pub train: Points,
    pub test: Points,
    train_x: Vec<f32>,
    test_x: Vec<f32>,
    grid_x: Vec<f32>,
    neuron_x: Vec<f32>,
    order: Vec<u32>,
    init: Vec<f32>,
    pub cpu: CpuTrainer,
    /// Play/Pause, the hidden page, the rates and the report after Pause.
    pub life: Lifecycle,
    pub gpu_hist: Vec<Sample>,
    pub cpu_hist: Vec<Sample>,
    /// Class-1 probability (regression: the output mapped from [−1, 1] to [0, 1]) on the
    /// grid, row by row from the top.
    pub heat: Vec<f32>,
    /// Whether `heat` came from the GPU (else from the CPU twin).
    pub heat_from_gpu: bool,
    /// Heatmaps drawn so far (tests wait for a new one).
    pub heat_version: u64,
    /// Parameters to draw the weights with.
    pub weights: Vec<f32>,
    /// Each input's and hidden neuron's output over the plane (see `picture::neuron_pictures`),
    /// from `weights`: the GPU's when it trains, else the CPU twin's.
    pub neurons: Vec<Vec<String>>,
    last_cpu_eval: f64,
    last_cpu_step_evaluated: u64,
    /// Something changed since the last render.
    pub dirty: bool,
    /// The learner left the page and came back: this run was kept (the GPU's and the CPU's
    /// steps when they left). Cleared by the next Play, Pause or Step.
    pub returned: Option<(Option<u64>, u64)>,
}

impl Board {
    /// The run of `spec`, its untrained CPU twin evaluated and drawn.
    pub fn new(spec: Spec) -> Self {
        let net = spec.net();
        let (train, test) = spec.data();
        let train_x = train.features(&spec.features);
        let test_x = test.features(&spec.features);
        let grid_x = grid_points(GRID).features(&spec.features);
        let neuron_x = grid_points(NEURON_GRID).features(&spec.features);
        let order = batch_order(train.len(), spec.seed);
        let init = net.init_params(spec.seed);
        let mut cpu = CpuTrainer::new(
            net.clone(),
            spec.hyper(),
            init.clone(),
            spec.batch,
            train_x.clone(),
            train.label.clone(),
            order.clone(),
        );
        cpu.accum = spec.accum;
        let mut b = Self {
            net,
            train,
            test,
            train_x,
            test_x,
            grid_x,
            neuron_x,
            order,
            neurons: Vec::new(),
            weights: init.clone(),
            init,
            cpu,
            life: Lifecycle::default(),
            gpu_hist: Vec::new(),
            cpu_hist: Vec::new(),
            heat: Vec::new(),
            heat_from_gpu: false,
            heat_version: 0,
            last_cpu_eval: f64::NEG_INFINITY,
            last_cpu_step_evaluated: u64::MAX,
            dirty: true,
            returned: None,
            spec,
        };
        b.cpu_eval(0.0, true, false);
        b
    }

    /// What the GPU session is built from (owned, so it can cross an await).
    pub fn session_parts(&self) -> SessionParts {
        let eval: Vec<f32> = self
            .grid_x
            .iter()
            .chain(&self.train_x)
            .chain(&self.test_x)
            .copied()
            .collect();
        (
            self.net.clone(),
            self.init.clone(),
            self.train_x.clone(),
            self.train.label.clone(),
            self.order.clone(),
            eval,
        )
    }

    /// Starts or stops training; the rates start measuring afresh.
    pub fn set_playing(&mut self, playing: bool) {
        self.returned = None;
        self.life.set_playing(playing);
        self.dirty = true;
    }

    /// Play or Pause (the Play button). Pausing ends a training run: an embed reports where it
    /// got to once the steps already sent have finished.
    pub fn toggle_playing(&mut self) {
        self.returned = None;
        self.life.toggle();
        self.dirty = true;
    }

    /// The run as kept when the learner leaves the page, at `reached` (the GPU's and the
    /// CPU's steps): training holds as for a hidden tab and resumes when the page is shown.
    pub fn left(&mut self, reached: (Option<u64>, u64)) {
        self.set_hidden(true);
        self.returned = Some(reached);
        self.dirty = true;
    }

    /// Whether leaving now would lose anything worth keeping.
    pub fn worth_keeping(&self, gpu_steps: Option<u64>) -> bool {
        self.cpu.step > 0 || gpu_steps.unwrap_or(0) > 0 || self.life.playing
    }

    /// The page was hidden or shown again; the rates start measuring afresh.
    pub fn set_hidden(&mut self, hidden: bool) {
        if self.life.set_hidden(hidden) {
            self.dirty = true;
        }
    }

    /// The CPU twin's share of a tick: steps for [`SLICE_MS`] of `now_ms`'s clock (at most
    /// 2000).
    pub fn cpu_slice(&mut self, now_ms: impl Fn() -> f64) {
        let start = now_ms();
        let mut n = 0;
        while now_ms() - start < SLICE_MS && n < MAX_CPU_STEPS_PER_SLICE {
            self.cpu.step();
            n += 1;
        }
    }

    /// The GPU's evaluation of its network at `step`: `logits` over the grid, then the
    /// training and the test points, and its parameters. It becomes the picture, the weights
    /// and a point of the GPU's curve; a readback too short for this run's points (an older
    /// network's) is ignored.
    pub fn show_gpu_eval(&mut self, step: u64, logits: &[f32], params: Vec<f32>) {
        let c = self.net.classes();
        let g = GRID * GRID;
        let n_train = self.train.len();
        if logits.len() < (g + n_train + self.test.len()) * c {
            return;
        }
        self.heat = logits[..g * c].chunks_exact(c).map(output_shade).collect();
        self.heat_from_gpu = true;
        self.heat_version += 1;
        let loss = self.net.loss;
        let (train, _) = metrics(
            loss,
            &logits[g * c..(g + n_train) * c],
            &self.train.label,
            c,
        );
        let (test, acc) = metrics(loss, &logits[(g + n_train) * c..], &self.test.label, c);
        push_sample(
            &mut self.gpu_hist,
            Sample {
                step,
                train,
                test,
                test_acc: acc,
            },
        );
        self.weights = params;
        self.draw_neurons();
        self.dirty = true;
    }

    fn draw_neurons(&mut self) {
        self.neurons = neuron_pictures(&self.net, &self.weights, &self.neuron_x, NEURON_GRID);
    }

    /// Evaluates the CPU twin (at most every [`CPU_EVAL_MS`] unless `force`, and once per
    /// step): a point of its curve, and, while no GPU session trains (`gpu_session` false),
    /// the picture and the weights too.
    pub fn cpu_eval(&mut self, now: f64, force: bool, gpu_session: bool) {
        if !force && now - self.last_cpu_eval < CPU_EVAL_MS {
            return;
        }
        if self.cpu.step == self.last_cpu_step_evaluated {
            return;
        }
        self.last_cpu_eval = now;
        self.last_cpu_step_evaluated = self.cpu.step;
        let (train, _) = self.cpu.evaluate(&self.train_x, &self.train.label);
        let (test, acc) = self.cpu.evaluate(&self.test_x, &self.test.label);
        push_sample(
            &mut self.cpu_hist,
            Sample {
                step: self.cpu.step,
                train,
                test,
                test_acc: acc,
            },
        );
        if !gpu_session {
            let z = self.net.logits(&self.cpu.params, &self.grid_x, GRID * GRID);
            let c = self.net.classes().max(1);
            self.heat = z.chunks_exact(c).map(output_shade).collect();
            self.heat_from_gpu = false;
            self.heat_version += 1;
            self.weights = self.cpu.params.clone();
            self.draw_neurons();
        }
        self.dirty = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Spec {
        Spec {
            points: 100,
            ..Spec::default()
        }
    }

    #[test]
    fn leaving_holds_the_run_and_coming_back_resumes_it() {
        let mut b = Board::new(small());
        assert!(!b.worth_keeping(None));
        b.set_playing(true);
        b.cpu.step();
        assert!(b.worth_keeping(Some(0)));
        b.left((Some(4), 1));
        assert!(!b.life.running(), "held while away");
        assert_eq!(b.returned, Some((Some(4), 1)));
        b.set_hidden(false);
        assert!(b.life.running(), "running again on return");
        assert_eq!(b.returned, Some((Some(4), 1)), "said until the next press");
        b.toggle_playing();
        assert_eq!(b.returned, None);
    }

    #[test]
    fn a_new_board_shows_the_untrained_twin() {
        let b = Board::new(small());
        assert_eq!(b.cpu_hist.len(), 1);
        assert_eq!(b.cpu_hist[0].step, 0);
        assert!(b.gpu_hist.is_empty());
        assert_eq!(b.heat.len(), GRID * GRID);
        assert!(!b.heat_from_gpu);
        assert_eq!(b.heat_version, 1);
        assert_eq!(b.weights, b.cpu.params);
        assert!(!b.neurons.is_empty());
        assert!(b.dirty);
        let (net, init, x, labels, order, eval) = b.session_parts();
        assert_eq!(net, b.net);
        assert_eq!(init, b.weights);
        assert_eq!(labels, b.train.label);
        assert_eq!(order.len(), b.train.len());
        let per_point = x.len() / b.train.len();
        assert_eq!(
            eval.len(),
            (GRID * GRID + b.train.len() + b.test.len()) * per_point
        );
    }

    #[test]
    fn the_twin_is_evaluated_once_per_step_and_at_most_every_quarter_second() {
        let mut b = Board::new(small());
        b.cpu_eval(10.0, false, false);
        assert_eq!(b.cpu_hist.len(), 1, "no new step");
        b.cpu.step();
        b.cpu_eval(10.0, false, false);
        assert_eq!(b.cpu_hist.len(), 1, "too soon");
        b.cpu_eval(10.0 + CPU_EVAL_MS, false, false);
        assert_eq!(b.cpu_hist.len(), 2);
        assert_eq!(b.cpu_hist[1].step, 1);
        // With a GPU session the picture stays the GPU's.
        b.cpu.step();
        let version = b.heat_version;
        b.cpu_eval(0.0, true, true);
        assert_eq!(b.cpu_hist.len(), 3);
        assert_eq!(b.heat_version, version);
    }

    #[test]
    fn the_gpu_evaluation_is_shown_as_the_gpu_s_and_a_stale_one_is_ignored() {
        let mut b = Board::new(small());
        let c = b.net.classes();
        let rows = GRID * GRID + b.train.len() + b.test.len();
        b.show_gpu_eval(3, &vec![0.0; rows * c - 1], vec![]);
        assert!(b.gpu_hist.is_empty() && !b.heat_from_gpu, "too short");
        let params = vec![0.5; b.weights.len()];
        b.show_gpu_eval(3, &vec![0.0; rows * c], params.clone());
        assert!(b.heat_from_gpu);
        assert_eq!(b.heat_version, 2);
        assert_eq!(b.gpu_hist.len(), 1);
        assert_eq!(b.gpu_hist[0].step, 3);
        assert_eq!(b.weights, params);
        // Equal logits: every point is a coin toss.
        assert!(b.heat.iter().all(|&p| (p - 0.5).abs() < 1e-6));
    }

    #[test]
    fn a_slice_steps_the_twin_within_its_budget() {
        let mut b = Board::new(small());
        let clock = std::cell::Cell::new(0.0);
        // Each reading of the clock advances it by 1 ms: about SLICE_MS steps.
        b.cpu_slice(|| {
            clock.set(clock.get() + 1.0);
            clock.get()
        });
        assert!(
            (1..=SLICE_MS as u64 + 1).contains(&b.cpu.step),
            "{}",
            b.cpu.step
        );
        // A clock that stands still: the step cap ends the slice.
        let mut b = Board::new(small());
        b.cpu_slice(|| 0.0);
        assert_eq!(b.cpu.step, MAX_CPU_STEPS_PER_SLICE as u64);
        b.toggle_playing();
        assert!(b.life.playing && b.dirty);
    }
}

//! Whether the tab is hidden. A hidden tab's timers are throttled and its work shares the
//! machine with whatever the visitor switched to, so a time measured across a hidden moment
//! says little about the GPU or the CPU.

/// True while the page is hidden (another tab, a minimised window).
pub fn page_hidden() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .is_some_and(|d| d.hidden())
}

/// Remembers whether the page was hidden at any moment of a measurement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HiddenWatch {
    watching: bool,
    seen: bool,
}

impl HiddenWatch {
    /// Starts watching; `hidden_now` is the page's state at the start.
    pub fn start(hidden_now: bool) -> Self {
        HiddenWatch {
            watching: true,
            seen: hidden_now,
        }
    }

    /// A visibility change (or a look at the end); ignored once stopped.
    pub fn saw(&mut self, hidden: bool) {
        if self.watching {
            self.seen |= hidden;
        }
    }

    /// Stops watching (the measurement ended); the verdict stays.
    pub fn stop(&mut self, hidden_now: bool) {
        self.saw(hidden_now);
        self.watching = false;
    }

    /// Whether the measured times are unreliable.
    pub fn was_hidden(&self) -> bool {
        self.seen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hidden_moment_marks_the_measurement_and_stays() {
        let mut w = HiddenWatch::start(false);
        assert!(!w.was_hidden());
        w.saw(true);
        w.saw(false);
        w.stop(false);
        assert!(
            w.was_hidden(),
            "shown again at the end, but hidden in between"
        );
    }

    #[test]
    fn hidden_at_either_end_counts_and_after_the_end_does_not() {
        assert!(HiddenWatch::start(true).was_hidden());
        let mut w = HiddenWatch::start(false);
        w.stop(true);
        assert!(w.was_hidden());
        let mut w = HiddenWatch::start(false);
        w.stop(false);
        w.saw(true);
        assert!(
            !w.was_hidden(),
            "hiding after the race does not change its times"
        );
        assert!(!HiddenWatch::default().was_hidden());
    }
}

//! Replaying how a real GPU scheduled a launch, from the schedule probe's start and end
//! tickets (one global counter, so all starts and ends are totally ordered).

/// What the tickets say.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    pub gx: u32,
    pub gy: u32,
    /// Workgroup ids (y·gx + x) in the order they started.
    pub start_order: Vec<u32>,
    /// Most workgroups running at the same time.
    pub max_resident: u32,
    /// Per workgroup id: its wave, i.e. start rank / max_resident.
    pub wave_of: Vec<u32>,
    /// Number of waves.
    pub waves: u32,
    /// Share of consecutive starts that go to the next id in row-major order (1.0 = the GPU
    /// started workgroups exactly in row-major order).
    pub row_major_share: f64,
}

/// Builds a replay from `events[id] = (start ticket, end ticket)`.
pub fn replay(gx: u32, gy: u32, events: &[(u32, u32)]) -> Replay {
    let mut starts: Vec<(u32, u32)> = events
        .iter()
        .enumerate()
        .map(|(id, e)| (e.0, id as u32))
        .collect();
    starts.sort_unstable();
    let start_order: Vec<u32> = starts.iter().map(|&(_, id)| id).collect();
    // +1 at each start, −1 at each end, in ticket order.
    let mut timeline: Vec<(u32, i32)> = events
        .iter()
        .flat_map(|&(s, e)| [(s, 1), (e, -1)])
        .collect();
    timeline.sort_unstable();
    let mut resident = 0i32;
    let mut max_resident = 0i32;
    for (_, d) in timeline {
        resident += d;
        max_resident = max_resident.max(resident);
    }
    let max_resident = max_resident.max(1) as u32;
    let mut wave_of = vec![0u32; events.len()];
    for (rank, &id) in start_order.iter().enumerate() {
        wave_of[id as usize] = rank as u32 / max_resident;
    }
    let waves = wave_of.iter().copied().max().map_or(0, |w| w + 1);
    let next_in_row = start_order.windows(2).filter(|w| w[1] == w[0] + 1).count();
    let row_major_share = if start_order.len() > 1 {
        next_in_row as f64 / (start_order.len() - 1) as f64
    } else {
        1.0
    };
    Replay {
        gx,
        gy,
        start_order,
        max_resident,
        wave_of,
        waves,
        row_major_share,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_at_a_time_in_row_major_order() {
        // 4 workgroups, 2 resident: 0 and 1 start, 0 ends, 2 starts, 1 ends, 3 starts, …
        let events = [(0, 2), (1, 4), (3, 6), (5, 7)];
        let r = replay(2, 2, &events);
        assert_eq!(r.start_order, vec![0, 1, 2, 3]);
        assert_eq!(r.max_resident, 2);
        assert_eq!(r.wave_of, vec![0, 0, 1, 1]);
        assert_eq!(r.waves, 2);
        assert_eq!(r.row_major_share, 1.0);
    }

    #[test]
    fn out_of_order_and_all_at_once() {
        // Everything starts before anything ends, in the order 2, 0, 3, 1.
        let events = [(1, 5), (3, 7), (0, 4), (2, 6)];
        let r = replay(4, 1, &events);
        assert_eq!(r.start_order, vec![2, 0, 3, 1]);
        assert_eq!(r.max_resident, 4);
        assert_eq!(r.waves, 1);
        assert_eq!(r.row_major_share, 0.0);
    }
}

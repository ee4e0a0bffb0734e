//! The access log on a real device (lavapipe in CI): a puzzle solution instrumented by
//! `wgsl_check::instrument`, run with the log buffer bound after the puzzle's buffers, decoded
//! by `puzzles::access::summarize`, against what each kernel must do by construction.

use puzzles::access::{log_words, summarize, ArrayInfo, Summary, READ, WRITE};
use puzzles::{at_size, cases, mistaken, solution, Case, Puzzle};
use wgpu::util::DeviceExt;

fn device() -> (wgpu::Device, wgpu::Queue) {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .expect("no GPU adapter: install a Vulkan driver (`cargo xtask test` installs lavapipe)");
    pollster::block_on(adapter.request_device(&Default::default())).expect("device")
}

fn invocations(p: &Puzzle) -> u32 {
    puzzles::access::invocations(p)
}

/// Runs `source` instrumented at the puzzle's own size, with a log of `records` records; the
/// decoded summary.
fn run_logged(p: &Puzzle, source: &str, records: usize) -> Summary {
    let own = cases(p).swap_remove(0);
    run_logged_case(p, source, &own, records).0
}

/// Runs `source` instrumented at `case`, with a log of `records` records; the decoded summary
/// and the array number the instrumenter gave `out`.
fn run_logged_case(
    p: &Puzzle,
    source: &str,
    case: &Case,
    records: usize,
) -> (Summary, Option<u32>) {
    let (device, queue) = device();
    let inst = wgsl_check::instrument(source, "main").expect("instruments");
    assert_eq!(inst.log_binding as usize, p.inputs.len() + 1, "{}", p.id);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(p.id),
        source: wgpu::ShaderSource::Wgsl(inst.source.as_str().into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(p.id),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let inputs = &case.inputs;
    let mut contents: Vec<Vec<u8>> = inputs
        .iter()
        .map(|d| bytemuck::cast_slice(d).to_vec())
        .collect();
    contents.push(bytemuck::cast_slice(&case.initial_output()).to_vec());
    contents.push(bytemuck::cast_slice(&vec![0u32; log_words(records)]).to_vec());
    let buffers: Vec<_> = contents
        .iter()
        .map(|c| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: c,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            })
        })
        .collect();
    let layout = pipeline.get_bind_group_layout(0);
    // The auto layout holds only what the kernel uses; bind exactly those.
    let used: Vec<u32> = (0..buffers.len() as u32)
        .filter(|b| {
            let name = if (*b as usize) < p.inputs.len() {
                p.inputs[*b as usize]
            } else if *b as usize == p.inputs.len() {
                "out"
            } else {
                return true;
            };
            inst.arrays
                .iter()
                .any(|a| a.binding == Some(*b) && a.name == name)
        })
        .collect();
    let entries: Vec<_> = used
        .iter()
        .map(|b| wgpu::BindGroupEntry {
            binding: *b,
            resource: buffers[*b as usize].as_entire_binding(),
        })
        .collect();
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &layout,
        entries: &entries,
    });
    let log = &buffers[buffers.len() - 1];
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: log.size(),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        let [x, y, z] = case.workgroups;
        pass.dispatch_workgroups(x, y, z);
    }
    enc.copy_buffer_to_buffer(log, 0, &read, 0, log.size());
    queue.submit([enc.finish()]);
    read.slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let words: Vec<u32> =
        bytemuck::cast_slice(&read.slice(..).get_mapped_range().expect("range")).to_vec();
    let arrays: Vec<ArrayInfo> = inst
        .arrays
        .iter()
        .map(|a| ArrayInfo {
            name: a.name.clone(),
            len: puzzles::access::logical_len(p, inputs, a.binding, a.len),
            shared: a.binding.is_none(),
        })
        .collect();
    let out = puzzles::access::out_array(p, inst.arrays.iter().map(|a| a.binding));
    (
        summarize(
            &words,
            &arrays,
            puzzles::access::invocations_over(p, case.workgroups),
        ),
        out,
    )
}

#[test]
fn map_invocation_i_reads_a_i_and_writes_out_i_once_each() {
    let p = puzzles::find("map").expect("map");
    let s = run_logged(p, &solution(p), 64);
    let n = invocations(p);
    assert_eq!(s.attempted, 2 * n);
    assert_eq!(s.dropped, 0);
    for i in 0..n {
        let mine: Vec<_> = s.of(i).map(|a| (a.array, a.index, a.kind)).collect();
        assert_eq!(mine.len(), 2, "{i}: {mine:?}");
        assert!(mine.contains(&(0, i, READ)), "{i}: {mine:?}");
        assert!(mine.contains(&(1, i, WRITE)), "{i}: {mine:?}");
    }
    assert_eq!(s.total_out_of_bounds(), 0);
    assert_eq!(s.total_shared(), 0);
}

#[test]
fn a_missing_guard_shows_as_out_of_bounds_accesses() {
    let p = puzzles::find("guard").expect("guard");
    let good = run_logged(p, &solution(p), 64);
    assert_eq!(good.total_out_of_bounds(), 0);
    // Without the guard, threads 4..8 read a[i] and write out[i] past N = 4: two each.
    let bad = run_logged(p, &mistaken(p), 64);
    assert_eq!(bad.out_of_bounds, [0, 0, 0, 0, 2, 2, 2, 2]);
}

#[test]
fn shared_memory_accesses_are_counted_per_invocation() {
    let p = puzzles::find("shared").expect("shared");
    let s = run_logged(p, &solution(p), 256);
    // tile[l] = a[i]; out[i] = tile[l] + 10: one shared write and one shared read each.
    assert!(s.shared.iter().all(|&c| c == 2), "{:?}", s.shared);
    assert!(s.reads.iter().all(|&c| c == 2), "{:?}", s.reads);
    assert!(s.writes.iter().all(|&c| c == 2), "{:?}", s.writes);
}

#[test]
fn a_small_log_keeps_what_fits_and_counts_the_rest() {
    let p = puzzles::find("map").expect("map");
    let s = run_logged(p, &solution(p), 3);
    assert_eq!(s.records.len(), 3);
    assert_eq!(s.attempted, 2 * invocations(p));
    assert_eq!(s.dropped, s.attempted - 3);
}

#[test]
fn every_reference_solution_instruments_and_runs() {
    for p in puzzles::PUZZLES {
        let s = run_logged(p, &solution(p), 4096);
        assert!(s.attempted > 0, "{}", p.id);
        assert_eq!(s.dropped, 0, "{}", p.id);
        assert_eq!(
            s.total_out_of_bounds(),
            0,
            "{}: {:?}",
            p.id,
            s.out_of_bounds
        );
    }
}

#[test]
fn a_flattened_guard_in_the_2d_map_shows_elements_written_by_two_threads() {
    // `r * N + c < N * N` lets thread (3, 0) write element 3, which thread (0, 1) writes too:
    // the same value here, so the checker passes it at every size, but it is a race.
    let p = puzzles::find("map2d").expect("map2d");
    let text = solution(p).replacen("if (r < N && c < N)", "if (r * N + c < N * N)", 1);
    assert_ne!(text, solution(p), "the guard to flatten is in the solution");
    let s = run_logged(p, &text, 4096);
    let out = p.inputs.len() as u32;
    let contested: Vec<_> = s.overwritten.iter().filter(|o| o.array == out).collect();
    assert_eq!(contested.len(), 2, "{:?}", s.overwritten);
    assert_eq!(contested[0].index, 3);
    assert_eq!(
        contested[0]
            .writers
            .iter()
            .map(|w| puzzles::access::thread_label(p.workgroup_size, *w))
            .collect::<Vec<_>>(),
        ["(3, 0)", "(0, 1)"]
    );
    assert!(run_logged(p, &solution(p), 4096).overwritten.is_empty());
}

#[test]
fn no_reference_solution_writes_an_element_twice_at_any_size() {
    // The Run verdict fails an answer with an element of `out` written by two threads (a
    // race): every reference solution must stay Solved at every size it is checked at.
    for p in puzzles::PUZZLES {
        for case in cases(p) {
            let text = at_size(p, &solution(p), &case).expect("the solution declares its sizes");
            let (s, out) = run_logged_case(p, &text, &case, 1 << 16);
            let out = out.expect("every solution writes out");
            // The page's log holds every access of a correct answer, so its race check sees all.
            assert!(
                s.attempted as usize <= puzzles::access::CAPACITY,
                "{} {}",
                p.id,
                case.label()
            );
            assert_eq!(s.dropped, 0, "{} {}", p.id, case.label());
            assert_eq!(
                puzzles::access::race(&s, out),
                None,
                "{} {}",
                p.id,
                case.label()
            );
            let mut v = case.check(&[]);
            v.race = puzzles::access::race(&s, out);
            assert!(v.race.is_none(), "{} {}", p.id, case.label());
        }
    }
}

#[test]
fn the_verdict_of_a_flattened_guard_is_a_race_at_the_own_size_not_solved() {
    let p = puzzles::find("map2d").expect("map2d");
    let text = solution(p).replacen("if (r < N && c < N)", "if (r * N + c < N * N)", 1);
    // Only sizes where the workgroup is wider than N have a thread past a row's end.
    for case in cases(p).into_iter().filter(|c| c.own) {
        let sized = at_size(p, &text, &case).expect("sizes");
        let (s, out) = run_logged_case(p, &sized, &case, 1 << 16);
        // The values all match (both writers write the same), so only the race fails it.
        let mut v = case.check(
            &case
                .expected
                .iter()
                .copied()
                .chain([puzzles::SENTINEL; puzzles::GUARD])
                .collect::<Vec<_>>(),
        );
        assert!(v.passed(), "{}", case.label());
        v.race = puzzles::access::race(&s, out.expect("out"));
        let r = v.race.clone().expect("a race at the own size");
        assert!(!v.passed(), "{}", case.label());
        assert_eq!(r.index, 3);
        let names: Vec<_> = r
            .writers
            .iter()
            .map(|w| puzzles::access::thread_label(p.workgroup_size, *w))
            .collect();
        assert_eq!(names, ["(3, 0)", "(0, 1)"]);
    }
}

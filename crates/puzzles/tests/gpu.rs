//! Every puzzle on a real wgpu device (lavapipe in CI): the reference solution passes, the
//! plausible mistake fails, and the untouched starter fails (it writes nothing).
//! A minimal runner with raw wgpu, binding by the crate's convention; it fails — never skips —
//! when no adapter is found.

use puzzles::{at_size, cases, mistaken, solution, starter, Case, Puzzle, Verdict, PUZZLES};
use wgpu::util::DeviceExt;

fn device() -> (wgpu::Device, wgpu::Queue) {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    let adapter = pollster::block_on(instance.request_adapter(&Default::default()))
        .expect("no GPU adapter: install a Vulkan driver (`cargo xtask test` installs lavapipe)");
    pollster::block_on(adapter.request_device(&Default::default())).expect("device")
}

fn run(dev: &(wgpu::Device, wgpu::Queue), p: &Puzzle, source: &str) -> Verdict {
    run_case(dev, p, source, &cases(p)[0])
}

/// Runs `source` at `case`'s size (its size constants rewritten, its data and launch).
fn run_case(dev: &(wgpu::Device, wgpu::Queue), p: &Puzzle, source: &str, case: &Case) -> Verdict {
    let source = at_size(p, source, case).expect("size constants declared");
    let source = source.as_str();
    let (device, queue) = dev;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(p.id),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    // An explicit layout from the convention (inputs read-only, output read-write): a kernel
    // that leaves a buffer unused still binds, and one that declares it otherwise is an error.
    let storage = |binding: u32, read_only: bool| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let n = p.inputs.len() as u32;
    let mut layout_entries: Vec<_> = (0..n).map(|b| storage(b, true)).collect();
    layout_entries.push(storage(n, false));
    let group_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: None,
        entries: &layout_entries,
    });
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: None,
        bind_group_layouts: &[Some(&group_layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(p.id),
        layout: Some(&layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    if let Some(e) = pollster::block_on(scope.pop()) {
        panic!("{}: {e}", p.id);
    }
    let inputs = &case.inputs;
    let mut buffers: Vec<wgpu::Buffer> = inputs
        .iter()
        .map(|d| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: bytemuck::cast_slice(d),
                usage: wgpu::BufferUsages::STORAGE,
            })
        })
        .collect();
    let init = case.initial_output();
    let bytes = (init.len() * 4) as u64;
    buffers.push(
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("out"),
            contents: bytemuck::cast_slice(&init),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        }),
    );
    let read = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let entries: Vec<_> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: b.as_entire_binding(),
        })
        .collect();
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &group_layout,
        entries: &entries,
    });
    let mut enc = device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        let [x, y, z] = case.workgroups;
        pass.dispatch_workgroups(x, y, z);
    }
    enc.copy_buffer_to_buffer(&buffers[buffers.len() - 1], 0, &read, 0, bytes);
    queue.submit([enc.finish()]);
    read.slice(..)
        .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    let out: Vec<f32> =
        bytemuck::cast_slice(&read.slice(..).get_mapped_range().expect("range")).to_vec();
    case.check(&out)
}

#[test]
fn every_reference_solution_passes_on_the_gpu() {
    let dev = device();
    for p in PUZZLES {
        let v = run(&dev, p, &solution(p));
        assert!(v.passed(), "{}: {v:?}", p.id);
    }
}

#[test]
fn every_plausible_mistake_fails_on_the_gpu() {
    let dev = device();
    for p in PUZZLES {
        let v = run(&dev, p, &mistaken(p));
        assert!(!v.passed(), "{}: the mistake {:?} passed", p.id, p.mistake);
    }
}

#[test]
fn every_starter_compiles_and_fails_with_nothing_written() {
    let dev = device();
    for p in PUZZLES {
        let v = run(&dev, p, &starter(p));
        assert!(!v.passed(), "{}", p.id);
        assert_eq!(v.wrong, p.output_len, "{}: {v:?}", p.id);
        assert!(v.first.iter().all(|m| m.got.is_none()), "{}: {v:?}", p.id);
    }
}

#[test]
fn a_missing_guard_is_caught_as_a_write_past_the_end() {
    let dev = device();
    let p = puzzles::find("guard").expect("guard puzzle");
    let v = run(&dev, p, &mistaken(p));
    assert!(v.written_past_end > 0, "{v:?}");
}

#[test]
fn every_reference_solution_passes_at_every_size() {
    let dev = device();
    let mut sized = 0;
    for p in PUZZLES {
        let all = cases(p);
        sized += usize::from(all.len() > 1);
        for case in &all {
            let v = run_case(&dev, p, &solution(p), case);
            assert!(v.passed(), "{} at {}: {v:?}", p.id, case.label());
        }
    }
    assert!(
        sized >= 5,
        "only {sized} puzzles are checked at several sizes"
    );
}

/// Answers right at the puzzle's own size only (a length written as a number): each passes
/// there and fails at one of the other sizes.
const SIZE_MISTAKES: &[(&str, &str, &str)] = &[
    ("guard", "if (i < N)", "if (i < 4u)"),
    (
        "map2d",
        "out[r * N + c] = a[r * N + c]",
        "out[r * 3u + c] = a[r * 3u + c]",
    ),
    ("broadcast", "if (r < N && c < N)", "if (r < 2u && c < 2u)"),
    ("blocks", "if (i < N)", "if (i < 9u)"),
    ("axis_sum", "c < C;", "c < 6u;"),
];

#[test]
fn an_answer_right_only_at_its_own_size_fails_at_another() {
    let dev = device();
    for (id, from, to) in SIZE_MISTAKES {
        let p = puzzles::find(id).expect("puzzle");
        let text = solution(p);
        assert!(text.contains(from), "{id}: {from}");
        let wrong = text.replacen(from, to, 1);
        let all = cases(p);
        assert!(
            run_case(&dev, p, &wrong, &all[0]).passed(),
            "{id}: passes at its own size"
        );
        let failed: Vec<String> = all[1..]
            .iter()
            .filter(|c| !run_case(&dev, p, &wrong, c).passed())
            .map(Case::label)
            .collect();
        assert!(!failed.is_empty(), "{id}: {to} passed at every size");
    }
}

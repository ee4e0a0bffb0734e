// Schedule probe: records the order in which the GPU starts and finishes workgroups, so the
// visualiser can replay how the visitor's own GPU scheduled a launch.
//
// Each workgroup's first invocation takes a ticket from one global atomic counter when the
// workgroup starts and another when it ends; the gap between them is kept busy with
// arithmetic so that workgroups overlap in time. From the interleaving of start and end
// tickets one can read how many workgroups were resident at once.
//
// Launch geometry: workgroup_size(64); dispatch (gx, gy, 1); workgroup (x, y) has linear id
//   y·gx + x.
// Buffer layout (u32):
//   @binding(0) counter: one atomic u32, zero at launch
//   @binding(1) events: 2 per workgroup: [2·id] = start ticket, [2·id + 1] = end ticket
//   @binding(2) dims: uniform { gx, gy, work, _pad }: `work` = busy iterations per invocation
// The tickets are read back as raw 32-bit words.

struct Dims {
    gx: u32,
    gy: u32,
    work: u32,
    _pad: u32,
}

@group(0) @binding(0) var<storage, read_write> counter: atomic<u32>;
@group(0) @binding(1) var<storage, read_write> events: array<u32>;
@group(0) @binding(2) var<uniform> dims: Dims;

var<workgroup> start_ticket: u32;
var<workgroup> busy: array<f32, 64>;

@compute @workgroup_size(64, 1, 1)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) li: u32,
) {
    if (li == 0u) {
        start_ticket = atomicAdd(&counter, 1u);
    }
    workgroupBarrier();
    // Busy work whose result is kept, so the compiler cannot drop it.
    var x = f32(li + 1u);
    for (var i = 0u; i < dims.work; i = i + 1u) {
        x = fma(x, 1.0000001, 0.5) * 0.999999;
    }
    busy[li] = x;
    workgroupBarrier();
    if (li == 0u) {
        let id = wg.y * dims.gx + wg.x;
        events[2u * id] = start_ticket;
        // busy[1] keeps the loop's result alive; it is never NaN, so this adds nothing.
        events[2u * id + 1u] = atomicAdd(&counter, 1u) + u32(busy[1] != busy[1]);
    }
}

//! The arena: where every tensor of a model lives, laid out once by [`super::Net::compile`].
//!
//! Two layouts. The *parameter* layout is shared by four buffers (parameters, gradients,
//! Adam's m and v): a weight's gradient and moments sit at its own offset in theirs, so the
//! optimiser steps the whole model in one dispatch over the flat range. The *activation*
//! layouts hold the forward's tensors and what layers save (LayerNorm's statistics, the
//! targets) in one buffer, and the backward's deltas (and the loss head's per-row losses) in
//! another. Every tensor starts on a 256-byte boundary (WebGPU's largest
//! `minStorageBufferOffsetAlignment`), so each can be bound as a buffer range; padding
//! between tensors is zero and stays zero (its gradient is zero, so Adam leaves it).
//!
//! The GPU session, the CPU twin and the bounds all index tensors through these [`Range`]s;
//! nothing else computes an offset.

use crate::plan::{Binding, ReadRange};

/// Alignment of every tensor, in bytes (`minStorageBufferOffsetAlignment` is at most this).
pub const ALIGN_BYTES: u64 = 256;
/// The same, in f32 words.
pub const ALIGN_WORDS: usize = (ALIGN_BYTES / 4) as usize;

/// A tensor's place in one layout, in f32 (or u32) words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub at: usize,
    pub len: usize,
}

impl Range {
    /// Its words, for the CPU twin's slices of the same layout.
    pub fn words(&self) -> std::ops::Range<usize> {
        self.at..self.at + self.len
    }

    /// Bound as `size` bytes of `buffer` from its offset (4 bytes for an empty tensor: a
    /// zero-sized binding is invalid).
    pub fn bind(&self, buffer: &'static str) -> Binding {
        Binding::Buffer {
            name: buffer,
            offset: (self.at * 4) as u64,
            size: Some((self.len.max(1) * 4) as u64),
        }
    }

    /// Read back from `buffer`.
    pub fn read(&self, buffer: &'static str) -> ReadRange {
        ReadRange {
            buffer,
            offset: (self.at * 4) as u64,
            bytes: (self.len * 4) as u64,
        }
    }

    /// The smallest range holding all of `ranges` (one binding over two tensors of a buffer,
    /// such as a linear layer's input and output); it starts at the first one's aligned start.
    pub fn span(ranges: &[Range]) -> Range {
        let at = ranges.iter().map(|r| r.at).min().unwrap_or(0);
        let end = ranges.iter().map(|r| r.at + r.len).max().unwrap_or(at);
        Range { at, len: end - at }
    }

    /// Where `inner` starts relative to this range (what a kernel's uniform offset says when
    /// this range is its binding).
    pub fn offset_of(&self, inner: Range) -> u32 {
        (inner.at - self.at) as u32
    }
}

/// Named tensors one after another, each on an [`ALIGN_WORDS`] boundary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    entries: Vec<(String, Range)>,
    words: usize,
}

impl Layout {
    /// Places a tensor of `len` words after the last one.
    pub fn push(&mut self, name: impl Into<String>, len: usize) -> Range {
        let at = self.words.next_multiple_of(ALIGN_WORDS);
        let r = Range { at, len };
        self.words = at + len;
        self.entries.push((name.into(), r));
        r
    }

    /// The tensor called `name`.
    pub fn get(&self, name: &str) -> Option<Range> {
        self.entries.iter().find(|(n, _)| n == name).map(|e| e.1)
    }

    pub fn entries(&self) -> &[(String, Range)] {
        &self.entries
    }

    /// Words of the buffer that holds the layout (at least one).
    pub fn words(&self) -> usize {
        self.words.max(1)
    }

    pub fn bytes(&self) -> u64 {
        (self.words() * 4) as u64
    }

    /// The whole layout as one range.
    pub fn all(&self) -> Range {
        Range {
            at: 0,
            len: self.words(),
        }
    }
}

/// Every layout of a model, and the scratch a layer's gradient needs between two kernels.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Arena {
    /// Parameters, and in the same places their gradients and Adam's m and v.
    pub params: Layout,
    /// The forward's tensors and what the backward reads of them.
    pub acts: Layout,
    /// Each tensor's loss gradient (a residual's output shares its branch's), the losses.
    pub deltas: Layout,
    /// Words of the largest per-slice partial gradient a linear layer writes.
    pub scratch_words: usize,
}

impl Arena {
    /// Why these buffers cannot be made on a device with `limits`, if they cannot: a buffer
    /// past `maxStorageBufferBindingSize` or `maxBufferSize`, or an offset alignment the
    /// layout does not honour.
    pub fn fits(&self, limits: &wgpu::Limits) -> Result<(), String> {
        let align = u64::from(limits.min_storage_buffer_offset_alignment);
        if align == 0 || !ALIGN_BYTES.is_multiple_of(align) {
            return Err(format!(
                "the adapter aligns storage offsets to {align} bytes; the arena to {ALIGN_BYTES}"
            ));
        }
        let largest = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size);
        for (what, bytes) in [
            ("parameters", self.params.bytes()),
            ("activations", self.acts.bytes()),
            ("deltas", self.deltas.bytes()),
            ("gradient scratch", (self.scratch_words.max(1) * 4) as u64),
        ] {
            if bytes > largest {
                return Err(format!(
                    "the {what} need a buffer of {bytes} bytes; this adapter binds at most {largest}"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensors_start_on_256_bytes_and_spans_cover_them() {
        let mut l = Layout::default();
        let a = l.push("a", 3);
        let b = l.push("b", 65);
        let c = l.push("c", 0);
        assert_eq!((a.at, b.at, c.at), (0, 64, 192));
        assert_eq!(l.words(), 192);
        let s = Range::span(&[b, a]);
        assert_eq!((s.at, s.len, s.offset_of(b)), (0, 129, 64));
        assert_eq!(
            c.bind("x"),
            Binding::Buffer {
                name: "x",
                offset: 768,
                size: Some(4)
            }
        );
        let arena = Arena {
            acts: l,
            ..Arena::default()
        };
        let mut limits = wgpu::Limits::downlevel_defaults();
        assert!(arena.fits(&limits).is_ok());
        limits.max_storage_buffer_binding_size = 512;
        assert!(arena.fits(&limits).is_err());
    }
}

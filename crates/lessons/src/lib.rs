//! The Learn area's catalogue and the pure maths behind its calculators.
//!
//! A lesson is described once in [`LESSONS`]; the app's router, index page and tests all read
//! this list. Calculators live in their own modules, with hand-computed tests, so the
//! components only render what these functions return.

pub mod accum;
pub mod allreduce;
pub mod claims;
pub mod cnn;
pub mod cost;
pub mod glossary;
pub mod gpus;
pub mod launch;
pub mod quiz;
pub mod transfer;
pub mod units;
pub mod vram;

/// One lesson: its URL id and the translation keys of its title and one-line summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LessonInfo {
    /// Used in the URL: `#/learn/<id>`.
    pub id: &'static str,
    pub title_key: &'static str,
    pub summary_key: &'static str,
}

macro_rules! lesson {
    ($id:literal) => {
        LessonInfo {
            id: $id,
            title_key: concat!("lesson.", $id, ".title"),
            summary_key: concat!("lesson.", $id, ".summary"),
        }
    };
}

/// The lessons, in reading order.
pub const LESSONS: [LessonInfo; 20] = [
    lesson!("latency-throughput"),
    lesson!("simt"),
    lesson!("occupancy"),
    lesson!("memory"),
    lesson!("roofline"),
    lesson!("precision"),
    lesson!("vram"),
    lesson!("utilisation"),
    lesson!("multi-gpu"),
    lesson!("stack"),
    lesson!("choosing"),
    lesson!("claims"),
    lesson!("conv"),
    lesson!("systolic"),
    lesson!("int8"),
    lesson!("fp64"),
    lesson!("thermal"),
    lesson!("grad-accum"),
    lesson!("cost"),
    lesson!("data-movement"),
];

/// The glossary's URL id (`#/learn/glossary`): a page of the Learn area, not a lesson.
pub const GLOSSARY_ID: &str = "glossary";

/// The lesson with this id and its position (0-based) in [`LESSONS`].
pub fn lesson(id: &str) -> Option<(usize, &'static LessonInfo)> {
    LESSONS.iter().enumerate().find(|(_, l)| l.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_url_safe() {
        for (i, l) in LESSONS.iter().enumerate() {
            assert!(l
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'));
            assert_eq!(lesson(l.id).map(|(j, _)| j), Some(i));
        }
        assert!(lesson("nope").is_none());
        assert!(lesson(GLOSSARY_ID).is_none());
    }
}

pub mod fp64;
pub mod occupancy;
pub mod precision;
pub mod roofline;
pub mod systolic;
pub mod thermal;

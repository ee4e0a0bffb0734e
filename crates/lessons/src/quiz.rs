//! The self-check at the end of every lesson: three multiple-choice questions per lesson, each
//! with three or four options, one of them right, and an explanation shown after any pick.
//!
//! This table holds only the shape of each question (how many options, which one is right);
//! the words live in the app's `locales/<lang>/quiz.txt` under keys built by [`Key`]:
//! `quiz.<lesson>.q<n>` (the question), `quiz.<lesson>.q<n>.<a|b|c|d>` (the options) and
//! `quiz.<lesson>.q<n>.why` (the explanation). Questions are keyed by lesson id, so a lesson
//! that is not in [`crate::LESSONS`] yet may already have its questions here.

/// One question: how many options it offers and which one is right (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Question {
    pub options: u8,
    pub correct: u8,
}

/// The three questions of one lesson.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LessonQuiz {
    pub lesson: &'static str,
    pub questions: [Question; 3],
}

/// The outcome of a pick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Right,
    Wrong,
}

impl Question {
    /// Whether `pick` (0-based) is the right option; `None` for an option the question lacks.
    pub fn check(&self, pick: u8) -> Option<Verdict> {
        if pick >= self.options {
            None
        } else if pick == self.correct {
            Some(Verdict::Right)
        } else {
            Some(Verdict::Wrong)
        }
    }
}

/// The letters naming the options in the keys, in order.
pub const OPTION_NAMES: [&str; 4] = ["a", "b", "c", "d"];

/// The translation keys of one question (`index` is 0-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    base: String,
}

impl Key {
    pub fn new(lesson: &str, index: usize) -> Self {
        Key {
            base: format!("quiz.{lesson}.q{}", index + 1),
        }
    }
    /// The question's text.
    pub fn question(&self) -> String {
        self.base.clone()
    }
    /// The text of option `option` (0-based, below 4).
    pub fn option(&self, option: u8) -> String {
        let name = OPTION_NAMES
            .get(usize::from(option))
            .copied()
            .unwrap_or("x");
        format!("{}.{name}", self.base)
    }
    /// The explanation shown after a pick.
    pub fn why(&self) -> String {
        format!("{}.why", self.base)
    }
}

const fn q(options: u8, correct: u8) -> Question {
    Question { options, correct }
}

const fn quiz(lesson: &'static str, questions: [Question; 3]) -> LessonQuiz {
    LessonQuiz { lesson, questions }
}

/// Every lesson's questions. The first twelve follow [`crate::LESSONS`]; the last seven belong
/// to the later lessons (systolic arrays … data movement), listed here before their pages.
pub const QUIZZES: &[LessonQuiz] = &[
    quiz("latency-throughput", [q(4, 1), q(3, 2), q(4, 3)]),
    quiz("simt", [q(3, 1), q(4, 2), q(4, 0)]),
    quiz("occupancy", [q(3, 0), q(4, 1), q(3, 2)]),
    quiz("memory", [q(4, 3), q(3, 0), q(4, 1)]),
    quiz("roofline", [q(4, 1), q(4, 3), q(3, 0)]),
    quiz("precision", [q(4, 2), q(3, 1), q(3, 0)]),
    quiz("vram", [q(4, 3), q(4, 2), q(3, 1)]),
    quiz("utilisation", [q(4, 1), q(3, 2), q(4, 0)]),
    quiz("multi-gpu", [q(4, 1), q(4, 2), q(4, 0)]),
    quiz("stack", [q(4, 1), q(4, 3), q(3, 2)]),
    quiz("choosing", [q(3, 1), q(4, 1), q(3, 0)]),
    quiz("claims", [q(4, 2), q(3, 1), q(4, 3)]),
    quiz("conv", [q(4, 1), q(3, 2), q(4, 3)]),
    quiz("systolic", [q(4, 0), q(4, 2), q(3, 1)]),
    quiz("int8", [q(4, 0), q(3, 2), q(3, 1)]),
    quiz("fp64", [q(4, 0), q(4, 1), q(4, 2)]),
    quiz("thermal", [q(4, 1), q(3, 0), q(3, 1)]),
    quiz("grad-accum", [q(4, 3), q(4, 0), q(3, 1)]),
    quiz("cost", [q(4, 1), q(3, 0), q(3, 2)]),
    quiz("data-movement", [q(4, 2), q(3, 1), q(3, 0)]),
];

/// The questions of the lesson with this id.
pub fn for_lesson(id: &str) -> Option<&'static LessonQuiz> {
    QUIZZES.iter().find(|q| q.lesson == id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// Every key a language's quiz.txt defines, with its text.
    fn locale(lang: &str) -> BTreeMap<String, String> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../app/locales")
            .join(lang)
            .join("quiz.txt");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .filter_map(|l| l.split_once(" = "))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect()
    }

    /// Every key the table asks for.
    fn keys() -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for quiz in QUIZZES {
            for (i, question) in quiz.questions.iter().enumerate() {
                let key = Key::new(quiz.lesson, i);
                out.insert(key.question());
                out.insert(key.why());
                for o in 0..question.options {
                    out.insert(key.option(o));
                }
            }
        }
        out
    }

    #[test]
    fn every_lesson_has_three_questions() {
        for lesson in crate::LESSONS {
            let quiz = for_lesson(lesson.id)
                .unwrap_or_else(|| panic!("lesson {} has no questions", lesson.id));
            assert_eq!(quiz.questions.len(), 3, "{}", lesson.id);
        }
    }

    /// The later lessons (systolic arrays … data movement) were written in parallel with this table; their questions are
    /// here already, so each page gets its self-check as soon as it joins `LESSONS`.
    #[test]
    fn the_seven_new_lessons_have_questions() {
        let new = [
            "systolic",
            "int8",
            "fp64",
            "thermal",
            "grad-accum",
            "cost",
            "data-movement",
        ];
        for id in new {
            let quiz = for_lesson(id).unwrap_or_else(|| panic!("{id} has no questions"));
            assert_eq!(quiz.questions.len(), 3, "{id}");
        }
    }

    #[test]
    fn lessons_are_listed_once() {
        let ids: BTreeSet<_> = QUIZZES.iter().map(|q| q.lesson).collect();
        assert_eq!(ids.len(), QUIZZES.len());
    }

    #[test]
    fn options_are_three_or_four_and_one_is_right() {
        for quiz in QUIZZES {
            for (i, question) in quiz.questions.iter().enumerate() {
                assert!(
                    (3..=4).contains(&question.options),
                    "{} q{}",
                    quiz.lesson,
                    i + 1
                );
                let right = (0..question.options)
                    .filter(|&o| question.check(o) == Some(Verdict::Right))
                    .count();
                assert_eq!(right, 1, "{} q{}", quiz.lesson, i + 1);
                assert_eq!(question.check(question.options), None);
            }
        }
    }

    /// A learner who always picks the same letter must not score well: the right answers are
    /// spread over the positions.
    #[test]
    fn right_answers_are_spread_over_positions() {
        let mut counts = [0usize; 4];
        for quiz in QUIZZES {
            for question in quiz.questions {
                counts[usize::from(question.correct)] += 1;
            }
        }
        let total: usize = counts.iter().sum();
        for (position, n) in counts.iter().enumerate() {
            assert!(*n > 0, "no right answer at position {position}");
            assert!(
                *n * 2 < total,
                "position {position} is right in {n} of {total}"
            );
        }
    }

    #[test]
    fn every_key_exists_in_both_languages_and_no_other() {
        let wanted = keys();
        for lang in ["en", "zh"] {
            let table = locale(lang);
            let missing: Vec<_> = wanted.iter().filter(|k| !table.contains_key(*k)).collect();
            assert!(missing.is_empty(), "{lang}/quiz.txt lacks {missing:?}");
            // Besides the table's keys, quiz.txt holds only the widget's own words.
            let extra: Vec<_> = table
                .keys()
                .filter(|k| !wanted.contains(*k) && !k.starts_with("quiz.ui."))
                .collect();
            assert!(
                extra.is_empty(),
                "{lang}/quiz.txt has unused keys {extra:?}"
            );
            for k in &wanted {
                assert!(!table[k].is_empty(), "{lang}: {k} is empty");
            }
        }
    }

    #[test]
    fn keys_are_named_by_lesson_question_and_option() {
        let k = Key::new("simt", 0);
        assert_eq!(k.question(), "quiz.simt.q1");
        assert_eq!(k.option(0), "quiz.simt.q1.a");
        assert_eq!(k.option(3), "quiz.simt.q1.d");
        assert_eq!(k.why(), "quiz.simt.q1.why");
        assert_eq!(Key::new("grad-accum", 2).question(), "quiz.grad-accum.q3");
    }

    #[test]
    fn a_pick_is_checked() {
        let question = q(4, 2);
        assert_eq!(question.check(2), Some(Verdict::Right));
        assert_eq!(question.check(0), Some(Verdict::Wrong));
        assert_eq!(question.check(3), Some(Verdict::Wrong));
        assert_eq!(question.check(4), None);
    }
}

//! The self-check at the end of a lesson: the lesson's three questions from `lessons::quiz`,
//! each a group of option buttons (focusable, picked with Enter or Space). A pick marks the
//! option right or wrong, names the right answer and shows the explanation; the learner may pick
//! again at any time. The picks live in this component's state, so a language switch (a new
//! context, same component) keeps them; the lesson page keys the component by lesson id, so
//! another lesson starts fresh. Nothing is stored; inside an embed each pick is posted to the
//! host page as an `outcome` (`page_models::outcome`).

use lessons::quiz::{self, Key, Verdict};
use yew::prelude::*;

use crate::components::Ctx;

#[derive(Properties, PartialEq)]
pub struct QuizProps {
    pub lesson: AttrValue,
}

#[function_component]
pub fn Quiz(props: &QuizProps) -> Html {
    let picks = use_state(|| [None::<u8>; 3]);
    // Inside an embed, `getState` answers with the picks as they stand.
    use_effect_with((*picks, props.lesson.clone()), |(picks, lesson)| {
        page_models::embed::note_work(answers_work(lesson, picks));
    });
    let Some(ctx) = use_context::<Ctx>() else {
        return Html::default();
    };
    let Some(lesson) = quiz::for_lesson(&props.lesson) else {
        return Html::default();
    };
    let heading_id = format!("quiz-{}", lesson.lesson);
    let questions = lesson.questions.iter().enumerate().map(|(i, question)| {
        let key = Key::new(lesson.lesson, i);
        let pick = picks.get(i).copied().flatten();
        let verdict = pick.and_then(|p| question.check(p));
        let n = (i + 1).to_string();
        let prompt_id = format!("quiz-{}-q{n}", lesson.lesson);
        let state = match verdict {
            None => "open",
            Some(Verdict::Right) => "right",
            Some(Verdict::Wrong) => "wrong",
        };
        let options = (0..question.options).map(|o| {
            let picked = pick == Some(o);
            let class = classes!(
                "quiz-option",
                picked.then_some("picked"),
                (verdict.is_some() && o == question.correct).then_some("is-right"),
                (picked && verdict == Some(Verdict::Wrong)).then_some("is-wrong"),
            );
            let onclick = {
                let picks = picks.clone();
                let (lesson_id, correct) = (lesson.lesson, question.correct);
                Callback::from(move |_: MouseEvent| {
                    // Inside an embed the host page hears of the answer (an `outcome`).
                    page_models::outcome::record(page_models::outcome::of_answer(
                        lesson_id,
                        i,
                        o,
                        o == correct,
                    ));
                    let mut next = *picks;
                    if let Some(slot) = next.get_mut(i) {
                        *slot = Some(o);
                    }
                    picks.set(next);
                })
            };
            html! {
                <button type="button" {class} data-option={o.to_string()}
                    aria-pressed={picked.to_string()} {onclick}>
                    { ctx.t(&key.option(o)) }
                </button>
            }
        });
        let feedback = verdict.map(|v| {
            let (class, text) = match v {
                Verdict::Right => ("right", ctx.t("quiz.ui.right").to_string()),
                Verdict::Wrong => (
                    "wrong",
                    ctx.tf(
                        "quiz.ui.wrong",
                        &[("answer", ctx.t(&key.option(question.correct)))],
                    ),
                ),
            };
            html! {
                <>
                    <p class={classes!("quiz-verdict", class)} data-verdict={class}><strong>{ text }</strong></p>
                    <p class="quiz-why">{ ctx.t(&key.why()) }</p>
                </>
            }
        });
        html! {
            <li class="quiz-question" data-question={n.clone()} data-state={state}>
                <p class="quiz-prompt" id={prompt_id.clone()}>{ ctx.t(&key.question()) }</p>
                <div class="quiz-options" role="group" aria-labelledby={prompt_id}>
                    { for options }
                </div>
                <div class="quiz-feedback" aria-live="polite">{ feedback.unwrap_or_default() }</div>
            </li>
        }
    });
    html! {
        <section class="quiz" aria-labelledby={heading_id.clone()} data-quiz={lesson.lesson}>
            <h2 id={heading_id}>{ ctx.t("quiz.ui.heading") }</h2>
            <p class="quiz-intro">{ ctx.t("quiz.ui.intro") }</p>
            <ol class="quiz-questions">{ for questions }</ol>
        </section>
    }
}

/// The learner's answers as `getState`'s `work` (docs/embedding.md): the lesson, and per
/// question answered its number (from 1), the option picked last (from 0) and whether it is
/// right.
fn answers_work(lesson: &str, picks: &[Option<u8>; 3]) -> page_models::embed::Report {
    use page_models::embed::Field;
    let questions = quiz::for_lesson(lesson).map_or(&[][..], |l| &l.questions[..]);
    let answers = picks
        .iter()
        .zip(questions)
        .enumerate()
        .filter_map(|(i, (pick, q))| {
            let o = (*pick)?;
            Some(vec![
                ("question", Field::Num((i + 1) as f64)),
                ("picked", Field::Num(f64::from(o))),
                ("right", Field::Bool(q.check(o) == Some(Verdict::Right))),
            ])
        })
        .collect();
    vec![
        ("lesson", Field::Str(lesson.into())),
        ("answers", Field::List(answers)),
    ]
}

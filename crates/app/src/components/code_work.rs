//! The learner's code as their work, for an embed's `getState`. Its own module so the pages
//! that write code (editor, puzzles) need nothing of the embed host, which shows them.

use yew::prelude::*;

/// Notes a code-writing widget's code (a puzzle's, the kernel editor's) as its learner's work
/// whenever it changes, so an embed's `getState` answers with it, run or not.
#[hook]
pub fn use_code_work(kind: &'static str, what: &str, code: &str) {
    use_effect_with((code.to_string(), what.to_string()), move |(code, what)| {
        page_models::embed::note_work(page_models::embed::code_work((kind, what), code));
    });
}

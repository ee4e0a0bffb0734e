//! Leaving a training page loses nothing (`#/train`, `#/cnn`, `#/gpt`): the page's run is
//! kept when the learner leaves, held as for a hidden tab, and taken back when the page is
//! shown again ([`use_kept`]). One slot per kind of run: a page keeps only the run worth
//! keeping, and leaving without one forgets any it kept before.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use yew::prelude::*;

thread_local! {
    static KEPT: RefCell<HashMap<TypeId, Box<dyn Any>>> = RefCell::new(HashMap::new());
}

/// Takes the run of kind `T` kept when its page was left (a second visit does not find it).
fn take<T: 'static>() -> Option<T> {
    let kept = KEPT.with(|k| k.borrow_mut().remove(&TypeId::of::<T>()))?;
    kept.downcast::<T>().ok().map(|b| *b)
}

/// Keeps `run` for the page's return, or (None) forgets the one kept before.
fn put<T: 'static>(run: Option<T>) {
    KEPT.with(|k| {
        let mut k = k.borrow_mut();
        match run {
            Some(r) => k.insert(TypeId::of::<T>(), Box::new(r)),
            None => k.remove(&TypeId::of::<T>()),
        };
    });
}

/// The run the page kept when the learner last left it (taken once per visit), and the
/// page's cells, made once per visit from it by `cells`. When the page goes, `leave` says
/// what of its cells to keep (None: nothing worth keeping).
#[hook]
pub fn use_kept<T, C, F, L>(cells: F, leave: L) -> (Rc<Option<T>>, C)
where
    T: 'static,
    C: Clone + 'static,
    F: FnOnce(Option<&T>) -> C,
    L: FnOnce(&C) -> Option<T> + 'static,
{
    let kept = use_memo((), |_| take::<T>());
    let made = (*use_memo((), {
        let kept = kept.clone();
        move |_| cells(kept.as_ref().as_ref())
    }))
    .clone();
    {
        let made = made.clone();
        use_effect_with((), move |_| move || put(leave(&made)));
    }
    (kept, made)
}

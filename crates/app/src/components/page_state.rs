//! A page model from `page-models` in a `use_reducer`: the model is plain Rust with a pure
//! `reduce`; this wrapper hands yew a new state only when the model changed, so an action that
//! changes nothing re-renders nothing.

use std::ops::Deref;
use std::rc::Rc;

use yew::Reducible;

/// What a page model offers the wrapper: the next model after an action.
pub trait PageModel: PartialEq + Sized {
    type Action;
    fn next(&self, action: Self::Action) -> Self;
}

/// The page's state: its model, compared after each action.
#[derive(PartialEq)]
pub struct PageState<M>(pub M);

impl<M> Deref for PageState<M> {
    type Target = M;
    fn deref(&self) -> &M {
        &self.0
    }
}

impl<M: PageModel> Reducible for PageState<M> {
    type Action = M::Action;

    fn reduce(self: Rc<Self>, action: M::Action) -> Rc<Self> {
        let next = self.0.next(action);
        if next == self.0 {
            self
        } else {
            Rc::new(PageState(next))
        }
    }
}

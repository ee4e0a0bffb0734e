//! The learner's saved entries (puzzle drafts, solved puzzles, the editor's code): the
//! browser's local storage, or, where the browser keeps none for this page, memory that lasts
//! as long as the page. An embed on a course page of another site is refused local storage
//! outright by browsers that block third-party storage (Chrome's incognito windows and its
//! "block third-party cookies" setting, headless Chromium's default contexts): without this
//! its puzzle was never marked solved and its "Save progress to a file" saved nothing
//! (docs/embedding.md, "Where progress lives").

use std::cell::RefCell;
use std::collections::BTreeMap;

thread_local! {
    static MEMORY: RefCell<BTreeMap<String, String>> = const { RefCell::new(BTreeMap::new()) };
}

fn local() -> Option<web_sys::Storage> {
    gloo::utils::window().local_storage().ok().flatten()
}

/// Whether entries outlast the page (false: the browser refuses this page local storage).
pub fn persistent() -> bool {
    local().is_some()
}

pub fn get(key: &str) -> Option<String> {
    match local() {
        Some(s) => s.get_item(key).ok().flatten(),
        None => MEMORY.with(|m| m.borrow().get(key).cloned()),
    }
}

/// Writes (or with `None` removes) an entry; false when the browser refused the write (full).
pub fn set(key: &str, value: Option<&str>) -> bool {
    match local() {
        Some(s) => match value {
            Some(v) => s.set_item(key, v).is_ok(),
            None => s.remove_item(key).is_ok(),
        },
        None => {
            MEMORY.with(|m| {
                let mut m = m.borrow_mut();
                match value {
                    Some(v) => m.insert(key.to_string(), v.to_string()),
                    None => m.remove(key),
                }
            });
            true
        }
    }
}

/// Every entry.
pub fn entries() -> Vec<(String, String)> {
    let Some(s) = local() else {
        return MEMORY.with(|m| {
            m.borrow()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        });
    };
    let n = s.length().unwrap_or(0);
    (0..n)
        .filter_map(|i| {
            let k = s.key(i).ok().flatten()?;
            let v = s.get_item(&k).ok().flatten()?;
            Some((k, v))
        })
        .collect()
}

/// Adds a progress file's checked entries to what is saved (`learner_file::merge`: nothing
/// is overwritten); what it added, or `Err` with how many writes the browser refused (full).
pub fn import(items: &[(String, String)]) -> Result<page_models::learner_file::Merge, usize> {
    let m = page_models::learner_file::merge(&entries(), items);
    let refused = m.writes.iter().filter(|(k, v)| !set(k, Some(v))).count();
    if refused > 0 {
        return Err(refused);
    }
    Ok(m)
}

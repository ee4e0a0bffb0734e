//! The app shell: router, language, WebGPU probe, header, navigation and footer.

use yew::prelude::*;
use yew_router::prelude::*;

use super::{pages, replace_query, Ctx};
use crate::i18n::Lang;
use crate::probe::{self, WebGpuStatus};
use crate::route::Route;
use page_models::instructor;
use page_models::query::Query;

const LANG_STORAGE_KEY: &str = "gpu-playground.lang";

#[function_component]
pub fn App() -> Html {
    html! {
        <HashRouter>
            <Root />
        </HashRouter>
    }
}

fn storage() -> Option<web_sys::Storage> {
    gloo::utils::window().local_storage().ok().flatten()
}

/// Language from, in order: the hash query (`#/…?lang=zh`), the page query (`?lang=zh#/…`,
/// for embeds), what the visitor chose last time, the browser's language.
fn resolve_lang(query: &Query) -> Lang {
    let window = gloo::utils::window();
    query
        .get("lang")
        .and_then(Lang::from_code)
        .or_else(|| {
            let search = window.location().search().ok()?;
            Query::parse(&search).get("lang").and_then(Lang::from_code)
        })
        .or_else(|| {
            storage()?
                .get_item(LANG_STORAGE_KEY)
                .ok()
                .flatten()
                .and_then(|s| Lang::from_code(&s))
        })
        .or_else(|| {
            window
                .navigator()
                .language()
                .and_then(|l| Lang::from_code(&l))
        })
        .unwrap_or(Lang::En)
}

/// The language the page starts in and the text parts its route shows, before the router
/// runs (the hash read directly): the text `boot` fetches first.
pub fn initial_text() -> (Lang, &'static [crate::i18n::Part]) {
    let hash = gloo::utils::window().location().hash().unwrap_or_default();
    let hash = hash.trim_start_matches('#');
    let (path, query) = hash.split_once('?').unwrap_or((hash, ""));
    let parts = Route::recognize(path).map_or(&[][..], |r| r.text_parts());
    (resolve_lang(&Query::parse(query)), parts)
}

thread_local! {
    /// The instructor switch as this tab last set it (by a link or the switch), so it holds
    /// after `instructor=` left the address even where storage is refused.
    static INSTRUCTOR_CHOICE: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

#[function_component]
fn Root() -> Html {
    let location = use_location();
    let navigator = use_navigator();
    let route = use_route::<Route>().unwrap_or(Route::NotFound);
    let query = Query::parse(location.as_ref().map(|l| l.query_str()).unwrap_or(""));
    // `instructor=` is read here and nowhere else: every link built from the query is
    // without it (an effect below also takes it out of the address bar).
    let (query, instructor_asked) = instructor::take(query);
    if let Some(on) = instructor_asked.as_deref().and_then(instructor::parse) {
        if !route.is_embedded() {
            INSTRUCTOR_CHOICE.with(|c| c.set(Some(on)));
        }
    }
    // The language asked for, and the one shown: a switch shows the old language until the
    // new one's text has arrived (fetched once, then cached by the service worker). A page
    // whose text parts have not arrived yet shows "Loading…" in place of its body.
    let wanted = resolve_lang(&query);
    let parts = route.text_parts();
    let shown = use_mut_ref(|| wanted);
    if crate::i18n::is_ready(wanted, parts) {
        *shown.borrow_mut() = wanted;
    }
    let lang = *shown.borrow();
    let rerender = use_force_update();
    {
        let rerender = rerender.clone();
        use_effect_with((), move |_| {
            crate::i18n::on_late_text(move || rerender.force_update());
        });
    }
    // A part that failed to arrive: the page says so and offers to try again (which bumps
    // `attempt`, re-running the fetch), rather than showing "Loading…" for good.
    let text_failed = use_state(|| false);
    let attempt = use_state(|| 0u32);
    {
        let (rerender, text_failed) = (rerender.clone(), text_failed.clone());
        use_effect_with((wanted, parts, *attempt), move |&(wanted, parts, _)| {
            if !crate::i18n::is_ready(wanted, parts) {
                wasm_bindgen_futures::spawn_local(async move {
                    let result = crate::i18n::load(wanted, parts).await;
                    if let Err(e) = &result {
                        web_sys::console::warn_1(&e.clone().into());
                    }
                    text_failed.set(result.is_err());
                    rerender.force_update();
                });
            }
        });
    }
    let webgpu = use_state(|| WebGpuStatus::Checking);

    {
        let webgpu = webgpu.clone();
        use_effect_with((), move |_| {
            wasm_bindgen_futures::spawn_local(async move {
                webgpu.set(probe::probe().await);
            });
        });
    }
    {
        // Keep the language in the URL and in storage, and tell the document.
        let (route, query, navigator) = (route.clone(), query.clone(), navigator.clone());
        // The URL and storage follow the language asked for; the document's language and
        // title the one shown.
        use_effect_with(
            (
                lang,
                wanted,
                route.clone(),
                query.get("lang").map(str::to_owned),
            ),
            move |_| {
                // An embedded widget follows its host's `lang` without changing the site's
                // saved setting: a course page in Chinese must not switch the visitor's site.
                if !route.is_embedded() {
                    if let Some(s) = storage() {
                        let _ = s.set_item(LANG_STORAGE_KEY, wanted.code());
                    }
                }
                let doc = gloo::utils::document();
                if let Some(el) = doc.document_element() {
                    let _ = el.set_attribute("lang", if lang == Lang::Zh { "zh-CN" } else { "en" });
                }
                doc.set_title(crate::i18n::t(lang, "app.title"));
                if query.get("lang") != Some(wanted.code()) {
                    if let Some(nav) = navigator {
                        replace_query(&nav, &route, &query.clone().with("lang", wanted.code()));
                    }
                }
            },
        );
    }

    // The ready signal the browser tests wait on: `<route> <lang> <n>` on `main` once the
    // route's text in the language asked for has arrived and its body is rendered, `n`
    // counting the locations seen, so a test tells this navigation's page from the last one's.
    let location_key = location
        .as_ref()
        .map(|l| format!("{}?{}", l.path(), l.query_str()))
        .unwrap_or_default();
    let visits = use_mut_ref(|| (String::new(), crate::visits::before_reload()));
    if visits.borrow().0 != location_key {
        let mut v = visits.borrow_mut();
        v.0 = location_key;
        v.1 += 1;
    }
    crate::visits::set(visits.borrow().1);
    // A page this build leaves out is never ready here: it reloads into the whole app.
    let ready = (lang == wanted && crate::i18n::is_ready(lang, parts) && route.in_this_build())
        .then(|| format!("{} {} {}", route.to_path(), lang.code(), visits.borrow().1));

    // This tab's last choice, then the saved one (storage may be refused: private mode).
    let remembered = INSTRUCTOR_CHOICE
        .with(|c| c.get())
        .map(|on| instructor::code(on).to_string())
        .or_else(|| storage().and_then(|s| s.get_item(instructor::STORAGE_KEY).ok().flatten()));
    let mode = instructor::resolve(
        route.is_embedded(),
        instructor_asked.as_deref(),
        remembered.as_deref(),
    );
    {
        let (route, query, navigator) = (route.clone(), query.clone(), navigator.clone());
        let asked = instructor_asked.is_some();
        use_effect_with((mode.save, asked), move |&(save, asked)| {
            // A link's `instructor=` is kept as the visitor's choice, then taken out of the
            // address bar so a copied address does not switch a student's tools on.
            if let (Some(on), Some(s)) = (save, storage()) {
                let _ = s.set_item(instructor::STORAGE_KEY, instructor::code(on));
            }
            if let (true, Some(nav)) = (asked, navigator) {
                replace_query(&nav, &route, &query);
            }
        });
    }
    let ctx = Ctx {
        lang,
        webgpu: (*webgpu).clone(),
        route: route.clone(),
        query,
        instructor: mode.on,
    };
    let body = if crate::i18n::is_ready(lang, parts) {
        pages::page(&ctx)
    } else if *text_failed {
        let retry = {
            let (attempt, text_failed) = (attempt.clone(), text_failed.clone());
            Callback::from(move |_| {
                text_failed.set(false);
                attempt.set(*attempt + 1);
            })
        };
        html! {
            <div class="boot error" role="alert" data-text="failed">
                <p>{ ctx.t("app.text_failed") }</p>
                <button class="button" onclick={retry}>{ ctx.t("app.text_retry") }</button>
            </div>
        }
    } else {
        html! { <p class="boot" aria-busy="true" data-text="loading">{ ctx.t("app.loading") }</p> }
    };
    html! {
        <ContextProvider<Ctx> context={ctx.clone()}>
            if route.is_embedded() {
                <main id="main" class="embedded" data-route-ready={ready}>{ body }</main>
            } else {
                <a class="skip" href="#main" onclick={skip_to_main()}>{ ctx.t("app.skip") }</a>
                <Header />
                <super::update_notice::UpdateNotice />
                <main id="main" tabindex="-1" data-route-ready={ready}>{ body }</main>
                <footer class="footer">
                    <p>{ ctx.t("footer.text") }</p>
                    <InstructorSwitch />
                </footer>
            }
        </ContextProvider<Ctx>>
    }
}

/// The skip link must not change the hash (that is the router's); it moves focus instead.
fn skip_to_main() -> Callback<MouseEvent> {
    Callback::from(|e: MouseEvent| {
        e.prevent_default();
        if let Some(el) = gloo::utils::document().get_element_by_id("main") {
            if let Ok(el) = wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(el) {
                let _ = el.focus();
            }
        }
    })
}

#[function_component]
fn Header() -> Html {
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let navigator = use_navigator();
    use_effect_with((ctx.route.clone(), ctx.lang), |_| show_current_section());
    let links = Route::NAV.iter().map(|(route, key)| {
        let href = format!("#{}?lang={}", route.to_path(), ctx.lang.code());
        let current =
            *route == ctx.route || (matches!(route, Route::EmbedIndex) && ctx.route.is_embedded());
        html! {
            <li>
                <a href={href} aria-current={current.then_some("page")}>{ ctx.t(key) }</a>
            </li>
        }
    });
    let switches = Lang::ALL.iter().map(|&l| {
        let (nav, route, query) = (navigator.clone(), ctx.route.clone(), ctx.query.clone());
        let onclick = Callback::from(move |_| {
            if let Some(nav) = &nav {
                replace_query(nav, &route, &query.clone().with("lang", l.code()));
            }
        });
        let key = if l == Lang::En { "lang.en" } else { "lang.zh" };
        html! {
            <button type="button" class="lang" data-lang={l.code()}
                aria-pressed={(l == ctx.lang).to_string()} {onclick}>
                { ctx.t(key) }
            </button>
        }
    });
    html! {
        <header class="header">
            <div class="brand">
                <a class="title" href={format!("#/?lang={}", ctx.lang.code())}>{ ctx.t("app.title") }</a>
                <span class="tagline">{ ctx.t("app.tagline") }</span>
            </div>
            <nav aria-label={ctx.t("nav.main")}>
                <ul class="nav">{ for links }</ul>
            </nav>
            <div class="langs" role="group" aria-label={ctx.t("lang.label")}>{ for switches }</div>
        </header>
    }
}

/// Brings the current section's link into the sections' row where that row scrolls sideways
/// (a phone), centred where it can be: a page reached by a link or Back would otherwise leave
/// its own tab off-screen.
fn show_current_section() {
    let doc = gloo::utils::document();
    let (Ok(Some(list)), Ok(Some(link))) = (
        doc.query_selector("header .nav"),
        doc.query_selector("header .nav a[aria-current='page']"),
    ) else {
        return;
    };
    let (row, tab) = (
        list.get_bounding_client_rect(),
        link.get_bounding_client_rect(),
    );
    if tab.left() < row.left() || tab.right() > row.right() {
        let centred = f64::from(list.scroll_left()) + (tab.left() - row.left())
            - (row.width() - tab.width()) / 2.0;
        list.set_scroll_left(centred.max(0.0) as i32);
    }
}

/// The one switch for instructor mode: it writes `instructor=` into the URL, as the language
/// switch writes `lang=`, and the shell saves it.
#[function_component]
fn InstructorSwitch() -> Html {
    let navigator = use_navigator();
    let Some(ctx) = use_context::<Ctx>() else {
        return html! {};
    };
    let onchange = {
        let (route, query) = (ctx.route.clone(), ctx.query.clone());
        Callback::from(move |e: Event| {
            let input: web_sys::HtmlInputElement = e.target_unchecked_into();
            if let Some(nav) = &navigator {
                let q = query
                    .clone()
                    .with(instructor::PARAM, instructor::code(input.checked()));
                replace_query(nav, &route, &q);
            }
        })
    };
    html! {
        <p class="instructor-switch">
            <label>
                <input type="checkbox" id="instructor-mode" checked={ctx.instructor} {onchange} />
                { ctx.t("footer.instructor") }
            </label>
            <span class="instructor-note">{ ctx.t("footer.instructor_note") }</span>
        </p>
    }
}

"""The notebook widget's Python side: names and settings checked like the loader does, the
traits the front end (widget.mjs) reads, and the package's data equal to the repository's."""

from pathlib import Path

import pytest

import gpu_playground
from gpu_playground import GpuPlayground

SITE = "https://you.github.io/gpu-playground/"
REPO = Path(__file__).resolve().parents[3]


def test_the_race_carries_its_settings():
    w = GpuPlayground("race", n=256, lang="zh", site=SITE)
    assert w.widget == "race"
    assert w.params == {"n": "256"}
    assert w.lang == "zh"
    assert w.site == SITE
    assert w.results == {} and w.runs == 0
    # The traits the front end reads are synced to it.
    state = w.get_state()
    for name in ("widget", "params", "lang", "site", "results", "runs"):
        assert name in state
    assert "export default" in Path(gpu_playground.__file__).with_name("widget.mjs").read_text()


def test_theme_hide_and_a_folder_address():
    w = GpuPlayground("matmul", m=64, n=48, k=32, theme="dark", hide=["title", "notes"], site="http://localhost:8000")
    assert w.params == {"m": "64", "n": "48", "k": "32", "theme": "dark", "hide": "title,notes"}
    assert w.site == "http://localhost:8000/"
    assert GpuPlayground("race", hide="heading, tabs", site=SITE).params == {"hide": "heading,tabs"}


def test_site_from_the_environment(monkeypatch):
    monkeypatch.setenv("GPU_PLAYGROUND_SITE", "https://example.org/gp/")
    assert GpuPlayground("gpu").site == "https://example.org/gp/"
    monkeypatch.delenv("GPU_PLAYGROUND_SITE")
    with pytest.raises(ValueError, match="needs the playground's address"):
        GpuPlayground("gpu")


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        (("nope",), {}, r"no widget named 'nope'; the widgets: matmul, .*race"),
        (("race",), {"bogus": 1}, r'the widget "race" has no setting \'bogus\'; it accepts: n, cpu'),
        (("race",), {"n": "abc"}, r"n='abc' must be a whole number"),
        (("race",), {"n": -5}, r"n=-5 must be a whole number"),
        (("race",), {"n": True}, r"give a number or a string"),
        (("race",), {"lang": "fr"}, r"lang='fr': GPU Playground speaks en, zh"),
        (("race",), {"theme": "pink"}, r"theme='pink': use one of light, dark, auto"),
        (("matmul",), {"hide": "title,tabs"}, r'the widget "matmul" cannot hide tabs; it can hide: title, notes'),
        (("race",), {"cpu": "x" * 300}, r"cpu is longer than 256 characters"),
        (("race",), {"site": "javascript:alert(1)"}, r"not an http\(s\) address"),
    ],
)
def test_mistakes_are_value_errors_that_say_what_is_accepted(args, kwargs, message):
    kwargs.setdefault("site", SITE)
    with pytest.raises(ValueError, match=message):
        GpuPlayground(*args, **kwargs)


def test_the_package_registry_is_the_sites():
    # The package ships a copy of page-models' registry; a widget added there must be copied.
    repo = REPO / "crates/page-models/embed-widgets.json"
    if not repo.exists():
        pytest.skip("not in the repository")
    shipped = Path(gpu_playground.__file__).with_name("widgets.json")
    assert shipped.read_text() == repo.read_text(), "copy crates/page-models/embed-widgets.json to python/gpu_playground/gpu_playground/widgets.json"


# ---------------------------------------------------------------- two-way

def sent_to_front_end(w):
    """What the widget sends its front end (widget.mjs): trait updates and custom messages, as
    ipywidgets hands them to the comm."""
    sent = []
    w._send = lambda msg, buffers=None: sent.append(msg)
    return sent


def from_front_end(w, **state):
    """A trait update from widget.mjs (``model.set`` + ``save_changes``), as the comm delivers it."""
    w._handle_msg({"content": {"data": {"method": "update", "state": state}}, "buffers": []})


def test_set_params_changes_some_settings_and_the_front_end_gets_them():
    w = GpuPlayground("race", n=64, theme="dark", site=SITE)
    sent = sent_to_front_end(w)
    w.set_params(n=128, cpu="naive")
    assert w.params == {"n": "128", "cpu": "naive", "theme": "dark"}
    assert sent[-1] == {"method": "update", "state": {"params": w.params}, "buffer_paths": []}
    w.set_params(cpu=None, hide="tabs")
    assert w.params == {"n": "128", "theme": "dark", "hide": "tabs"}
    w.reset()
    assert w.params == {"theme": "dark", "hide": "tabs"}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"n": "abc"}, r"n='abc' must be a whole number"),
        ({"bogus": 1}, r'the widget "race" has no setting \'bogus\'; it accepts: n, cpu'),
        ({"theme": "pink"}, r"theme='pink': use one of light, dark, auto"),
        ({"hide": "title"}, r'the widget "race" cannot hide title; it can hide: '),
        ({"n": True}, r"give a number or a string"),
    ],
)
def test_set_params_and_params_check_as_the_constructor_does(change, message):
    w = GpuPlayground("race", n=64, site=SITE)
    sent = sent_to_front_end(w)
    with pytest.raises(ValueError, match=message):
        w.set_params(**change)
    with pytest.raises(ValueError, match=message):
        w.params = change
    assert w.params == {"n": "64"} and sent == [], "a refused change is not sent"


def test_lang_is_checked_when_it_changes_and_the_widget_cannot():
    w = GpuPlayground("race", site=SITE)
    sent = sent_to_front_end(w)
    w.lang = "zh"
    assert sent[-1]["state"] == {"lang": "zh"}
    with pytest.raises(ValueError, match=r"lang='fr': GPU Playground speaks en, zh"):
        w.lang = "fr"
    with pytest.raises(ValueError, match="cannot change"):
        w.widget = "matmul"
    assert (w.lang, w.widget) == ("zh", "race")


def test_run_and_sync_are_messages_to_the_front_end():
    w = GpuPlayground("race", site=SITE)
    sent = sent_to_front_end(w)
    w.run()
    w.run()
    w.sync()
    assert [m["content"] for m in sent] == [
        {"type": "run", "id": "py-1"},
        {"type": "run", "id": "py-2"},
        {"type": "getState"},
    ]
    assert all(m["method"] == "custom" for m in sent)


def test_reports_from_the_front_end_are_values_history_and_callbacks():
    w = GpuPlayground("race", n=64, site=SITE)
    sent_to_front_end(w)
    got, statements, removed = [], [], []
    w.on_results(got.append)
    w.on_outcome(statements.append)
    w.on_results(removed.append)
    w.on_results(removed.append, remove=True)
    first = {"n": 64, "verified": True, "winner": "gpu"}
    from_front_end(w, results=first, runs=1)
    # The same results again are a new report (runs counts them).
    from_front_end(w, results=first, runs=2)
    s1 = {"verb": {"id": "http://adlnet.gov/expapi/verbs/completed"}, "object": {"id": "x#1"}}
    s2 = {"verb": {"id": "http://adlnet.gov/expapi/verbs/passed"}, "object": {"id": "x#2"}}
    from_front_end(w, outcome=s1, outcomes=[s1])
    from_front_end(w, outcome=s2, outcomes=[s1, s2])
    assert got == [first, first] and w.history == [first, first] and removed == []
    assert statements == [s1, s2]
    assert (w.results, w.runs, w.outcome, w.outcomes) == (first, 2, s2, [s1, s2])
    # What the learner set in the widget and their work, as getState reported them.
    from_front_end(w, params={"n": "96"}, work={"version": 1})
    assert (w.params, w.work) == ({"n": "96"}, {"version": 1})
    from_front_end(w, error={"code": "bad-params", "message": "… nothing was changed."})
    assert w.error["code"] == "bad-params"
    with pytest.raises(ValueError, match="is not a function"):
        w.on_outcome("print")

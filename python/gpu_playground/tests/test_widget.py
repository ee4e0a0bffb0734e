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

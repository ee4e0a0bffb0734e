"""GPU Playground's widgets in Jupyter notebooks (docs/embedding.md, "Notebooks and books").

The front end is ``widget.mjs`` (an anywidget module): it writes the same
``<div data-gpu-playground>`` as the one-line loader and adds the site's ``embed.js``, which
makes the iframe. The checks here mirror the loader's so a mistake is an exception in the
notebook rather than a message in the output.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import anywidget
import traitlets

__all__ = ["GpuPlayground", "WIDGETS"]

_HERE = Path(__file__).parent
#: The widget registry (page-models' WIDGETS, as ``crates/page-models/embed-widgets.json``).
WIDGETS: Dict[str, Dict[str, Any]] = {
    w["id"]: w for w in json.loads((_HERE / "widgets.json").read_text(encoding="utf-8"))
}
LANGS = ("en", "zh")
THEMES = ("light", "dark", "auto")
# The loader's limit on one attribute's length.
MAX_VALUE = 256


def _site(site: Optional[str]) -> str:
    site = site or os.environ.get("GPU_PLAYGROUND_SITE", "")
    if not site:
        raise ValueError(
            "GpuPlayground needs the playground's address: pass site='https://…/' "
            "(where GPU Playground is hosted) or set GPU_PLAYGROUND_SITE"
        )
    if not re.match(r"^https?://[^/\s]+(/\S*)?$", site):
        raise ValueError(f"site={site!r} is not an http(s) address")
    return site if site.endswith("/") else site + "/"


# Settings of the address itself, not the widget's: a change to them reloads the frame.
OWN = ("theme", "hide")


def _value(widget: Dict[str, Any], key: str, value: Any) -> str:
    name = widget["id"]
    if key not in widget["params"]:
        accepted = ", ".join(widget["params"]) or "none"
        raise ValueError(f'the widget "{name}" has no setting {key!r}; it accepts: {accepted}')
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{key}={value!r}: give a number or a string")
    text = str(value)
    if len(text) > MAX_VALUE:
        raise ValueError(f"{key} is longer than {MAX_VALUE} characters")
    if key in widget["whole"] and not re.fullmatch(r"\d{1,15}", text):
        raise ValueError(f"{key}={value!r} must be a whole number")
    return text


def _theme(theme: Any) -> str:
    if theme not in THEMES:
        raise ValueError(f"theme={theme!r}: use one of {', '.join(THEMES)}")
    return theme


def _hide(widget: Dict[str, Any], hide: Any) -> str:
    names = [hide] if isinstance(hide, str) else list(hide)
    names = [h.strip() for n in names for h in str(n).split(",")]
    bad = [h for h in names if h not in widget["hide"]]
    if bad:
        can = ", ".join(widget["hide"]) or "nothing"
        raise ValueError(f'the widget "{widget["id"]}" cannot hide {", ".join(bad)}; it can hide: {can}')
    return ",".join(names)


def _params(widget: Dict[str, Any], theme, hide, params: Dict[str, Any]) -> Dict[str, str]:
    out = {key: _value(widget, key, value) for key, value in params.items()}
    if theme is not None:
        out["theme"] = _theme(theme)
    if hide:
        out["hide"] = _hide(widget, hide)
    return out


def _checked(widget: Dict[str, Any], params: Dict[str, Any]) -> Dict[str, str]:
    """A whole ``params`` dict (``theme`` and ``hide`` among the settings), as the constructor
    checks it."""
    rest = {k: v for k, v in params.items() if k not in OWN}
    return _params(widget, params.get("theme"), params.get("hide"), rest)


def _lang(lang: Optional[str]) -> str:
    if lang is not None and lang != "" and lang not in LANGS:
        raise ValueError(f"lang={lang!r}: GPU Playground speaks {', '.join(LANGS)}")
    return lang or ""


class GpuPlayground(anywidget.AnyWidget):
    """One GPU Playground widget, e.g. ``GpuPlayground("race", n=256, lang="zh")``.

    Two-way: the traits are the live widget's.

    - ``params`` (the widget's settings, strings, plus ``theme`` and ``hide``) and ``lang``:
      set them (``w.params = {...}``, ``w.set_params(n=512)``, ``w.lang = "zh"``) and the
      widget follows: a setting of the widget is sent to it (``setParams``, the frame stays), a
      new ``lang``, ``theme`` or ``hide`` reloads it. What the learner sets in the widget comes
      back into ``params`` after each run or answer (and after :meth:`sync`), with ``work``, the
      learner's work (``getState``'s ``work``: a puzzle's code, a lesson's answers, where a
      training run got to).
    - ``results`` is the last ``run-finished`` report's ``results`` and ``runs`` counts the
      reports; ``history`` keeps every report's results, in order.
    - ``outcome`` is the last xAPI statement the widget sent (a dict) and ``outcomes`` all of
      them, in order.
    - ``error`` is the last refusal or failed run (``{"code", "message"}``; ``{}`` before any),
      e.g. a ``set_params`` value the widget's page refuses (the widget keeps its settings and
      ``params`` goes back to them).
    - :meth:`run` presses the widget's Run (a second ``run`` pauses a training widget);
      :meth:`on_results` and :meth:`on_outcome` call a function with each new report.

    These need a notebook with a live kernel and the widget shown in an output: messages to
    and from the widget arrive between cells, not while a cell runs.
    """

    _esm = _HERE / "widget.mjs"

    widget = traitlets.Unicode().tag(sync=True)
    params = traitlets.Dict().tag(sync=True)
    lang = traitlets.Unicode("").tag(sync=True)
    site = traitlets.Unicode().tag(sync=True)
    results = traitlets.Dict().tag(sync=True)
    runs = traitlets.Int(0).tag(sync=True)
    outcome = traitlets.Dict().tag(sync=True)
    outcomes = traitlets.List().tag(sync=True)
    work = traitlets.Dict().tag(sync=True)
    error = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        widget: str,
        *,
        lang: Optional[str] = None,
        theme: Optional[str] = None,
        hide=None,
        site: Optional[str] = None,
        **params: Any,
    ) -> None:
        w = WIDGETS.get(widget)
        if w is None:
            raise ValueError(
                f"GPU Playground has no widget named {widget!r}; the widgets: {', '.join(WIDGETS)}"
            )
        checked = _params(w, theme, hide, params)
        lang = _lang(lang)
        self._history: List[Dict[str, Any]] = []
        self._on_results: List[Callable[[Dict[str, Any]], Any]] = []
        self._on_outcome: List[Callable[[Dict[str, Any]], Any]] = []
        self._runs_sent = 0
        super().__init__(widget=widget, params=checked, lang=lang, site=_site(site))

    # ------------------------------------------------------------ checks on every change

    @traitlets.validate("params")
    def _check_params(self, proposal):
        w = WIDGETS.get(self.widget)
        # Before `widget` is set (traitlets sets the traits one by one) the constructor checked.
        return _checked(w, proposal["value"]) if w else proposal["value"]

    @traitlets.validate("lang")
    def _check_lang(self, proposal):
        return _lang(proposal["value"])

    @traitlets.validate("widget")
    def _check_widget(self, proposal):
        if getattr(self, "widget", "") and proposal["value"] != self.widget:
            raise ValueError("a GpuPlayground's widget cannot change: make another GpuPlayground")
        return proposal["value"]

    # ------------------------------------------------------------ Python to the widget

    def set_params(self, **params: Any) -> None:
        """Changes some settings, keeping the others: ``w.set_params(n=512, theme="dark")``.

        Checked as the constructor checks them (``ValueError`` saying what is accepted);
        ``None`` removes a setting (the widget's default again)."""
        merged = {k: v for k, v in self.params.items()}
        for key, value in params.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        self.params = merged

    def run(self) -> None:
        """Presses the widget's Run (its result arrives in ``results``, ``history`` and the
        ``on_results`` functions; a training widget pauses on a second ``run``)."""
        self._runs_sent += 1
        self.send({"type": "run", "id": f"py-{self._runs_sent}"})

    def sync(self) -> None:
        """Asks the widget for its settings and the learner's work now (``params``, ``work``)."""
        self.send({"type": "getState"})

    def reset(self) -> None:
        """Every setting of the widget back to its default (``lang``, ``theme``, ``hide`` kept)."""
        self.params = {k: v for k, v in self.params.items() if k in OWN}

    # ------------------------------------------------------------ the widget to Python

    @property
    def history(self) -> List[Dict[str, Any]]:
        """Every ``run-finished`` report's ``results`` since the widget was made, oldest first."""
        return list(self._history)

    def on_results(self, fn: Callable[[Dict[str, Any]], Any], remove: bool = False) -> None:
        """Calls ``fn(results)`` with each new ``run-finished`` report (``remove=True`` stops)."""
        _register(self._on_results, fn, remove)

    def on_outcome(self, fn: Callable[[Dict[str, Any]], Any], remove: bool = False) -> None:
        """Calls ``fn(statement)`` with each new xAPI statement (``remove=True`` stops)."""
        _register(self._on_outcome, fn, remove)

    @traitlets.observe("runs")
    def _new_results(self, change):
        # `results` and `runs` come in one update; notifications wait until both are set.
        if change["new"] <= change["old"]:
            return
        self._history.append(dict(self.results))
        for fn in list(self._on_results):
            fn(dict(self.results))

    @traitlets.observe("outcomes")
    def _new_outcomes(self, change):
        old, new = change["old"] or [], change["new"] or []
        for statement in new[len(old):]:
            for fn in list(self._on_outcome):
                fn(dict(statement))


def _register(callbacks: list, fn, remove: bool) -> None:
    if not callable(fn):
        raise ValueError(f"{fn!r} is not a function")
    if remove:
        if fn in callbacks:
            callbacks.remove(fn)
    elif fn not in callbacks:
        callbacks.append(fn)

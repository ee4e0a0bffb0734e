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
from typing import Any, Dict, Optional

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


def _params(widget: Dict[str, Any], theme, hide, params: Dict[str, Any]) -> Dict[str, str]:
    name = widget["id"]
    out: Dict[str, str] = {}
    for key, value in params.items():
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
        out[key] = text
    if theme is not None:
        if theme not in THEMES:
            raise ValueError(f"theme={theme!r}: use one of {', '.join(THEMES)}")
        out["theme"] = theme
    if hide:
        names = [hide] if isinstance(hide, str) else list(hide)
        names = [h.strip() for n in names for h in n.split(",")]
        bad = [h for h in names if h not in widget["hide"]]
        if bad:
            can = ", ".join(widget["hide"]) or "nothing"
            raise ValueError(f'the widget "{name}" cannot hide {", ".join(bad)}; it can hide: {can}')
        out["hide"] = ",".join(names)
    return out


class GpuPlayground(anywidget.AnyWidget):
    """One GPU Playground widget, e.g. ``GpuPlayground("race", n=256, lang="zh")``.

    ``results`` holds the ``results`` of the widget's last ``run-finished`` report and
    ``runs`` counts the reports (observe either with ``.observe``).
    """

    _esm = _HERE / "widget.mjs"

    widget = traitlets.Unicode().tag(sync=True)
    params = traitlets.Dict().tag(sync=True)
    lang = traitlets.Unicode("").tag(sync=True)
    site = traitlets.Unicode().tag(sync=True)
    results = traitlets.Dict().tag(sync=True)
    runs = traitlets.Int(0).tag(sync=True)

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
        if lang is not None and lang not in LANGS:
            raise ValueError(f"lang={lang!r}: GPU Playground speaks {', '.join(LANGS)}")
        super().__init__(
            widget=widget,
            params=_params(w, theme, hide, params),
            lang=lang or "",
            site=_site(site),
        )

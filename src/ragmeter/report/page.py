"""The HTML page shell shared by every ragmeter page (run report, comparison, run list).

A page is one self-contained HTML file: the shared CSS and JavaScript (``assets/``) and the page's
data are inlined, nothing is loaded from anywhere, and a Content-Security-Policy meta tag forbids
any load: ``default-src 'none'``; scripts only by the SHA-256 hash of the page's own script (so no
other script runs, inline event handlers included, even if markup were ever injected); images only
from ``data:`` URLs. The page opens from ``file://`` and from ``ragmeter view`` alike.

Data travels as JSON inside ``<script type="application/json" id="ragmeter-data">`` with ``<``,
``>``, ``&``, U+2028 and U+2029 written as ``\\uXXXX`` escapes, so no string in the data can close the
tag or start markup. The scripts build the whole DOM with ``textContent`` and never parse data as
HTML.

Another page reuses all this with :func:`render_page`, naming its own script among ``assets/``::

    render_page("ragmeter compare", data, scripts=("sample.js", "compare.js"))

Scripts see ``window.RM`` (``assets/common.js``): ``RM.data()``, ``RM.el(...)``, ``RM.fmt(...)``,
``RM.histogram(...)``, ``RM.VirtualRows``, ``RM.highlight(...)``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.log.serialize import to_jsonable

DATA_ELEMENT_ID = "ragmeter-data"

_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_JSON_ESCAPE_RE = re.compile("[<>&\u2028\u2029]")
_LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def embed_json(data: Any) -> str:
    """``data`` as JSON that is safe inside a ``<script type="application/json">`` element.

    Values JSON cannot hold (NaN, numpy scalars, sets...) are written as the run store writes
    them (:func:`ragmeter.log.serialize.to_jsonable`; NaN becomes the string ``"nan"``).
    Only characters inside JSON strings are escaped (``<``, ``>``, ``&``, U+2028/2029; JSON's
    structure uses none of them), so ``JSON.parse`` gives back exactly ``data``. Non-ASCII text
    (Chinese) stays UTF-8; a lone surrogate, which UTF-8 cannot carry, becomes its ``\\uXXXX`` escape.
    """
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError):  # numpy values, NaN...: the run store's own JSON rules
        text = json.dumps(to_jsonable(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = _JSON_ESCAPE_RE.sub(lambda m: _JSON_ESCAPES[m.group()], text)
    return _LONE_SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@cache
def asset(name: str) -> str:
    """The text of ``ragmeter/report/assets/<name>``."""
    if "/" in name or "\\" in name or name.startswith("."):
        raise ValueError(f"asset name must be a plain file name, got {name!r}")
    return resources.files("ragmeter.report").joinpath("assets").joinpath(name).read_text(encoding="utf-8")


def _sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_security_policy(script: str, connect: bool = False) -> str:
    """The page's CSP: nothing may load; the one inline ``script`` (the element's exact text) runs,
    by its hash, and no other script does. ``connect``: the script may also send requests to the
    server that served the page (``connect-src 'self'``; the labelling page of ``ragmeter view``
    reads samples and writes labels so), and nowhere else."""
    return (
        "default-src 'none'; "
        f"script-src {_sha256_source(script)}; "
        + ("connect-src 'self'; " if connect else "")
        + "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    )


_CSP_META_RE = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')


def page_csp(page: str) -> str | None:
    """The CSP of a page made by :func:`render_page` (a server sends it as a header too)."""
    m = _CSP_META_RE.search(page)
    return None if m is None else html.unescape(m.group(1))


def render_page(
    title: str,
    data: Mapping[str, Any],
    *,
    scripts: Sequence[str],
    styles: Sequence[str] = (),
    connect: bool = False,
    lang: str = "en",
) -> str:
    """One self-contained HTML page.

    ``title``: the document title (escaped). ``data``: JSON-able, read by the scripts with
    ``RM.data()``. ``scripts``: asset names run after ``common.js``, in order (``report.js``,
    ``runs.js``, or a page's own). ``styles``: asset names added after ``common.css``.
    ``connect``: the page talks to the server that serves it (see :func:`content_security_policy`;
    for pages of ``ragmeter view`` only). ``lang``: the page's language (``en``, ``zh``).
    """
    script = "\n" + "\n".join(asset(name) for name in ("common.js", *scripts)) + "\n"
    style = "\n".join(asset(name) for name in ("common.css", *styles))
    csp = content_security_policy(script, connect=connect)
    if not re.fullmatch(r"[a-z]{2,3}(-[A-Za-z0-9]{1,8})?", lang):
        raise ValueError(f"not a language tag: {lang!r}")
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{lang}">\n<head>\n'
        '<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{html.escape(csp, quote=True)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>\n{style}\n</style>\n"
        "</head>\n<body>\n"
        "<noscript>This report needs JavaScript to show its data.</noscript>\n"
        '<div id="app"></div>\n'
        f'<script type="application/json" id="{DATA_ELEMENT_ID}">{embed_json(dict(data))}</script>\n'
        f"<script>{script}</script>\n"
        "</body>\n</html>\n"
    )


def write_page(path: str | Path, page: str, what: str) -> Path:
    """Write ``page`` (a rendered document) to ``path``; ConfigError naming ``what`` ("the report",
    "the comparison") when it is a directory or cannot be written."""
    target = Path(path)
    if target.is_dir():
        raise ConfigError(f"cannot write {what} to {target}: it is a directory; name a file")
    try:
        target.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {what} to {target}: {exc}") from exc
    return target

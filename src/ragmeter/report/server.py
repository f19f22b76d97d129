"""``ragmeter view``: a small web app over a run store (standard library only).

Routes (GET, and one POST; everything else is 405):

- ``/``: the runs in the store, newest first, with each metric's mean, n scored and n invalid,
  and a form to compare two runs;
- ``/run/<run>``: the run's HTML report, the same page ``ragmeter report`` writes;
- ``/compare?a=<run>&b=<run>[&margin=M][&max_new_invalid=N]``: run B against run A, the page of
  ``ragmeter compare --html`` (:mod:`ragmeter.report.comparison`, :mod:`ragmeter.report.compare_html`);
- ``/run/<run>/label?metric=M[&lang=L][&blind=0][&at=IDX]``: the labelling page
  (:mod:`ragmeter.report.labelling`); ``/run/<run>/label/sample?metric=M[&idx=I][&blind=0]``:
  one sample of it as JSON; ``POST /run/<run>/label``: a label (or an undo), as JSON.

It binds to 127.0.0.1 unless told otherwise, reads the store through :class:`RunStore` and
:class:`Result`, and sends each page with the same Content-Security-Policy as a header. A finished
run's page is kept in memory (a few at a time); a running one is re-read on each request.

**The one write is a label**, and only on a loopback address. A write is refused (403) unless it
carries the token made when the server started (``X-Ragmeter-Token``; the labelling page embeds
it), comes from this server's own pages (an ``Origin`` or ``Sec-Fetch-Site`` header that names
another site is refused), is addressed to this machine by name (``Host``: DNS rebinding), and is
JSON (``Content-Type: application/json``, so no plain form of another site can send one).
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ragmeter.errors import RagmeterError, RunError
from ragmeter.log.store import RunStore, require_store
from ragmeter.report.compare_html import render_comparison
from ragmeter.report.comparison import check_margin, check_max_new_invalid, compare_runs
from ragmeter.report.html import render_report
from ragmeter.report.labelling import LabelDesk, UndoConflict
from ragmeter.report.page import page_csp, render_page

logger = logging.getLogger(__name__)

#: rendered pages of finished runs kept in memory
CACHE_SIZE = 8
#: the header a write carries its token in
TOKEN_HEADER = "X-Ragmeter-Token"
#: the largest request body a write may have
MAX_BODY = 64 * 1024


def _ordered(meta: dict[str, Any], summary: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-metric figures in the run's metric order (metrics not scored yet have none)."""
    names = [str(m.get("name")) for m in meta.get("metrics", []) if isinstance(m, dict)]
    names += [n for n in summary if n not in names]
    return [{"name": n, **summary.get(n, {"mean": None, "n_scored": 0, "n_invalid": 0})} for n in names]


class ViewApp:
    """The pages of ``ragmeter view`` for one run store, independent of HTTP (tests call it).

    ``token``: the secret a label write must carry; None (the default) serves no write."""

    def __init__(self, store_dir: str | Path, token: str | None = None) -> None:
        self.store_dir = require_store(store_dir)
        self.token = token
        self.desk = LabelDesk(self.store_dir, token)
        self._cache: OrderedDict[tuple[str, ...], str] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def writable(self) -> bool:
        return self.token is not None

    # ---------------------------------------------------------------- pages

    def runs_page(self) -> str:
        with RunStore(self.store_dir) as store:
            runs = store.list_runs()
            listed: list[dict[str, Any]] = [
                {
                    "run_id": r.run_id,
                    "created_at": r.created_at,
                    "finished_at": r.finished_at,
                    "status": r.status,
                    "source": r.meta.get("source"),
                    "judge": (r.meta.get("judge") or {}).get("name"),
                    "n_samples": r.meta.get("n_samples"),
                    "metrics": _ordered(r.meta, store.metric_summary(r.run_id)),
                }
                for r in runs
            ]
        data = {"kind": "runs", "store": str(self.store_dir), "runs": listed}
        return render_page(f"ragmeter runs in {self.store_dir}", data, scripts=("runs.js",))

    def run_page(self, run: str) -> str:
        from ragmeter.run.result import Result

        with RunStore(self.store_dir) as store:
            info = store.get_run(run)
            labels = store.list_labels(info.run_id)
        # the page shows the run's labels (agreement, calibrated estimates): a new label is a new page
        stamp = f"{len(labels)}:{max((lab.created_at for lab in labels), default='')}"
        key = ("run", info.run_id, info.status, str(info.finished_at), stamp)
        return self._cached(
            key,
            info.status,
            lambda: render_report(Result.from_store(self.store_dir, info.run_id), label_links=True),
        )

    def compare_page(self, run_a: str, run_b: str, margin: float = 0.0, max_new_invalid: int = 0) -> str:
        """Run B against run A (``margin``, ``max_new_invalid``: the regression margin and the
        allowance of newly invalid samples the page judges by)."""
        bound = check_margin(margin)  # ConfigError (400) unless >= 0
        allowed = check_max_new_invalid(max_new_invalid)
        with RunStore(self.store_dir) as store:
            a, b = store.get_run(run_a), store.get_run(run_b)
        key = ("compare", a.run_id, str(a.finished_at), b.run_id, str(b.finished_at), repr(bound), str(allowed))
        status = "running" if "running" in (a.status, b.status) else "finished"
        return self._cached(
            key,
            status,
            lambda: render_comparison(compare_runs(a.run_id, b.run_id, store=self.store_dir), bound, allowed),
        )

    def _cached(self, key: tuple[str, ...], status: str, make: Callable[[], str]) -> str:
        if status == "running":
            return make()
        with self._lock:
            page = self._cache.get(key)
            if page is not None:
                self._cache.move_to_end(key)
                return page
        page = make()
        with self._lock:
            self._cache[key] = page
            while len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        return page

    # ---------------------------------------------------------------- routing

    def label_page(self, run: str, query: dict[str, str]) -> str:
        return self.desk.page(
            run,
            query.get("metric") or None,
            lang=query.get("lang") or None,
            blind=query.get("blind", "1") != "0",
            at=query.get("at") or None,
            writable=self.writable,
        )

    def respond(self, target: str) -> tuple[int, str, str]:
        """(status, content type, body) for a GET of ``target`` (path and query)."""
        parts = urlsplit(target)
        path = unquote(parts.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        run, sub = _run_path(parts.path)
        try:
            if path in ("/", "/index.html"):
                return 200, "text/html", self.runs_page()
            if run is not None and sub == "label":
                return 200, "text/html", self.label_page(run, query)
            if run is not None and sub == "label/sample":
                return self._json(
                    lambda: self.desk.sample(
                        run, query.get("metric") or None, query.get("idx"), query.get("blind", "1") != "0"
                    )
                )
            if path.startswith("/run/") and len(path) > len("/run/"):
                return 200, "text/html", self.run_page(path[len("/run/") :])
            if path == "/compare":
                missing = [k for k in ("a", "b") if not query.get(k)]
                if missing:
                    return 400, "text/plain", "compare needs two runs: /compare?a=RUN_A&b=RUN_B\n"
                try:
                    margin = float(query.get("margin", "0"))
                except ValueError:
                    return 400, "text/plain", f"margin must be a number, got {query['margin']!r}\n"
                try:
                    allowed = int(query.get("max_new_invalid", "0"))
                except ValueError:
                    return 400, "text/plain", f"max_new_invalid must be a count, got {query['max_new_invalid']!r}\n"
                return 200, "text/html", self.compare_page(query["a"], query["b"], margin, allowed)
        except RunError as exc:  # an unknown or ambiguous run id
            return 404, "text/plain", f"{exc}\n"
        except RagmeterError as exc:
            return 400, "text/plain", f"{exc}\n"
        except Exception as exc:  # a bug: say so instead of dropping the connection
            logger.exception("ragmeter view: %s failed", target)
            return 500, "text/plain", f"internal error ({type(exc).__name__}: {exc}); see the server's log\n"
        return 404, "text/plain", f"no page {path!r}; the runs are at /\n"

    def respond_post(self, target: str, body: bytes) -> tuple[int, str, str]:
        """(status, content type, body) for a POST of ``body`` (JSON) to ``target``, once the
        server has checked where it comes from and its token (:func:`_handler`)."""
        run, sub = _run_path(urlsplit(target).path)
        if run is None or sub != "label":
            return 405, "text/plain", "ragmeter view takes no writes but labels (POST /run/RUN/label)\n"
        if not self.writable:
            return _error(403, "this ragmeter view takes no labels: it is not bound to a loopback address")
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            return _error(400, f"the body is not JSON: {exc}")
        if not isinstance(data, dict):
            return _error(400, "the body must be a JSON object")
        return self._json(lambda: self.desk.post(run, data))

    def _json(self, make: Callable[[], Any]) -> tuple[int, str, str]:
        """``make()`` as a JSON reply; errors as ``{"error": message}`` with their status."""
        try:
            return 200, "application/json", json.dumps(make(), ensure_ascii=False)
        except RunError as exc:
            return _error(404, str(exc))
        except UndoConflict as exc:
            return _error(409, str(exc))
        except RagmeterError as exc:
            return _error(400, str(exc))
        except Exception as exc:
            logger.exception("ragmeter view: a label request failed")
            return _error(500, f"internal error ({type(exc).__name__}: {exc}); see the server's log")


def _error(status: int, message: str) -> tuple[int, str, str]:
    return status, "application/json", json.dumps({"error": message}, ensure_ascii=False)


def _run_path(raw_path: str) -> tuple[str | None, str]:
    """``(run, rest)`` of a ``/run/<run>[/<rest>]`` path, each segment unquoted on its own (a run
    id may hold an encoded ``/``); ``(None, "")`` for other paths."""
    if not raw_path.startswith("/run/"):
        return None, ""
    head, _, rest = raw_path[len("/run/") :].partition("/")
    run = unquote(head)
    return (run, rest) if run else (None, "")


def _handler(app: ViewApp) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "ragmeter-view"

        def do_GET(self) -> None:
            self._send(*self._answer())

        def do_HEAD(self) -> None:
            self._send(*self._answer(), head=True)

        def _answer(self) -> tuple[int, str, str]:
            allowed = self.server.allowed_hosts  # type: ignore[attr-defined]
            host = _host_name(self.headers.get("Host", ""))
            if allowed is not None and host not in allowed:
                # a page of another site that resolved its own name to this address (DNS rebinding)
                return 403, "text/plain", f"unexpected Host {host!r}; open {self.server.url}\n"  # type: ignore[attr-defined]
            return app.respond(self.path)

        def do_POST(self) -> None:
            refused = self._refused_write()
            if refused is not None:
                self._send(*_error(*refused))
                return
            length = int(self.headers.get("Content-Length") or 0)
            self._send(*app.respond_post(self.path, self.rfile.read(length)))

        def _refused_write(self) -> tuple[int, str] | None:
            """Why a write cannot be taken (status, message), or None when it can (see the module
            docstring); the body is read only after this."""
            server: ViewServer = self.server  # type: ignore[assignment]
            run, sub = _run_path(urlsplit(self.path).path)
            if run is None or sub != "label":
                return 405, "ragmeter view takes no writes but labels (POST /run/RUN/label)"
            if server.allowed_hosts is None or not app.writable:
                return 403, "this ragmeter view takes no labels: it is not bound to a loopback address"
            host = _host_name(self.headers.get("Host", ""))
            if host not in server.allowed_hosts:
                return 403, f"unexpected Host {host!r}; open {server.url}"
            origin = self.headers.get("Origin")
            if origin is not None and origin not in server.origins():
                return 403, f"a write from another site ({origin}) is refused"
            if self.headers.get("Sec-Fetch-Site", "same-origin") not in ("same-origin", "none"):
                return 403, "a write from another site is refused"
            token = self.headers.get(TOKEN_HEADER, "")
            if not hmac.compare_digest(token.encode("utf-8", "replace"), str(app.token).encode("utf-8")):
                return 403, f"a write needs this server's token ({TOKEN_HEADER}); reload the page"
            ctype = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
            if ctype != "application/json":
                return 415, "a write is JSON (Content-Type: application/json)"
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError:
                return 411, "a write says its length (Content-Length)"
            if not 0 <= length <= MAX_BODY:
                return 413, f"a write is at most {MAX_BODY} bytes"
            return None

        def _refuse(self) -> None:
            self._send(405, "text/plain", "ragmeter view takes no writes but labels (POST /run/RUN/label)\n")

        do_PUT = do_DELETE = do_PATCH = _refuse

        def _send(self, status: int, ctype: str, body: str, head: bool = False) -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", f"{ctype}; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            if ctype == "text/html":
                csp = page_csp(body)
                if csp is not None:
                    self.send_header("Content-Security-Policy", csp)
            self.end_headers()
            if not head:
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            if self.server.verbose:  # type: ignore[attr-defined]
                super().log_message(format, *args)

    return Handler


_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def _host_name(header: str) -> str:
    """The host of a ``Host`` header, without port or IPv6 brackets, lower-cased."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class ViewServer(ThreadingHTTPServer):
    """``ThreadingHTTPServer`` serving a :class:`ViewApp`; ``port=0`` picks a free port.

    Bound to a loopback address, it answers only requests whose ``Host`` names this machine
    (``127.0.0.1``, ``localhost``, ``::1``), so a web page elsewhere cannot read the runs by
    pointing its own domain name at 127.0.0.1, and it takes labels from its labelling page, with a
    token made at start (``token``). Bound to another address (``--host``), any Host is accepted
    and no write is: the labelling page is read-only there.
    """

    daemon_threads = True

    def __init__(
        self, store_dir: str | Path, host: str = "127.0.0.1", port: int = 8765, verbose: bool = False
    ) -> None:
        self.verbose = verbose
        self.allowed_hosts: frozenset[str] | None = _LOOPBACK | {host} if host in _LOOPBACK else None
        self.token: str | None = secrets.token_urlsafe(32) if self.allowed_hosts is not None else None
        self.app = ViewApp(store_dir, token=self.token)
        super().__init__((host, port), _handler(self.app))

    def origins(self) -> frozenset[str]:
        """The ``Origin`` values of this server's own pages (every loopback name, this port)."""
        port = self.server_address[1]
        names = self.allowed_hosts or frozenset()
        return frozenset(f"http://{f'[{h}]' if ':' in h else h}:{port}" for h in names)

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

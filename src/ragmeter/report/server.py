"""``ragmeter view``: a small read-only web app over a run store (standard library only).

Routes (GET only; everything else is 405):

- ``/``: the runs in the store, newest first, with each metric's mean, n scored and n invalid,
  and a form to compare two runs;
- ``/run/<run>``: the run's HTML report, the same page ``ragmeter report`` writes;
- ``/compare?a=<run>&b=<run>[&margin=M][&max_new_invalid=N]``: run B against run A, the page of
  ``ragmeter compare --html`` (:mod:`ragmeter.report.comparison`, :mod:`ragmeter.report.compare_html`).

It binds to 127.0.0.1 unless told otherwise, reads the store through :class:`RunStore` and
:class:`Result` (never writes), and sends each page with the same Content-Security-Policy as a
header. A finished run's page is kept in memory (a few at a time); a running one is re-read on
each request.
"""

from __future__ import annotations

import logging
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
from ragmeter.report.page import page_csp, render_page

logger = logging.getLogger(__name__)

#: rendered pages of finished runs kept in memory
CACHE_SIZE = 8


def _ordered(meta: dict[str, Any], summary: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-metric figures in the run's metric order (metrics not scored yet have none)."""
    names = [str(m.get("name")) for m in meta.get("metrics", []) if isinstance(m, dict)]
    names += [n for n in summary if n not in names]
    return [{"name": n, **summary.get(n, {"mean": None, "n_scored": 0, "n_invalid": 0})} for n in names]


class ViewApp:
    """The pages of ``ragmeter view`` for one run store, independent of HTTP (tests call it)."""

    def __init__(self, store_dir: str | Path) -> None:
        self.store_dir = require_store(store_dir)
        self._cache: OrderedDict[tuple[str, ...], str] = OrderedDict()
        self._lock = threading.Lock()

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
            key, info.status, lambda: render_report(Result.from_store(self.store_dir, info.run_id))
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

    def respond(self, target: str) -> tuple[int, str, str]:
        """(status, content type, body) for a GET of ``target`` (path and query)."""
        parts = urlsplit(target)
        path = unquote(parts.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        try:
            if path in ("/", "/index.html"):
                return 200, "text/html", self.runs_page()
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

        def _refuse(self) -> None:
            self._send(405, "text/plain", "ragmeter view is read-only\n")

        do_POST = do_PUT = do_DELETE = do_PATCH = _refuse

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
    pointing its own domain name at 127.0.0.1. Bound to another address (``--host``), any Host is
    accepted.
    """

    daemon_threads = True

    def __init__(
        self, store_dir: str | Path, host: str = "127.0.0.1", port: int = 8765, verbose: bool = False
    ) -> None:
        self.app = ViewApp(store_dir)
        self.verbose = verbose
        self.allowed_hosts: frozenset[str] | None = _LOOPBACK | {host} if host in _LOOPBACK else None
        super().__init__((host, port), _handler(self.app))

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), self.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

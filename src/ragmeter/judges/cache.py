"""Content-addressed cache of model replies and embeddings, in SQLite.

The key of a chat reply is the SHA-256 of canonical JSON over the provider's name, model and base
URL and :meth:`ChatRequest.cache_fields` (messages, sampling parameters, schema, step, prompt
version): change any of them and the request is asked again; repeat a run and it costs nothing.
Embeddings are keyed over provider, model, base URL and the text.

Safe from one event loop (calls are short and synchronous) and from several threads (a lock; the
connection is opened with ``check_same_thread=False``). WAL mode lets several processes share a file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.errors import ConfigError
from ragmeter.judges.types import ChatRequest, ChatResponse, Usage
from ragmeter.log.schema import enable_wal

if TYPE_CHECKING:
    import numpy as np

SCHEMA_VERSION = 1
#: how long opening the cache waits for another process (SQLite busy timeout and the WAL-switch retries)
_OPEN_TIMEOUT_S = 30.0
logger = logging.getLogger("ragmeter.judges")


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def provider_identity(provider: Any) -> dict[str, Any]:
    """What identifies an endpoint in cache keys: name, model and base URL (never a key)."""
    desc: Mapping[str, Any] = {}
    describe = getattr(provider, "describe", None)
    if callable(describe):
        desc = describe() or {}
    return {
        "provider": getattr(provider, "name", desc.get("provider", "")),
        "model": getattr(provider, "model", desc.get("model", "")),
        "base_url": desc.get("base_url"),
    }


def chat_key(identity: Mapping[str, Any], request: ChatRequest) -> str:
    payload = {
        "v": SCHEMA_VERSION,
        "kind": "chat",
        "endpoint": dict(identity),
        "request": request.cache_fields(),
    }
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def embed_key(identity: Mapping[str, Any], text: str) -> str:
    payload = {"v": SCHEMA_VERSION, "kind": "embed", "endpoint": dict(identity), "text": text}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class NullCache:
    """A cache that stores nothing."""

    path: Path | None = None
    #: False: lookups always miss, so callers need not compute keys (a key hashes the whole request)
    stores = False

    def get_chat(self, key: str) -> ChatResponse | None:
        return None

    def put_chat(self, key: str, response: ChatResponse) -> None:
        return None

    def get_embedding(self, key: str) -> np.ndarray | None:
        return None

    def put_embedding(self, key: str, vector: np.ndarray) -> None:
        return None

    def close(self) -> None:
        return None

    def describe(self) -> dict[str, Any]:
        return {"kind": "none"}


class LLMCache(NullCache):
    """SQLite cache at ``path`` (a file; its directory is created)."""

    stores = True

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"cannot open the LLM cache at {self.path}: {e}") from e
        try:
            self._conn: sqlite3.Connection | None = self._open()
        except sqlite3.Error as e:
            raise ConfigError(f"cannot open the LLM cache at {self.path}: {e}") from e
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.write_error: str | None = None  # set when a write failed: the cache is read-only since

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            str(self.path), timeout=_OPEN_TIMEOUT_S, check_same_thread=False, isolation_level=None
        )
        try:
            enable_wal(conn, _OPEN_TIMEOUT_S)  # two processes opening a new cache at once wait
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS chat (key TEXT PRIMARY KEY, text TEXT NOT NULL,"
                " usage TEXT NOT NULL, model TEXT, finish_reason TEXT, created REAL NOT NULL)"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS embedding (key TEXT PRIMARY KEY, dim INTEGER NOT NULL,"
                " vector BLOB NOT NULL, created REAL NOT NULL)"
            )
        except BaseException:
            conn.close()
            raise
        return conn

    def _write(self, sql: str, params: tuple[Any, ...]) -> None:
        """One write; a failure (disk full, read-only file) is logged once and turns further writes
        off: a reply that cannot be cached is still a good reply."""
        if self.write_error is not None:
            return
        with self._lock:
            try:
                self._db().execute(sql, params)
            except sqlite3.Error as e:
                self.write_error = str(e)
                logger.warning(
                    "the LLM cache %s stopped taking writes (%s); going on without caching", self.path, e
                )

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ConfigError(f"the LLM cache at {self.path} is closed")
        return self._conn

    def get_chat(self, key: str) -> ChatResponse | None:
        with self._lock:
            row = (
                self._db()
                .execute("SELECT text, usage, model, finish_reason FROM chat WHERE key = ?", (key,))
                .fetchone()
            )
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return ChatResponse(
            text=row[0], usage=Usage.from_dict(json.loads(row[1])), model=row[2] or "", finish_reason=row[3]
        )

    def put_chat(self, key: str, response: ChatResponse) -> None:
        self._write(
            "INSERT OR REPLACE INTO chat (key, text, usage, model, finish_reason, created)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (
                key,
                response.text,
                json.dumps(response.usage.to_dict()),
                response.model,
                response.finish_reason,
                time.time(),
            ),
        )

    def get_embedding(self, key: str) -> np.ndarray | None:
        import numpy as np

        with self._lock:
            row = self._db().execute("SELECT dim, vector FROM embedding WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        vec = np.frombuffer(row[1], dtype="<f4")
        if vec.shape[0] != row[0]:
            return None
        return vec.astype(np.float32)

    def put_embedding(self, key: str, vector: np.ndarray) -> None:
        import numpy as np

        v = np.asarray(vector, dtype="<f4").reshape(-1)
        self._write(
            "INSERT OR REPLACE INTO embedding (key, dim, vector, created) VALUES (?, ?, ?, ?)",
            (key, int(v.shape[0]), v.tobytes(), time.time()),
        )

    def stats(self) -> dict[str, int]:
        with self._lock:
            chats = self._db().execute("SELECT COUNT(*) FROM chat").fetchone()[0]
            embeds = self._db().execute("SELECT COUNT(*) FROM embedding").fetchone()[0]
        return {
            "chat_entries": int(chats),
            "embedding_entries": int(embeds),
            "hits": self.hits,
            "misses": self.misses,
        }

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def describe(self) -> dict[str, Any]:
        return {"kind": "sqlite", "path": str(self.path)}

    def __enter__(self) -> LLMCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

"""Write generated rows as they are made, and read them back to resume.

Rows go to the output JSONL (one sample a line, the format ``ragmeter evaluate`` reads); each
finished task also gets a line in the state file ``<out>.state.jsonl`` (task id, rows kept, rows
dropped and why), so ``resume`` skips tasks already done, even those that kept no row.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from ragmeter.errors import ConfigError, DatasetError

__all__ = ["TestsetWriter", "state_path"]


def state_path(out: Path) -> Path:
    return out.with_name(out.name + ".state.jsonl")


class TestsetWriter:
    """Appends rows and task states; on resume, loads what a previous run wrote."""

    __test__ = False  # not a pytest test class

    def __init__(self, out: str | Path | None, *, resume: bool = False, overwrite: bool = False) -> None:
        self.out = Path(out) if out is not None else None
        self.rows: list[dict[str, Any]] = []
        self.done_tasks: dict[str, dict[str, Any]] = {}
        self._fh: IO[str] | None = None
        self._state: IO[str] | None = None
        if self.out is None:
            if resume:
                raise ConfigError("resume needs the output file (out=...)")
            return
        state = state_path(self.out)
        if self.out.exists() and not resume and not overwrite:
            raise ConfigError(f"{self.out} exists; resume it (--resume) or replace it (--overwrite)")
        if resume and self.out.exists():
            self._load(self.out, state)
        mode = "a" if resume else "w"
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self._fh = self.out.open(mode, encoding="utf-8")
        self._state = state.open(mode, encoding="utf-8")

    def _load(self, out: Path, state: Path) -> None:
        with out.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    self.rows.append(json.loads(line))
                except ValueError:
                    raise DatasetError(
                        "invalid JSON (a run cut mid-line?); remove the line and resume", file=str(out), row=n
                    ) from None
        if state.exists():
            with state.open(encoding="utf-8") as fh:
                for line in fh:
                    try:
                        item = json.loads(line)
                    except ValueError:
                        continue  # a state line cut by an interruption: that task is redone
                    self.done_tasks[str(item.get("task"))] = item
        for row in self.rows:  # rows written before their task's state line
            task = (row.get("metadata") or {}).get("task")
            if task is not None:
                self.done_tasks.setdefault(str(task), {"task": task})

    def write_row(self, row: Mapping[str, Any]) -> None:
        self.rows.append(dict(row))
        if self._fh is not None:
            self._fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            self._fh.flush()

    def finish_task(
        self, task_id: str, kept: int, dropped: Mapping[str, int], error: str | None = None
    ) -> None:
        item: dict[str, Any] = {"task": task_id, "kept": kept, "dropped": dict(dropped)}
        if error:
            item["error"] = error
        self.done_tasks[task_id] = item
        if self._state is not None:
            self._state.write(json.dumps(item, ensure_ascii=False) + "\n")
            self._state.flush()

    def close(self) -> None:
        for fh in (self._fh, self._state):
            if fh is not None:
                fh.close()
        self._fh = self._state = None

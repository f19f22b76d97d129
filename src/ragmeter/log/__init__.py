"""Run records: every run written as it goes, read back by reports, resume and export.

The default store is a SQLite file ``runs.sqlite`` in a directory the user chooses (the CLI's
``--out``); :func:`default_store_dir` is the directory used when none is given.
"""

from __future__ import annotations

from pathlib import Path

from ragmeter.log.labels import DrawProgress, Label, LabelDraw
from ragmeter.log.schema import SCHEMA_VERSION
from ragmeter.log.store import STATUSES, RunInfo, RunStore, ScoreRow, new_run_id


def default_store_dir() -> Path:
    """The run directory used when the user names none: ``ragmeter-runs`` relative to the current
    working directory (a relative path, resolved when the store opens it). Nothing reads the
    environment here; the CLI passes ``--out``."""
    return Path("ragmeter-runs")


__all__ = [
    "SCHEMA_VERSION",
    "STATUSES",
    "DrawProgress",
    "Label",
    "LabelDraw",
    "RunInfo",
    "RunStore",
    "ScoreRow",
    "default_store_dir",
    "new_run_id",
]

"""Shared by the benches that time ``ragmeter`` through its command line in a fresh process.

``ragmeter_cmd(src)`` is the command that starts the CLI; with ``src`` (a checkout's ``src``
folder, e.g. ``/path/to/main/src``) that checkout's code runs instead of the installed one, so a
bench can time the old and the new code alternately in one run (``--baseline SRC``) and the
figures compare by ratio on a shared, noisy machine.
"""

from __future__ import annotations

import os
import sys


def ragmeter_cmd(*python_flags: str) -> list[str]:
    return [sys.executable, *python_flags, "-m", "ragmeter"]


def env_for(src: str | None, **extra: str) -> dict[str, str]:
    """The environment of a CLI run: ``src`` first on the import path when given. Bytecode is
    cached as in an installed package (pip compiles it at install), even where the shell sets
    ``PYTHONDONTWRITEBYTECODE``: otherwise every run would compile each module from source again."""
    env = {**os.environ, **extra}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src:
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def versions(baseline: str | None) -> list[tuple[str, str | None]]:
    """(label, src) of the code versions to time: the installed one, and the baseline if given."""
    return [("baseline", baseline), ("this", None)] if baseline else [("this", None)]

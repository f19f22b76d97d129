"""Run configuration: one frozen object, validated before anything runs."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError

ENGINES: tuple[str, ...] = ("local", "ray")


@dataclass(frozen=True)
class RunConfig:
    """How a run is executed (not what it scores).

    ``concurrency``: judge requests in flight per endpoint (the runner keeps enough jobs going
    to fill them; a ``JudgeConfig.concurrency`` set explicitly caps one judge lower).
    ``out``: directory of the run store (SQLite); ``None`` keeps the run in memory only.
    ``strict``: any bad row stops the run before a single judge call.
    ``fail_on_invalid``: the CLI exits 1 when any score is invalid (the Python API reports it in
    ``Result.n_invalid`` and never raises for it).
    ``progress``: ``True``/``False``, or ``None`` for "when stderr is a terminal".
    ``engine``: ``"local"`` (this process) or ``"ray"`` (jobs sharded over a Ray cluster, see
    :mod:`ragmeter.run.ray_engine`); ``ray_address``: the cluster to join (None: the one this
    process is connected to, or a new local one); ``ray_workers``: Ray workers (None: one per CPU
    of the cluster).
    """

    concurrency: int = 16
    out: Path | None = None
    run_id: str | None = None
    resume: str | None = None
    strict: bool = False
    fail_on_invalid: bool = False
    progress: bool | None = None
    limit: int | None = None
    bootstrap_resamples: int = 2000
    engine: str = "local"
    ray_address: str | None = None
    ray_workers: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise ConfigError(f"concurrency must be a positive integer, got {self.concurrency!r}")
        if self.engine not in ENGINES:
            raise ConfigError(f"engine must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        if self.engine != "ray" and (self.ray_address is not None or self.ray_workers is not None):
            raise ConfigError("ray_address and ray_workers apply to engine='ray' only")
        if self.ray_workers is not None and (not isinstance(self.ray_workers, int) or self.ray_workers < 1):
            raise ConfigError(f"ray_workers must be a positive integer, got {self.ray_workers!r}")
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"limit must be a positive integer, got {self.limit!r}")
        if self.run_id is not None and self.resume is not None:
            raise ConfigError("give either run_id (a new run) or resume (an existing run), not both")
        if self.out is not None and not isinstance(self.out, Path):
            object.__setattr__(self, "out", Path(self.out))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["out"] = None if self.out is None else str(self.out)
        return d

"""The local judge's calibration file: support combiners refitted on a user's labels.

``ragmeter calibrate RUN --metric faithfulness`` writes one (:mod:`ragmeter.run.calibrate`);
``--judge local:FILE`` (Python: ``LocalJudge(calibration=FILE)``) scores with it. A JSON object:

- ``format``: ``"ragmeter-local-calibration"``, ``version``: 1;
- ``combiners``: ``support`` (reads ``entail``: English claims the verifier read) and
  ``support_plain`` (the others), each a :class:`~ragmeter.local.calibration.Combiner` as the
  packaged ``weights/*.json`` hold them, with its record;
- ``features``: what the rows were made with: the packaged combiner ``version`` (the feature
  pipeline of that release), the ``embedder`` and the ``verifier``; a judge whose features differ
  refuses the file, since its weights would read other numbers;
- ``metric``, ``fitted_on`` (run, dataset hash, labels), ``fit`` (prior, folds, seed),
  ``agreement`` (cross-validated, before and after), ``created_at``, ``ragmeter``: the record.

A file that is not such an object is a :class:`~ragmeter.errors.ConfigError` naming the file and
what is wrong with it; nothing is scored with it.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.local.calibration import Combiner, load_combiner
from ragmeter.local.support import ENTAIL, SUPPORT_FEATURES

FORMAT = "ragmeter-local-calibration"
VERSION = 1
#: the names the two combiners have in a file, and the packaged combiner each one replaces
COMBINERS: dict[str, str] = {"support": "support", "support_plain": "support_plain"}
#: every feature the judge computes for a claim
KNOWN_FEATURES: frozenset[str] = frozenset({*SUPPORT_FEATURES, ENTAIL})


@dataclass(frozen=True)
class Calibration:
    """A loaded calibration file: the two combiners and the file's record (everything else in
    it). ``path`` and ``sha256`` say which file it was."""

    support: Combiner
    support_plain: Combiner
    metric: str
    record: Mapping[str, Any] = field(default_factory=dict)
    path: str | None = None
    sha256: str | None = None

    @property
    def features(self) -> Mapping[str, Any]:
        return dict(self.record.get("features") or {})

    def provenance(self) -> dict[str, Any]:
        """What the run record keeps of it (``judge.support_combiner.calibration``)."""
        fitted = dict(self.record.get("fitted_on") or {})
        return {
            "file": self.path,
            "sha256": self.sha256,
            "metric": self.metric,
            "run": fitted.get("run"),
            "dataset_hash": fitted.get("dataset_hash"),
            "n_labels": fitted.get("n_labels"),
            "created_at": self.record.get("created_at"),
            # a calibrated estimate on these samples' labels would lean on the fit (docs/trust.md)
            "fitted_keys": list(fitted.get("sample_keys") or []),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "metric": self.metric,
            "combiners": {"support": self.support.to_dict(), "support_plain": self.support_plain.to_dict()},
            **{k: v for k, v in self.record.items() if k not in ("format", "version", "metric", "combiners")},
        }

    def save(self, path: str | Path) -> Path:
        """Write the file (UTF-8 JSON); returns its path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=1, ensure_ascii=False) + "\n", "utf-8")
        return path


def key_digest(key: str) -> str:
    """What a calibration file keeps of a sample key whose label it was fitted on (not the key
    itself, which may carry the data's ids): the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def packaged_features(embedder: Any = None, verifier: Any = None) -> dict[str, Any]:
    """The ``features`` entry of a file made with this judge's feature pipeline: the packaged
    support combiner's version, the embedder's and the verifier's names."""
    return {
        "combiner_version": str(load_combiner("support").record.get("version", "")),
        "embedder": None if embedder is None else str(getattr(embedder, "name", embedder)),
        "verifier": None if verifier is None else str(getattr(verifier, "name", verifier)),
    }


def _bad(where: str, what: str) -> ConfigError:
    return ConfigError(f"calibration file {where}: {what}")


def _finite(obj: Any, where: str, path: str) -> None:
    if isinstance(obj, float) and not math.isfinite(obj):
        raise _bad(where, f"{path} is {obj!r}; every number must be finite")
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            _finite(v, where, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _finite(v, where, f"{path}[{i}]")


def parse_calibration(data: Any, where: str = "<data>") -> Calibration:
    """Check a decoded calibration file (see the module docstring) and build it; ``where`` names
    the file in the errors."""
    if not isinstance(data, Mapping):
        raise _bad(where, f"must hold a JSON object, not {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise _bad(
            where, f'"format" must be {FORMAT!r}, got {data.get("format")!r} (is this a calibration file?)'
        )
    if data.get("version") != VERSION:
        raise _bad(
            where,
            f'"version" {data.get("version")!r} is not one this ragmeter reads ({VERSION}); upgrade ragmeter',
        )
    metric = data.get("metric")
    if not isinstance(metric, str) or not metric:
        raise _bad(where, '"metric" must name the metric whose labels it was fitted on')
    combiners = data.get("combiners")
    if not isinstance(combiners, Mapping):
        raise _bad(where, '"combiners" must be an object with "support" and "support_plain"')
    _finite(dict(data), where, "file")
    built: dict[str, Combiner] = {}
    for key in COMBINERS:
        raw = combiners.get(key)
        if not isinstance(raw, Mapping):
            raise _bad(where, f'"combiners.{key}" is missing or not an object')
        try:
            comb = Combiner.from_dict(raw)
        except ConfigError as exc:
            raise _bad(where, f'"combiners.{key}": {exc}') from None
        unknown = [f for f in comb.features if f not in KNOWN_FEATURES]
        if unknown:
            raise _bad(
                where,
                f'"combiners.{key}" reads feature(s) the local judge does not compute: {", ".join(unknown)} '
                f"(it computes {', '.join(sorted(KNOWN_FEATURES))})",
            )
        if len(set(comb.features)) != len(comb.features):
            raise _bad(where, f'"combiners.{key}" lists a feature twice')
        built[key] = comb
    if ENTAIL in built["support_plain"].features:
        raise _bad(
            where,
            f'"combiners.support_plain" must not read {ENTAIL!r}: it scores the claims the verifier did not read',
        )
    features = data.get("features")
    if not isinstance(features, Mapping) or "combiner_version" not in features:
        raise _bad(
            where,
            '"features" must say what the claim features were made with (combiner_version, embedder, verifier)',
        )
    record = {k: v for k, v in data.items() if k not in ("format", "version", "metric", "combiners")}
    return Calibration(built["support"], built["support_plain"], metric, record)


def load_calibration(path: str | Path) -> Calibration:
    """Read and check a calibration file (a ConfigError naming the file when it is not one)."""
    p = Path(path).expanduser()
    where = str(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise _bad(
            where, "no such file (make one with `ragmeter calibrate RUN --metric faithfulness`)"
        ) from None
    except OSError as exc:
        raise _bad(where, f"cannot be read: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _bad(where, f"is not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise _bad(where, f"is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    cal = parse_calibration(data, where)
    return Calibration(
        cal.support,
        cal.support_plain,
        cal.metric,
        cal.record,
        path=str(p.resolve()),
        sha256=hashlib.sha256(raw).hexdigest(),
    )


def check_features(cal: Calibration, embedder: Any, verifier: Any) -> None:
    """Refuse a calibration whose claim features were made otherwise than this judge makes them
    (another release's feature pipeline, another embedder or verifier)."""
    want = cal.features
    have = packaged_features(embedder, verifier if ENTAIL in cal.support.features else None)
    where = cal.path or "<data>"
    if str(want.get("combiner_version")) != have["combiner_version"]:
        raise _bad(
            where,
            f"was fitted on the claim features of the local judge with combiner version "
            f"{want.get('combiner_version')!r}; this ragmeter's is {have['combiner_version']!r}, whose "
            "features differ: run `ragmeter calibrate` again on the run's labels",
        )
    for key in ("embedder", "verifier"):
        if key == "verifier" and ENTAIL not in cal.support.features:
            continue
        if want.get(key) != have[key]:
            raise _bad(
                where,
                f"was fitted with the {key} {want.get(key)!r}; this judge uses {have[key]!r} "
                "(its features would read other numbers)",
            )


__all__ = [
    "COMBINERS",
    "FORMAT",
    "KNOWN_FEATURES",
    "VERSION",
    "Calibration",
    "check_features",
    "key_digest",
    "load_calibration",
    "packaged_features",
    "parse_calibration",
]

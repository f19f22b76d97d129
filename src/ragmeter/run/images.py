"""Images among a sample's contexts: a context that is an image reference, not text.

A context is an image when it is a ``data:image/...`` URI, or a path or http(s) URL ending in an
image suffix (``.png``, ``.jpg``, ``.jpeg``, ``.gif``, ``.webp``, ``.bmp``): how Ragas's
multi-modal samples hold them (``retrieved_contexts``), and what a LlamaIndex ``ImageNode`` becomes
when a pipeline's output is read (:mod:`ragmeter.pipeline.outputs`).

- **An LLM judge** (``reads_images``) gets them as image parts of the prompt (OpenAI's chat format:
  ``{"type": "image_url", "image_url": {"url": ...}}``; a local path is sent as a data URI): in the
  prompt's text each stands as ``[image k: name]``, and its picture follows the prompt.
  :func:`judge_images` holds them for the calls of one sample (a context variable, as the
  repetition is), and :class:`ragmeter.judges.llm.LLMJudge` attaches them.
- **The local judge** reads text only: the images are left out and the text contexts scored; a
  sample whose contexts are all images has no valid score, and the reason says so
  (:class:`ImagesOnlyError`), never a silent 0.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import dataclasses
import hashlib
import mimetypes
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragmeter.dataset.sample import Sample
from ragmeter.errors import DatasetError, RagmeterError

_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp")
_DATA_URI_RE = re.compile(r"^data:image/[a-z0-9.+-]+;base64,", re.I)

#: the image parts of the sample being judged (URLs or data URIs), in placeholder order
current_images: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "ragmeter_current_images", default=()
)


class ImagesOnlyError(RagmeterError):
    """The sample's contexts are all images and the judge reads text only."""


def is_image_ref(text: str) -> bool:
    """A context that is an image: a data URI, or a path / URL with an image suffix (one line)."""
    s = text.strip()
    if _DATA_URI_RE.match(s):
        return True
    if not s or "\n" in s or len(s) > 2048:
        return False
    return s.lower().split("?", 1)[0].endswith(_SUFFIXES)


def image_url(ref: str) -> str:
    """What goes to the model: a URL or data URI as it is, a local file as a data URI."""
    s = ref.strip()
    if _DATA_URI_RE.match(s) or s.startswith(("http://", "https://")):
        return s
    path = Path(s).expanduser()
    if not path.is_file():
        raise DatasetError(f"image context {s!r}: no such file", field="contexts")
    mime = mimetypes.guess_type(path.name)[0] or "image/png"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _name(ref: str) -> str:
    s = ref.strip()
    if _DATA_URI_RE.match(s):
        return "inline " + hashlib.sha256(s.encode()).hexdigest()[:8]
    return s.rsplit("/", 1)[-1].split("?", 1)[0]


def has_images(sample: Sample) -> bool:
    return any(is_image_ref(c) for c in sample.contexts or ())


@contextlib.contextmanager
def judge_images(sample: Sample, judge: Any) -> Iterator[Sample]:
    """The sample as ``judge`` reads it: for a judge that reads images, each image context becomes
    ``[image k: name]`` and its picture is attached to the judge's prompts for the duration; for
    one that does not, the image contexts are left out (:class:`ImagesOnlyError` when nothing else
    is left). A sample without images is given as it is."""
    contexts = tuple(sample.contexts or ())
    if not any(is_image_ref(c) for c in contexts):
        yield sample
        return
    if not getattr(judge, "reads_images", False):
        text = tuple(c for c in contexts if not is_image_ref(c))
        if not text:
            raise ImagesOnlyError(
                f"the contexts are {len(contexts)} image(s) and no text; {getattr(judge, 'name', 'this judge')} "
                "reads text only: name an LLM judge that reads images (a vision model)"
            )
        yield dataclasses.replace(sample, contexts=text)
        return
    urls: list[str] = []
    shown: list[str] = []
    for c in contexts:
        if is_image_ref(c):
            urls.append(image_url(c))
            shown.append(f"[image {len(urls)}: {_name(c)}]")
        else:
            shown.append(c)
    token = current_images.set(tuple(urls))
    try:
        yield dataclasses.replace(sample, contexts=tuple(shown))
    finally:
        current_images.reset(token)

"""Load documents for test-set generation: .txt, .md, .html/.htm and .pdf.

Each file becomes a :class:`Document` with an ``id`` (its path relative to the folder given, without
the extension, ``/``-separated), a ``title`` and the ``text``:

- ``.txt``: the first line when it is short (<= 120 characters) and followed by a blank line, else
  the file name;
- ``.md``: the first ``#`` heading (Markdown markup is kept in the text: headings and lists help
  sentence splitting);
- ``.html``: ``<title>`` or the first ``<h1>``; the text is what a reader sees (``script``,
  ``style``, ``nav``, ``header``, ``footer`` dropped; block elements become line breaks), with the
  standard library's :mod:`html.parser`;
- ``.pdf``: read with ``pypdf`` (``pip install 'ragmeter[docs]'``), imported only when a PDF is
  loaded; the title from the PDF's metadata, else the file name.

Files are read as UTF-8 (a BOM is accepted). An unreadable file raises
:class:`~ragmeter.errors.DatasetError` naming it; other extensions are skipped when a folder is
loaded and refused when named directly.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError, DatasetError
from ragmeter.text import detect_lang

__all__ = ["SUPPORTED_SUFFIXES", "Document", "html_to_text", "load_documents"]

SUPPORTED_SUFFIXES: tuple[str, ...] = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf")


@dataclass(frozen=True)
class Document:
    """One source document. ``lang`` is detected from the text ("en" or "zh")."""

    id: str
    text: str
    title: str = ""
    source: str = ""
    lang: str = "en"
    metadata: dict[str, Any] = field(default_factory=dict)


# --------------------------------------------------------------------------- HTML

_BLOCK_TAGS = frozenset(
    "p div br li ul ol h1 h2 h3 h4 h5 h6 tr table section article blockquote pre dt dd figcaption".split()
)
_SKIP_TAGS = frozenset({"script", "style", "nav", "header", "footer", "noscript", "template", "svg", "head"})


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title = ""
        self.h1 = ""
        self._skip = 0
        self._in_title = False
        self._in_h1 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP_TAGS:
            self._skip += 1
        if tag == "title":
            self._in_title = True
        if tag == "h1":
            self._in_h1 = True
        if tag in _BLOCK_TAGS:
            self.parts.append("\n\n" if tag not in ("br", "li", "tr") else "\n")
        if tag == "li":
            self.parts.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP_TAGS and self._skip:
            self._skip -= 1
        if tag == "title":
            self._in_title = False
        if tag == "h1":
            self._in_h1 = False
        if tag in _BLOCK_TAGS:
            self.parts.append("\n\n" if tag.startswith("h") or tag == "p" else "\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
            return
        if self._skip:
            return
        if self._in_h1:
            self.h1 += data
        self.parts.append(data)


def html_to_text(markup: str) -> tuple[str, str]:
    """(title, visible text) of an HTML page, with the standard library's parser."""
    parser = _TextExtractor()
    parser.feed(markup)
    parser.close()
    raw = "".join(parser.parts)
    lines = [" ".join(line.split()) for line in raw.split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    title = " ".join(html.unescape(parser.title or parser.h1).split())
    return title, text


# --------------------------------------------------------------------------- files


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise DatasetError(f"not UTF-8 text ({e.reason} at byte {e.start})", file=str(path)) from None
    except OSError as e:
        raise DatasetError(f"cannot read: {e.strerror or e}", file=str(path)) from None


def _read_pdf(path: Path) -> tuple[str, str]:
    try:
        from pypdf import PdfReader
    except ImportError:
        raise ConfigError(
            f"{path} is a PDF: reading PDFs needs pypdf; install it with: pip install 'ragmeter[docs]'"
        ) from None
    try:
        reader = PdfReader(str(path))
        pages = [page.extract_text() or "" for page in reader.pages]
        title = ""
        meta = reader.metadata
        if meta is not None and meta.title:
            title = str(meta.title)
    except Exception as e:  # pypdf raises many kinds of errors on broken files
        raise DatasetError(f"cannot read the PDF: {type(e).__name__}: {e}", file=str(path)) from None
    return title.strip(), "\n\n".join(p.strip() for p in pages if p.strip())


def _title_from_text(text: str, suffix: str) -> str:
    if suffix in (".md", ".markdown"):
        m = re.search(r"^#\s+(.+?)\s*#*\s*$", text, flags=re.MULTILINE)
        if m:
            return m.group(1).strip()
    lines = text.strip().splitlines()
    if len(lines) >= 2 and 0 < len(lines[0].strip()) <= 120 and not lines[1].strip():
        return lines[0].strip().lstrip("#").strip()
    return ""


def _load_file(path: Path, doc_id: str) -> Document:
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        title, text = _read_pdf(path)
    elif suffix in (".html", ".htm"):
        title, text = html_to_text(_read_text(path))
    else:
        text = _read_text(path)
        title = _title_from_text(text, suffix)
    text = text.replace("\r\n", "\n").strip()
    return Document(
        id=doc_id,
        text=text,
        title=title or path.stem.replace("_", " ").replace("-", " "),
        source=str(path),
        lang=detect_lang(text) if text else "en",
    )


def _doc_id(path: Path, root: Path | None) -> str:
    rel = path.relative_to(root) if root is not None else Path(path.name)
    return rel.with_suffix("").as_posix()


def load_documents(paths: str | Path | Iterable[str | Path], *, recursive: bool = True) -> list[Document]:
    """Documents from files and folders (folders: every supported file inside, sorted by path).

    Empty documents are dropped. Raises :class:`DatasetError` when nothing usable is found.
    """
    items: Sequence[str | Path] = [paths] if isinstance(paths, (str, Path)) else list(paths)
    docs: list[Document] = []
    seen: set[str] = set()
    for item in items:
        p = Path(item)
        if p.is_dir():
            pattern = "**/*" if recursive else "*"
            files = sorted(
                f for f in p.glob(pattern) if f.is_file() and f.suffix.lower() in SUPPORTED_SUFFIXES
            )
            pairs = [(f, _doc_id(f, p)) for f in files]
        elif p.is_file():
            if p.suffix.lower() not in SUPPORTED_SUFFIXES:
                raise ConfigError(
                    f"{p}: unsupported document type {p.suffix!r}; supported: {', '.join(SUPPORTED_SUFFIXES)}"
                )
            pairs = [(p, _doc_id(p, None))]
        else:
            raise DatasetError("no such file or folder", file=str(p))
        for f, doc_id in pairs:
            unique = doc_id
            n = 2
            while unique in seen:  # same stem, different extension
                unique = f"{doc_id}.{f.suffix.lstrip('.').lower()}" if n == 2 else f"{doc_id}~{n}"
                n += 1
            seen.add(unique)
            doc = _load_file(f, unique)
            if doc.text:
                docs.append(doc)
    if not docs:
        raise DatasetError(
            f"no document with text found (looked for {', '.join(SUPPORTED_SUFFIXES)})",
            file=", ".join(str(i) for i in items),
        )
    return docs

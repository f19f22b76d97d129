"""Training data of the entailment verifier: the shared NLI pairs plus synthetic pairs.

Used by ``scripts/train_verifier.py``; deterministic for a given seed.

- **NLI pairs** (``data/nli/pairs_en.jsonl.gz``, see its README for sources and licences),
  with the skewed sources capped: Breaking NLI (mostly contradiction), HELP and ConjNLI (synthetic
  or adversarial). The rows kept of a capped source are a seeded random sample.
- **Synthetic pairs made from the premises** (FactCC-style, Kryscinski et al. 2020): a premise
  sentence is the evidence, and the hypothesis is

  - entailed: the sentence copied, or lightly reduced (a bracketed aside, an appositive or a
    trailing clause after the last comma removed);
  - not entailed: the sentence with a number, a year or month, or a capitalised name swapped
    (for one from another premise), two names exchanged (who did what), the negation flipped,
    or an unsupported clause added (a year, a cause, an attribution).

  A third of the synthetic premises get an unrelated sentence before or after them, so the model
  also sees evidence inside a short passage, as the local judge gives it (a sentence and its
  neighbours).

Splits are by premise (a salted hash of the normalised premise), so no premise of the validation
or test split is seen in training, not even through a synthetic pair made from it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

SPLIT_SALT = "ragmeter-verifier-v1"
VALID_SHARE = 0.03
TEST_SHARE = 0.04
# Skewed or synthetic sources are capped, and so are the big caption-style SNLI sets and QNLI (whose
# hypotheses are questions), so that the CPU training budget goes to text that looks like the task.
DEFAULT_CAPS = {
    "breaking_nli": 1500,
    "help_partial": 1500,
    "conjnli": 3000,
    "snli_dev": 4000,
    "snli_test": 4000,
    "snli_counterfactual": 4000,
    "qnli_dev": 2000,
    "med": 2500,
}
# sources whose premises are natural, well-formed sentences (synthetic pairs are made from them)
SYNTH_SOURCES = ("mnli_dev_m+mm", "qnli_dev", "scitail_test", "wice_oracle", "conjnli", "taxinli(MNLI")

_MONTHS = "January February March April May June July August September October November December".split()
_MONTH_RE = re.compile(r"\b(" + "|".join(_MONTHS) + r")\b")
_YEAR_RE = re.compile(r"\b(1[5-9]\d\d|20[0-4]\d)\b")
_NUM_RE = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])")
_NUM_WORDS = "two three four five six seven eight nine ten twelve twenty hundred thousand million".split()
_NUM_WORD_RE = re.compile(r"\b(" + "|".join(_NUM_WORDS) + r")\b")
_AUX_RE = re.compile(r"\b(is|are|was|were|can|will|would|could|should|has|have|had|does|did|do|must)\b")
_NEG_RE = re.compile(
    r"\b(is|are|was|were|can|will|would|could|should|has|have|had|does|did|do|must) not\b"
    r"|\b(is|are|was|were|ca|wo|would|could|should|has|have|had|does|did|do|must)n['’]t\b"
)
_NAME_RE = re.compile(r"(?<=[a-z,;] )[A-Z][a-z]+(?: [A-Z][a-z]+)*")
_BRACKET_RE = re.compile(r"\s*\([^()]{2,80}\)")
_APPOSITIVE_RE = re.compile(r", (?:which|who|whose|where)\b[^,]{3,80},")
_SUBORDINATE_RE = re.compile(
    r"(?:when|if|although|though|while|as|because|since|after|before|unless|once|whether|until)\b", re.I
)
_CAUSES = (
    "because of a shortage of money",
    "after a long public debate",
    "despite strong opposition",
    "for the first time",
    "in response to criticism",
    "as part of a larger plan",
)


@dataclass(frozen=True)
class Pair:
    premise: str
    hypothesis: str
    entail: int
    source: str
    group: str = ""  # the premise the pair was made from (its split follows that premise)

    @property
    def split(self) -> str:
        return split_of(self.group or self.premise)


def split_of(premise: str) -> str:
    """'train', 'valid' or 'test' by a salted hash of the normalised premise."""
    key = " ".join(premise.lower().split())
    h = int.from_bytes(hashlib.sha256(f"{SPLIT_SALT}:{key}".encode()).digest()[:4], "big") / 2**32
    if h < VALID_SHARE:
        return "valid"
    if h < VALID_SHARE + TEST_SHARE:
        return "test"
    return "train"


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_nli(path: Path, caps: dict[str, int], rng: random.Random) -> list[Pair]:
    by_source: dict[str, list[Pair]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                pair = Pair(str(r["premise"]), str(r["hypothesis"]), int(r["entail"]), str(r["source"]))
            except (KeyError, TypeError, ValueError) as exc:
                raise SystemExit(f"{path}: row {lineno}: {exc}") from exc
            by_source.setdefault(pair.source, []).append(pair)
    out: list[Pair] = []
    for source in sorted(by_source):
        rows = by_source[source]
        cap = next((c for prefix, c in caps.items() if source.startswith(prefix)), None)
        if cap is not None and len(rows) > cap:
            rows = rng.sample(rows, cap)
        out.extend(rows)
    return out


# ---------------------------------------------------------------------------- perturbations


def _swap_number(s: str, rng: random.Random, names: list[str]) -> str | None:
    m = _NUM_RE.search(s)
    if m:
        raw = m.group(1).replace(",", "")
        if "." in raw:
            new = f"{float(raw) * rng.choice([0.5, 1.5, 2.0, 3.0]):.{len(raw.split('.')[1])}f}"
        else:
            n = int(raw)
            new = str(n + rng.choice([1, 2, 3, 5, 10]) if n < 20 else int(n * rng.choice([0.5, 0.7, 1.3, 2])))
        if new != raw:
            return s[: m.start()] + new + s[m.end() :]
    w = _NUM_WORD_RE.search(s)
    if w:
        other = rng.choice([x for x in _NUM_WORDS if x != w.group(1)])
        return s[: w.start()] + other + s[w.end() :]
    return None


def _swap_date(s: str, rng: random.Random, names: list[str]) -> str | None:
    m = _YEAR_RE.search(s)
    if m:
        year = int(m.group(1)) + rng.choice([-12, -5, -3, -1, 1, 2, 4, 9])
        return s[: m.start()] + str(year) + s[m.end() :]
    mm = _MONTH_RE.search(s)
    if mm:
        other = rng.choice([x for x in _MONTHS if x != mm.group(1)])
        return s[: mm.start()] + other + s[mm.end() :]
    return None


def _swap_name(s: str, rng: random.Random, names: list[str]) -> str | None:
    found = list(_NAME_RE.finditer(s))
    if not found or not names:
        return None
    m = rng.choice(found)
    other = rng.choice(names)
    if other.lower() in s.lower():
        return None
    return s[: m.start()] + other + s[m.end() :]


def _exchange_names(s: str, rng: random.Random, names: list[str]) -> str | None:
    found = [m for m in _NAME_RE.finditer(s)]
    distinct = {m.group(0) for m in found}
    if len(found) != 2 or len(distinct) != 2:
        return None
    a, b = found
    return s[: a.start()] + b.group(0) + s[a.end() : b.start()] + a.group(0) + s[b.end() :]


def _flip_negation(s: str, rng: random.Random, names: list[str]) -> str | None:
    m = _NEG_RE.search(s)
    if m:
        aux = m.group(1) or {"ca": "can", "wo": "will"}.get(m.group(2), m.group(2))
        return s[: m.start()] + aux + s[m.end() :]
    if re.search(r"\bnever\b", s):
        return re.sub(r"\bnever\b", "always", s, count=1)
    a = _AUX_RE.search(s)
    if a:
        return s[: a.end()] + " not" + s[a.end() :]
    return None


def _add_clause(s: str, rng: random.Random, names: list[str]) -> str | None:
    body = s.rstrip().rstrip(".!")
    if len(body.split()) < 5:
        return None
    kind = rng.randrange(3)
    if kind == 0 and not _YEAR_RE.search(s):
        extra = f" in {rng.randrange(1950, 2024)}"
    elif kind == 1 and names:
        extra = f", according to {rng.choice(names)}"
    else:
        extra = " " + rng.choice(_CAUSES)
    return body + extra + "."


NEGATIVES: dict[str, Callable[[str, random.Random, list[str]], str | None]] = {
    "number": _swap_number,
    "date": _swap_date,
    "name": _swap_name,
    "exchange": _exchange_names,
    "negation": _flip_negation,
    "added_clause": _add_clause,
}


def reduce_sentence(s: str, rng: random.Random) -> str | None:
    """An entailed shorter form: without a bracketed aside, an appositive, or the trailing clause."""
    options: list[str] = []
    if _BRACKET_RE.search(s):
        options.append(_BRACKET_RE.sub("", s, count=1))
    if _APPOSITIVE_RE.search(s):
        options.append(_APPOSITIVE_RE.sub("", s, count=1))
    if ", " in s:
        head = s[: s.rindex(", ")]
        if (
            len(head.split()) >= 6
            and not _SUBORDINATE_RE.match(head)
            and not re.search(r"\b(if|unless|although|but|not|no)\b", s[len(head) :])
        ):
            options.append(head.rstrip(",;") + ".")
    options = [o for o in options if o != s and len(o.split()) >= 5]
    return rng.choice(options) if options else None


def synthetic(pairs: list[Pair], n_premises: int, rng: random.Random) -> list[Pair]:
    """Pairs made from ``n_premises`` distinct natural premises (about 2.2 pairs each)."""
    premises = sorted(
        {
            p.premise.strip()
            for p in pairs
            if p.source.startswith(SYNTH_SOURCES)
            and 8 <= len(p.premise.split()) <= 45
            and "\ufffd" not in p.premise
        }
    )
    names = sorted({m.group(0) for p in premises for m in _NAME_RE.finditer(p)})
    rng.shuffle(premises)
    fillers = premises[n_premises : n_premises + 5000] or premises
    out: list[Pair] = []
    kinds = list(NEGATIVES)
    for prem in premises[:n_premises]:
        made: list[tuple[str, int, str]] = []
        reduced = reduce_sentence(prem, rng)
        if reduced is not None and rng.random() < 0.7:
            made.append((reduced, 1, "synthetic_reduced"))
        else:
            made.append((prem, 1, "synthetic_copy"))
        order = kinds[:]
        rng.shuffle(order)
        negs = 0
        for kind in order:
            hyp = NEGATIVES[kind](prem, rng, names)
            if hyp and hyp != prem:
                made.append((hyp, 0, f"synthetic_{kind}"))
                negs += 1
                if negs == (2 if rng.random() < 0.4 else 1):
                    break
        context = prem
        if rng.random() < 1 / 3:
            filler = rng.choice(fillers)
            context = f"{filler} {prem}" if rng.random() < 0.5 else f"{prem} {filler}"
        out.extend(Pair(context, hyp, y, src, prem) for hyp, y, src in made)
    return out


def composition(pairs: list[Pair]) -> dict[str, dict[str, int]]:
    total = Counter(p.source for p in pairs)
    pos = Counter(p.source for p in pairs if p.entail)
    return {s: {"pairs": total[s], "entailed": pos[s]} for s in sorted(total)}


# -- Chinese and cross-lingual pairs (the multilingual verifier) ---------------------------------
#
# Premises: the graded Chinese sentences of the PyPI package ``hsk-sentences-audio`` (dataset
# CC BY-SA 4.0), each segmented into words and translated into English. From two sentences of one
# topic, A and B, read together as the premise "A B":
#
# - entailed: A copied; A's English translation (a cross-lingual paraphrase, and the other way
#   round: the English premise, the Chinese A);
# - not entailed: A with a word of B in the place of one of its words (a filler from the same
#   context, the in-context swap), A with its negation removed or a number changed, and the
#   translation of a third sentence of the topic (a statement the premise does not make).

_ZH_FUNCTION_WORDS = frozenset(
    "的 了 是 在 和 与 也 就 都 很 吗 呢 吧 啊 着 过 把 被 从 到 对 给 让 这 那 这个 那个 一个 我 你 他 她 它 我们 你们 他们 "
    "她们 不 没 没有 别 要 会 能 可以 有 还 又 再 才 只 得 地".split()
)
_ZH_NUM_RE = re.compile(r"\d+|[一二两三四五六七八九十百千万]+")
_ZH_NEG_RE = re.compile(r"不|没有|没")
_ZH_NUMBERS = "一二三四五六七八九十"


def _content_words(tokens: list[str]) -> list[int]:
    return [
        i
        for i, w in enumerate(tokens)
        if len(w) >= 2 and w not in _ZH_FUNCTION_WORDS and not _ZH_NUM_RE.fullmatch(w)
    ]


def chinese_pairs(sentences: list[dict[str, object]], rng: random.Random) -> list[Pair]:
    """Pairs from the ``hsk-sentences-audio`` records (``chinese``, ``translation.en``, ``tokens``,
    ``topic``; statements only): about five per sentence, as in the comment above."""
    rows = [
        s
        for s in sentences
        if s.get("sentence_type") == "statement"
        and isinstance(s.get("translation"), dict)
        and s.get("tokens")
    ]
    by_topic: dict[str, list[dict[str, object]]] = {}
    for s in rows:
        by_topic.setdefault(str(s.get("topic", "")), []).append(s)
    out: list[Pair] = []
    for topic in sorted(by_topic):
        group = by_topic[topic]
        if len(group) < 3:
            continue
        for a in group:
            b, c = rng.sample([s for s in group if s is not a], 2)
            zh_a, zh_b = str(a["chinese"]), str(b["chinese"])
            en_a = str(a["translation"]["en"])  # type: ignore[index]
            en_b = str(b["translation"]["en"])  # type: ignore[index]
            en_c = str(c["translation"]["en"])  # type: ignore[index]
            words_a = [str(t["word"]) for t in a["tokens"]]  # type: ignore[union-attr]
            words_b = [str(t["word"]) for t in b["tokens"]]  # type: ignore[union-attr]
            premise = f"{zh_a}{zh_b}" if rng.random() < 0.5 else f"{zh_b}{zh_a}"
            made: list[tuple[str, str, int, str]] = [
                (premise, zh_a, 1, "zh_copy"),
                (premise, en_a, 1, "zh_en_translation"),
                (f"{en_a} {en_b}", zh_a, 1, "en_zh_translation"),
                (premise, en_c, 0, "zh_en_other"),
            ]
            mine, theirs = (
                _content_words(words_a),
                [w for i, w in enumerate(words_b) if i in _content_words(words_b)],
            )
            theirs = [w for w in theirs if w not in zh_a]
            if mine and theirs:
                i = rng.choice(mine)
                swapped = "".join([*words_a[:i], rng.choice(theirs), *words_a[i + 1 :]])
                if swapped != zh_a:
                    made.append((premise, swapped, 0, "zh_swap_in_context"))
            if _ZH_NEG_RE.search(zh_a):
                flipped = _ZH_NEG_RE.sub("", zh_a, count=1)
                if len(flipped) >= 3:
                    made.append((premise, flipped, 0, "zh_negation_removed"))
            m = _ZH_NUM_RE.search(zh_a)
            if m:
                old = m.group(0)
                new = (
                    str(int(old) + rng.randint(1, 9))
                    if old.isdigit()
                    else rng.choice([d for d in _ZH_NUMBERS if d != old[0]]) + old[1:]
                )
                made.append((premise, zh_a[: m.start()] + new + zh_a[m.end() :], 0, "zh_number"))
            out.extend(Pair(p, h, y, f"synthetic_{src}", zh_a) for p, h, y, src in made)
    return out

"""Data input: samples, datasets, column names, validation, sources and labelled judgements.

See docs/data.md for the formats ragmeter reads.
"""

from __future__ import annotations

from ragmeter.dataset.columns import FIELD_ALIASES, MAPPABLE_FIELDS, parse_mapping
from ragmeter.dataset.judgements import (
    ASPECTS,
    Judgement,
    Judgements,
    is_judgement_file,
    load_judgements,
)
from ragmeter.dataset.sample import SAMPLE_FIELDS, Dataset, Sample
from ragmeter.dataset.sources import load_dataset
from ragmeter.dataset.validate import (
    DatasetErrors,
    LoadedDataset,
    require,
    rows_of,
    validate_for,
)

__all__ = [
    "ASPECTS",
    "FIELD_ALIASES",
    "MAPPABLE_FIELDS",
    "SAMPLE_FIELDS",
    "Dataset",
    "DatasetErrors",
    "Judgement",
    "Judgements",
    "LoadedDataset",
    "Sample",
    "is_judgement_file",
    "load_dataset",
    "load_judgements",
    "parse_mapping",
    "require",
    "rows_of",
    "validate_for",
]

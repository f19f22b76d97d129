from __future__ import annotations

import pytest

from ragmeter.errors import ConfigError
from ragmeter.judges import JudgeConfig


def test_defaults_are_valid_and_serialisable() -> None:
    cfg = JudgeConfig()
    d = cfg.to_dict()
    assert d["concurrency"] is None and d["structured"] == "auto" and d["max_retries"] == 6
    assert JudgeConfig.from_dict(d) == cfg


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"concurrency": 0}, "concurrency"),
        ({"concurrency": True}, "concurrency"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"max_retries": -1}, "max_retries"),
        ({"backoff_base_s": 5, "backoff_max_s": 1}, "backoff_max_s"),
        ({"rpm": 0}, "rpm"),
        ({"tpm": 1.5}, "tpm"),
        ({"temperature": 3}, "temperature"),
        ({"temperature": float("nan")}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"structured": "xml"}, "structured"),
        ({"prompt_price_per_1k": -1}, "prompt_price_per_1k"),
        ({"seed": "1"}, "seed"),
    ],
)
def test_invalid_fields_raise_config_error(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        JudgeConfig(**kwargs)


def test_several_problems_are_reported_together() -> None:
    with pytest.raises(ConfigError, match=r"concurrency.*timeout_s"):
        JudgeConfig(concurrency=0, timeout_s=-1)


def test_unknown_field_in_from_dict() -> None:
    with pytest.raises(ConfigError, match="concurency"):
        JudgeConfig.from_dict({"concurency": 3})


def test_cost() -> None:
    assert JudgeConfig().cost(1000, 1000) is None
    cfg = JudgeConfig(prompt_price_per_1k=0.15, completion_price_per_1k=0.6)
    assert cfg.cost(2000, 500) == pytest.approx(0.3 + 0.3)
    assert JudgeConfig(completion_price_per_1k=1.0).cost(5000, 1000) == pytest.approx(1.0)

from __future__ import annotations

import pytest

from ragmeter.errors import JudgeOutputError
from ragmeter.judges.parsing import SchemaError, parse_json, validate

CLAIMS = {
    "type": "object",
    "properties": {"claims": {"type": "array", "items": {"type": "string"}}},
    "required": ["claims"],
}
VERDICTS = {
    "type": "object",
    "properties": {
        "verdicts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "index": {"type": "integer"},
                    "supported": {"type": "boolean"},
                    "reason": {"type": "string"},
                },
                "required": ["index", "supported", "reason"],
            },
        }
    },
    "required": ["verdicts"],
}


def test_plain_json() -> None:
    assert parse_json('{"claims": ["a", "b"]}') == {"claims": ["a", "b"]}


def test_code_fence_with_language_tag() -> None:
    reply = 'Here you go:\n```json\n{"claims": ["x"]}\n```\nHope that helps.'
    assert parse_json(reply, CLAIMS) == {"claims": ["x"]}


def test_unterminated_fence() -> None:
    assert parse_json('```json\n{"claims": ["x"]}', CLAIMS) == {"claims": ["x"]}


def test_prose_around_and_citation_before_object_is_skipped_with_schema() -> None:
    reply = 'According to [1], the answer is: {"claims": ["Paris is in France."]} — done.'
    assert parse_json(reply, CLAIMS) == {"claims": ["Paris is in France."]}
    # without a schema the first JSON value wins
    assert parse_json(reply) == [1]


def test_trailing_commas() -> None:
    assert parse_json('{"claims": ["a", "b",],}', CLAIMS) == {"claims": ["a", "b"]}


def test_single_quotes_and_python_literals() -> None:
    reply = "{'verdicts': [{'index': 1, 'supported': True, 'reason': None}]}"
    got = parse_json(reply)
    assert got == {"verdicts": [{"index": 1, "supported": True, "reason": None}]}


def test_single_quoted_string_containing_double_quote() -> None:
    assert parse_json("{'claims': ['He said \"hi\".']}", CLAIMS) == {"claims": ['He said "hi".']}


def test_apostrophes_inside_double_quoted_strings_are_untouched() -> None:
    reply = 'Sure, here\'s the JSON: {"claims": ["It\'s John\'s car.", "True story"]}'
    assert parse_json(reply, CLAIMS) == {"claims": ["It's John's car.", "True story"]}


def test_think_block_is_removed() -> None:
    reply = '<think>the user wants {"claims": []} maybe</think>\n{"claims": ["real"]}'
    assert parse_json(reply, CLAIMS) == {"claims": ["real"]}


def test_coercions_yes_no_and_string_numbers() -> None:
    reply = (
        '{"verdicts": [{"index": "2", "supported": "yes", "reason": "ok"},'
        ' {"index": 1.0, "supported": "No", "reason": 3}]}'
    )
    got = parse_json(reply, VERDICTS)
    assert got["verdicts"][0] == {"index": 2, "supported": True, "reason": "ok"}
    assert got["verdicts"][1] == {"index": 1, "supported": False, "reason": "3"}


def test_bare_array_is_wrapped_when_schema_has_one_array_property() -> None:
    assert parse_json('["a", "b"]', CLAIMS) == {"claims": ["a", "b"]}


def test_empty_reply_raises_with_raw() -> None:
    with pytest.raises(JudgeOutputError) as ei:
        parse_json("   ")
    assert ei.value.raw == "   "


def test_no_json_raises_with_raw() -> None:
    reply = "I think the answer is mostly faithful."
    with pytest.raises(JudgeOutputError, match="no JSON found") as ei:
        parse_json(reply, CLAIMS)
    assert ei.value.raw == reply


def test_schema_mismatch_names_the_path() -> None:
    reply = '{"verdicts": [{"index": 1, "supported": "perhaps", "reason": "x"}]}'
    with pytest.raises(JudgeOutputError, match=r"\$\.verdicts\[0\]\.supported") as ei:
        parse_json(reply, VERDICTS)
    assert ei.value.raw == reply


def test_missing_required_key_and_optional_keys() -> None:
    value = {"verdicts": [{"supported": True}]}
    with pytest.raises(SchemaError, match="missing required key 'index'"):
        validate(value, VERDICTS)
    assert validate(value, VERDICTS, optional={"index", "reason"}) == value
    # an optional key may also be null
    nulls = {"verdicts": [{"supported": True, "index": None, "reason": None}]}
    assert validate(nulls, VERDICTS, optional={"index", "reason"}) == nulls


def test_enum_and_item_counts() -> None:
    schema = {"type": "array", "items": {"type": "integer", "enum": [0, 1]}, "minItems": 1, "maxItems": 2}
    assert validate([True, 0], schema) == [1, 0]
    with pytest.raises(SchemaError, match="not one of"):
        validate([2], schema)
    with pytest.raises(SchemaError, match="at least 1"):
        validate([], schema)
    with pytest.raises(SchemaError, match="at most 2"):
        validate([0, 1, 0], schema)


def test_unknown_keys_are_kept() -> None:
    assert validate({"claims": [], "note": "x"}, CLAIMS) == {"claims": [], "note": "x"}


def test_nested_braces_inside_strings() -> None:
    reply = 'Result: {"claims": ["Use {x} and [y] carefully.", "a}b"]} end'
    assert parse_json(reply, CLAIMS) == {"claims": ["Use {x} and [y] carefully.", "a}b"]}


def test_raw_newlines_inside_strings_are_accepted() -> None:
    # small models under llama.cpp grammar decoding write raw newlines inside JSON strings
    schema = {"type": "object", "properties": {"claims": {"type": "array", "items": {"type": "string"}}}}
    assert parse_json('{"claims": ["a\nb", "c"]}', schema) == {"claims": ["a\nb", "c"]}

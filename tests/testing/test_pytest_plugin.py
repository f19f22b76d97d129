"""The pytest plugin and assert_rag, run in inner pytest sessions (pytester)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.plugin_sessions import GOOD, INI, TESTS
from helpers.plugin_sessions import session as _session
from helpers.server import FakeOpenAIServer
from ragmeter.dataset.keys import text_key
from ragmeter.run.result import Result

pytest_plugins = ("pytester",)


@pytest.fixture
def inner(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(INI)
    return pytester


def test_pass_fail_message_summary_and_recorded_run(inner: pytest.Pytester, tmp_path: Path) -> None:
    inner.makepyfile(test_rag=TESTS)
    out = tmp_path / "runs"
    res = inner.runpytest("-p", "no:cacheprovider", f"--ragmeter-out={out}")
    res.assert_outcomes(passed=2, failed=1)
    res.stdout.fnmatch_lines(
        [
            "E * AssertionError: ragmeter: 1 of 1 metric(s) below their bound for test_rag.py::test_unfaithful_fails:",
            "E *faithfulness: 0.* < 0.8: 0 of 1 claims supported by the contexts; unsupported: *",
            "E *unsupported claim: The Eiffel Tower was completed in 1920 and is 500 metres tall. (*",
            "*= ragmeter: 3 sample(s) asserted in 3 test(s) =*",
            "metric * n * mean * min * invalid * failed",
            "faithfulness * 3 * 0.* 0.* 0 * 1",
            "answer_relevance * 1 * 0.* 0.* 0 * 0",
            "FAILED test_rag.py::test_unfaithful_fails: faithfulness",
            "ragmeter: session recorded as run * in *",
        ]
    )
    assert "ragmeter/testing.py" not in res.stdout.str()  # the internals are hidden from the traceback
    result = Result.from_store(out, "latest")
    assert result.meta["source"] == "pytest session" and result.n_samples == 3
    assert [s.id for _, s in result.samples] == [
        "test_rag.py::test_ragas_names_pass",
        "height",
        "test_rag.py::test_unfaithful_fails",
    ]
    assert result.keys == {
        0: text_key("When was the Eiffel Tower built?", None),
        1: "id:height",
        2: text_key("Who built the Eiffel Tower?", None),
    }
    s = result.summary()
    assert s["faithfulness"].n_scored == 3 and s["answer_relevance"].n_scored == 1
    assert result.score(2, "faithfulness").value < 0.8  # type: ignore[union-attr,operator]


def test_sessions_without_assert_rag_are_untouched(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        test_plain="""
        import sys

        def test_nothing_of_ragmeter_is_loaded():
            assert "pytest_ragmeter" in sys.modules
            assert "ragmeter" not in sys.modules and "numpy" not in sys.modules
        """
    )
    res = inner.runpytest_subprocess("-p", "no:cacheprovider", "-W", "error")
    res.assert_outcomes(passed=1)
    assert "ragmeter:" not in res.stdout.str()


def test_base_url_without_judge_is_a_usage_error(inner: pytest.Pytester) -> None:
    inner.makepyfile(test_x="def test_x():\n    pass\n")
    res = inner.runpytest("--ragmeter-base-url", "http://127.0.0.1:9/v1")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--ragmeter-base-url needs --ragmeter-judge*"])


def test_bad_bounds_and_missing_fields_are_errors_not_failures(inner: pytest.Pytester) -> None:
    inner.makepyfile(
        test_err="""
        import pytest
        from ragmeter import ConfigError, DatasetError
        from ragmeter.testing import assert_rag

        def test_errors():
            with pytest.raises(ConfigError, match="dict of metric bounds"):
                assert_rag({"question": "q", "answer": "a"}, {})
            with pytest.raises(ConfigError, match="must be a number"):
                assert_rag({"question": "q", "answer": "a"}, {"faithfulness": "high"})
            with pytest.raises(DatasetError):
                assert_rag({"question": "q", "answer": "a"}, {"faithfulness": 0.5})  # no contexts
            with pytest.raises(ConfigError, match="unknown metric"):
                assert_rag({"question": "q", "contexts": ["c"], "answer": "a"}, {"nope": 0.5})
        """
    )
    inner.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_llm_judge_is_built_once_and_shares_its_cache(inner: pytest.Pytester, tmp_path: Path) -> None:
    sample = {
        "question": "How tall is the Eiffel Tower?",
        "contexts": ["It is 330 metres tall."],
        "answer": "330 m.",
    }
    body = f"from ragmeter.testing import assert_rag\nSAMPLE = {json.dumps(sample)}\n"
    one = body + "def test_one():\n    assert_rag(SAMPLE, {'faithfulness': 0.0})\n"
    two = one + "def test_two():\n    assert_rag(SAMPLE, {'faithfulness': 0.0})\n"
    server = FakeOpenAIServer()
    server.start()
    try:
        # "--opt=value": pytest reads a separate path-like value as a path when it looks for its ini file
        args = [
            "-p",
            "no:cacheprovider",
            "--ragmeter-judge=openai-compatible:m",
            f"--ragmeter-base-url={server.url}",
        ]
        inner.makepyfile(test_one=one)
        inner.runpytest(*args, f"--ragmeter-out={tmp_path / 'a'}").assert_outcomes(passed=1)
        single = server.total_requests
        assert single > 0
        (inner.path / "test_one.py").unlink()
        inner.makepyfile(test_two=two)
        inner.runpytest(*args, f"--ragmeter-out={tmp_path / 'b'}").assert_outcomes(passed=2)
        assert server.total_requests == 2 * single  # the second test of the session sent nothing new
        assert (tmp_path / "b" / "llm-cache.sqlite").exists()
        inner.runpytest(*args, f"--ragmeter-out={tmp_path / 'b'}").assert_outcomes(passed=2)
        assert server.total_requests == 2 * single  # a new session reads the same cache file
    finally:
        server.stop()
    result = Result.from_store(tmp_path / "b", "latest")
    assert result.meta["judge"]["name"] == "openai-compatible:m" and result.n_samples == 2


def test_session_check_reads_ragas_objects() -> None:
    """RagTestSession directly (not the outer session, so this suite prints no ragmeter table)."""
    from pydantic import BaseModel

    from ragmeter.testing import RagTestSession

    class SingleTurnSample(BaseModel):  # the shape of a Ragas SingleTurnSample
        user_input: str
        retrieved_contexts: list[str]
        response: str

    session = RagTestSession()
    try:
        ok = SingleTurnSample(
            user_input="How tall is the Eiffel Tower?",
            retrieved_contexts=["The Eiffel Tower is about 330 metres tall."],
            response="It is about 330 metres tall.",
        )
        result = session.check(ok, {"faithfulness": 0.5})
        assert result.summary()["faithfulness"].mean > 0.5  # type: ignore[operator]
        with pytest.raises(AssertionError, match=r"faithfulness: 0\.\d+ < 0\.99"):
            session.check(
                ok.model_dump() | {"response": "It is 900 metres tall and made of gold."},
                {"faithfulness": 0.99},
            )
        assert [r.failed for r in session.records] == [(), ("faithfulness",)]
    finally:
        session.close()


def test_baseline_comparison_in_the_session_summary(inner: pytest.Pytester, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    _session(inner, out, GOOD).assert_outcomes(passed=3)
    baseline = Result.from_store(out, "latest").run_id

    # the same answers: no regression, exit 0
    res = _session(inner, out, GOOD, "--ragmeter-baseline", baseline)
    res.assert_outcomes(passed=3)
    assert res.ret == pytest.ExitCode.OK
    res.stdout.fnmatch_lines(
        [
            f"ragmeter: this session against baseline {baseline}: 3 matched sample(s), 0 only in the baseline, 0 only*",
            "metric * B - A * 95% CI * newly invalid/valid  verdict",
            "faithfulness * 0/0  no change",
        ]
    )

    # one answer turned into "I don't know.": its test fails (invalid), and the summary calls it a regression
    res = _session(inner, out, [GOOD[0], "I don't know.", GOOD[2]], "--ragmeter-baseline", baseline)
    res.assert_outcomes(passed=2, failed=1)
    res.stdout.fnmatch_lines(
        [
            "faithfulness * 1/0  worse",
            f"ragmeter: REGRESSION against baseline {baseline} (margin 0, at most 0 newly invalid): faithfulness; *",
        ]
    )
    res = _session(
        inner,
        out,
        [GOOD[0], "I don't know.", GOOD[2]],
        "--ragmeter-baseline",
        baseline,
        "--ragmeter-max-new-invalid=1",
    )
    res.stdout.fnmatch_lines(["faithfulness * 1/0  no clear change"])
    assert "REGRESSION" not in res.stdout.str()

    # every test passes its bound, but the session is clearly worse than the baseline: exit 1
    wrong = [
        "The Eiffel Tower was completed in 1925 in London.",
        "The Eiffel Tower is 900 metres tall and made of glass.",
        "Leonardo da Vinci painted the tower in 1503.",
    ]
    res = _session(inner, out, wrong, "--ragmeter-baseline", baseline)
    res.assert_outcomes(passed=3)
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(
        ["faithfulness * 0/0  worse", "ragmeter: REGRESSION against baseline *: faithfulness; *"]
    )
    # --ragmeter-margin loosens the paired part as compare --margin does
    res = _session(inner, out, wrong, "--ragmeter-baseline", baseline, "--ragmeter-margin=2")
    assert res.ret == pytest.ExitCode.OK


def test_baseline_options_are_checked(inner: pytest.Pytester, tmp_path: Path) -> None:
    inner.makepyfile(test_x="def test_x():\n    pass\n")
    res = inner.runpytest("--ragmeter-baseline", "main")
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    res.stderr.fnmatch_lines(["*--ragmeter-baseline needs --ragmeter-out*"])
    res = inner.runpytest(
        f"--ragmeter-out={tmp_path}", "--ragmeter-baseline", "main", "--ragmeter-max-new-invalid=-1"
    )
    assert res.ret == pytest.ExitCode.USAGE_ERROR
    # a baseline that is not in the store: the session fails and says why
    res = _session(inner, tmp_path / "empty", GOOD, "--ragmeter-baseline", "nope")
    res.assert_outcomes(passed=4)  # test_x.py and the three of test_rag.py
    assert res.ret == pytest.ExitCode.TESTS_FAILED
    res.stdout.fnmatch_lines(["ragmeter: could not compare the session with its baseline in *: *nope*"])

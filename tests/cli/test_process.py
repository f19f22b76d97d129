"""The ``ragmeter`` program as a process: exit status, output, and what it loads before working."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_samples.jsonl"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "0"}
    return subprocess.run(
        [sys.executable, "-m", "ragmeter", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )


def test_the_exit_status_is_the_commands(tmp_path: Path) -> None:
    ok = run("--version", cwd=tmp_path)
    assert ok.returncode == 0 and "ragmeter" in ok.stdout
    usage = run("no-such-command", cwd=tmp_path)
    assert usage.returncode == 2 and "No such command" in usage.stderr
    missing = run("evaluate", str(tmp_path / "missing.jsonl"), cwd=tmp_path)
    assert missing.returncode == 2 and "missing.jsonl" in missing.stderr
    gated = run(
        "evaluate",
        str(EXAMPLE),
        "--metrics",
        "token_f1",
        "--fail-under",
        "token_f1=0.99",
        "--out",
        str(tmp_path / "r"),
        cwd=tmp_path,
    )
    assert gated.returncode == 1, gated.stderr  # a failed gate


def test_all_output_is_written_before_the_process_ends(tmp_path: Path) -> None:
    # the process leaves without interpreter teardown: what it printed must all be there, as the
    # same command prints it in-process
    from click.testing import CliRunner

    from ragmeter.cli.main import cli

    for args in (["metrics"], ["metrics", "--lang", "zh", "--aliases"]):
        res = run(*args, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        inproc = CliRunner().invoke(cli, args, terminal_width=80)
        assert inproc.exit_code == 0
        assert len(res.stdout) > 1000 and res.stdout.splitlines()[-1] == inproc.output.splitlines()[-1]
        assert len(res.stdout.splitlines()) == len(inproc.output.splitlines())
    report = run(
        "evaluate",
        str(EXAMPLE),
        "--metrics",
        "token_f1,rouge_l",
        "--json",
        "--out",
        str(tmp_path / "r"),
        cwd=tmp_path,
    )
    assert report.returncode == 0, report.stderr
    assert set(json.loads(report.stdout)["metrics"]) == {"token_f1", "rouge_l"}


def test_numpy_is_not_loaded_before_the_first_request() -> None:
    # With an LLM judge, NumPy (50-90 ms to import) is needed only once replies are in: the modules
    # on the way to the first request must not import it (docs/performance.md, start-up).
    code = (
        "import sys\n"
        "import ragmeter.cli.main, ragmeter.run.runner, ragmeter.run.executor, ragmeter.log.store\n"
        "import ragmeter.judges.llm, ragmeter.judges.providers.openai_compat, ragmeter.judges.providers.http\n"
        "import ragmeter.judges.providers.aiohttp_client, ragmeter.metrics.faithfulness\n"
        "import ragmeter.metrics.answer_relevance, ragmeter.metrics.context\n"
        "from ragmeter.judges.factory import make_judge\n"
        "make_judge('openai-compatible:m', base_url='http://127.0.0.1:9/v1')\n"
        "print(sorted(m for m in sys.modules if m == 'numpy' or m.startswith('numpy.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OPENAI_API_KEY": "x"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_aiohttp_is_not_loaded_without_a_remote_judge() -> None:
    # aiohttp (70-120 ms of CPU to import) is for the judge's requests: the local judge, judge-free
    # runs and the commands that read records do not pay for it.
    code = (
        "import sys\n"
        "import ragmeter.cli.main, ragmeter.run.runner, ragmeter.run.executor, ragmeter.log.store\n"
        "import ragmeter.judges.llm, ragmeter.judges.providers.openai_compat, ragmeter.metrics.faithfulness\n"
        "from ragmeter.judges.factory import make_judge\n"
        "make_judge(None)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('aiohttp', 'yarl', 'multidict')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_run_whose_environment_names_a_proxy_sends_every_judge_request_through_it(tmp_path: Path) -> None:
    # The HTTP client takes the proxy from the process's environment (HTTP_PROXY; NO_PROXY unset),
    # as curl, requests and httpx do: every request of the run reaches the server by way of it.
    from helpers.proxy import ForwardProxy
    from helpers.server import FakeOpenAIServer

    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "http_proxy", "all_proxy")}
    with FakeOpenAIServer() as server, ForwardProxy() as proxy:
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "ragmeter",
                "evaluate",
                str(EXAMPLE),
                "--judge",
                "openai-compatible:fake-model",
                "--base-url",
                server.url,
                "--api-key-env",
                "JUDGE_KEY",
                "--metrics",
                "faithfulness,context_precision",
                "--no-cache",
                "--no-progress",
                "--json",
                "--out",
                str(tmp_path / "r"),
            ],
            capture_output=True,
            text=True,
            env={**env, "HTTP_PROXY": proxy.url, "JUDGE_KEY": "sk-test"},
            timeout=300,
        )
        assert res.returncode == 0, res.stderr
        metrics = json.loads(res.stdout)["metrics"]
        assert all(m["n_scored"] > 0 and m["n_invalid"] == 0 for m in metrics.values())
        assert server.total_requests > 0 and len(proxy.forwarded) == server.total_requests
        assert {url.rsplit("/", 1)[0] for url in proxy.forwarded} == {server.url + "/chat"}
        assert proxy.not_proxied == [] and server.authorizations == ["Bearer sk-test"] * server.total_requests


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_the_http_client_is_imported_in_a_thread_once_a_judge_is_made_and_a_fork_waits_for_it() -> None:
    # aiohttp's import (half of it loading certificates, outside the interpreter lock) overlaps the
    # rest of start-up; a fork right after making the judge must not leave the child a module lock
    # that the import thread held (the child would hang importing the client).
    code = (
        "import os, sys\n"
        "from ragmeter.judges.providers import openai_compat as oc\n"
        "assert 'aiohttp' not in sys.modules\n"
        "oc.OpenAICompatibleProvider('m', base_url='http://127.0.0.1:9/v1')\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    import ragmeter.judges.providers.aiohttp_client\n"
        "    os._exit(0)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "assert oc._http_client_import is not None and not oc._http_client_import.is_alive()\n"
        "print(os.waitstatus_to_exitcode(status), 'aiohttp' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "True"]

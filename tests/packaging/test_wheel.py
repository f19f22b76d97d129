"""Build the wheel and the sdist, install the wheel into a fresh virtualenv and run the README's main
job from it: a package-data file (prompts, local-judge weights, the example data, ``py.typed``)
missing from the distribution fails here, before a user meets it.

Slow (a build in an isolated environment plus a virtualenv): ``.ci/run`` runs it explicitly with
``pytest -m slow tests/packaging``. The fresh virtualenv gets the wheel with ``--no-deps``; the
dependencies come from this interpreter's site-packages through a ``.pth`` path line (a plain path:
the ``.pth`` files in it, such as this checkout's editable install, are not processed), so nothing
is downloaded and the ``ragmeter`` imported is the wheel's, which the test checks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "ragmeter"


def _package_data() -> list[str]:
    """Package-relative paths of every tracked non-Python file under src/ragmeter (prompts, weights,
    the example data, the report's assets, ``py.typed``): each must ship in the wheel."""
    listed = subprocess.run(
        ["git", "ls-files", "src/ragmeter"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if listed.returncode == 0 and listed.stdout.strip():
        paths = [ROOT / p for p in listed.stdout.split()]
    else:  # not a git checkout (e.g. an unpacked sdist): every file on disk
        paths = [p for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return sorted(
        "ragmeter/" + p.relative_to(PACKAGE).as_posix() for p in paths if p.suffix not in (".py", ".pyc")
    )


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    # build from a copy of the tracked tree, so a stray local file cannot hide a missing one
    src = tmp_path_factory.mktemp("src") / "ragmeter"
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    for rel in listed.stdout.split():
        target = src / rel
        if (ROOT / rel).is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, target)
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(src)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels = list(out.glob("ragmeter-*.whl"))
    sdists = list(out.glob("ragmeter-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return {"wheel": wheels[0], "sdist": sdists[0]}


def test_wheel_holds_every_package_data_file(dists: dict[str, Path]) -> None:
    with zipfile.ZipFile(dists["wheel"]) as zf:
        names = set(zf.namelist())
    expected = _package_data()
    assert "ragmeter/py.typed" in expected and "ragmeter/examples/rag_samples.jsonl" in expected
    # top-level modules beside the package (the pytest plugin)
    expected += [p.name for p in (ROOT / "src").glob("*.py")]
    missing = [p for p in expected if p not in names]
    assert not missing, f"missing from the wheel: {missing}"
    assert not [n for n in names if n.startswith(("tests/", "bench/"))], "tests or benchmarks in the wheel"
    assert any(n.endswith("entry_points.txt") for n in names)


def test_sdist_holds_package_data_and_no_egg_info_from_git(dists: dict[str, Path]) -> None:
    with tarfile.open(dists["sdist"]) as tf:
        names = tf.getnames()
    top = names[0].split("/")[0]
    rel = {n.split("/", 1)[1] for n in names if "/" in n}
    missing = [p for p in _package_data() if f"src/{p}" not in rel]
    assert not missing, f"missing from the sdist: {missing}"
    assert "pyproject.toml" in rel and "README.md" in rel, top


def _run(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run a command; its stdout, or a failed assertion with the end of its stderr."""
    proc = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, check=False, cwd=cwd, env=env
    )
    assert proc.returncode == 0, f"{args[:3]}: {proc.stderr[-3000:]}"
    return proc.stdout.strip()


def test_wheel_installs_and_runs_the_readme_main_job(dists: dict[str, Path], tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    purelib = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    # the dependencies: this interpreter's site-packages, as a plain path after the venv's own
    Path(purelib, "zz_ragmeter_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(python, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", dists["wheel"])
    where = _run(python, "-c", "import ragmeter; print(ragmeter.__file__)", cwd=tmp_path)
    assert Path(where).is_relative_to(env_dir), f"imported {where}, not the wheel's copy"

    work = tmp_path / "work"
    (work / "examples").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "rag_samples.jsonl", work / "examples" / "rag_samples.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    out = _run(
        bindir / "ragmeter",
        "evaluate",
        "examples/rag_samples.jsonl",
        "--json",
        "--no-progress",
        "--out",
        work / "runs",
        cwd=work,
        env=env,
    )
    summary = json.loads(out)
    assert summary["n_samples"] == 12
    assert summary["metrics"] and all(m["n_scored"] > 0 for m in summary["metrics"].values())
    # the example data shipped inside the package, a prompt file and the report's assets, from the wheel
    code = (
        "from ragmeter.examples import example_path; from ragmeter.judges.prompts import load_prompt;"
        "from ragmeter.run.result import Result; import sys;"
        "print(example_path()); load_prompt('verify_claims', 'zh');"
        "Result.from_store(sys.argv[1], 'latest').to_html(sys.argv[2])"
    )
    shipped = _run(python, "-c", code, work / "runs", work / "report.html", cwd=work, env=env)
    assert Path(shipped).is_relative_to(env_dir)
    assert "<style" in (work / "report.html").read_text(encoding="utf-8")

"""List the tests that CI skipped in every stage that collected them, and fail if there are any.

Each pytest call of ``.ci/run`` writes a JUnit XML report (``PYTEST_ADDOPTS=--junitxml=...``).
A test skipped in one stage for want of a package (the main stage has no torch, no ragas) must pass
in a later stage that installs it; a test that no stage ran is a documented path CI never checked.

Usage: ``python .ci/never_ran.py REPORT.xml [REPORT.xml ...]``; exit status 1 when some test was
skipped everywhere, printing each with the stages' skip reasons.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path


def outcomes(paths: list[Path]) -> tuple[set[str], dict[str, list[str]]]:
    ran: set[str] = set()
    skipped: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        for case in ET.parse(path).getroot().iter("testcase"):
            test = f"{case.get('classname')}::{case.get('name')}"
            skip = case.find("skipped")
            if skip is None:
                ran.add(test)
            else:
                skipped[test].append(f"{path.stem}: {skip.get('message', '')}")
    return ran, skipped


def _module_ran(test: str, ran: set[str]) -> bool:
    """A module skipped whole at collection (``::tests.run.test_ray_engine``: a module-level
    ``importorskip``) counts as run when some test of that module ran in another stage."""
    classname, _, name = test.partition("::")
    if classname:
        return False
    return any(t == name or t.startswith((name + "::", name + ".")) for t in ran)


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv]
    if not paths:
        print("never_ran: no JUnit report given", file=sys.stderr)
        return 2
    ran, skipped = outcomes(paths)
    never = sorted(test for test in set(skipped) - ran if not _module_ran(test, ran))
    for test in never:
        print(f"ci: skipped in every stage: {test}", file=sys.stderr)
        for reason in skipped[test]:
            print(f"    {reason}", file=sys.stderr)
    print(f"ci: {len(ran)} tests ran, {len(never)} skipped in every stage ({len(paths)} reports)")
    return 1 if never else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

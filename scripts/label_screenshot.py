"""The picture of the labelling page in README.md and docs/trust.md (docs/label-screenshot.png).

Scores the shipped example data's faithfulness with the local judge into a fresh run store, serves
it with ``ragmeter view`` on 127.0.0.1 (a free port), opens the run's labelling page in headless
Chromium (tests/helpers/browser.py: Debian's chromium + chromedriver via Selenium), labels the
first samples of the draw by keyboard as examples/rag_labels.jsonl labels them (hand labels of
the 12 samples), and saves the page as it then stands: the next sample, blind.

    python scripts/label_screenshot.py [--output docs/label-screenshot.png] [--lang en|zh] [--labels 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import ragmeter  # noqa: E402
from helpers.browser import Browser, missing_browser  # noqa: E402
from ragmeter.report.server import ViewServer  # noqa: E402

EXAMPLE = ROOT / "examples" / "rag_samples.jsonl"
LABELS = ROOT / "examples" / "rag_labels.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--output", type=Path, default=ROOT / "docs" / "label-screenshot.png")
    ap.add_argument("--lang", default="en")
    ap.add_argument("--labels", type=int, default=3, help="samples labelled before the picture")
    args = ap.parse_args()
    reason = missing_browser()
    if reason is not None:
        sys.exit(f"label_screenshot needs headless Chromium: {reason}")
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.support.ui import WebDriverWait

    hand = {}
    for line in LABELS.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            hand[rec["id"]] = rec["label"]
    with tempfile.TemporaryDirectory() as tmp:
        result = ragmeter.evaluate(
            str(EXAMPLE), ["faithfulness"], None, out=tmp, run_id="example", progress=False
        )
        ids = {idx: sample.id for idx, sample in result.samples}
        server = ViewServer(tmp, port=0)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        b = Browser(width=1280, height=780)
        try:
            b.open(server.url + f"run/example/label?metric=faithfulness&lang={args.lang}")
            for _ in range(args.labels):
                shown = int(b.driver.find_element("id", "sample").get_attribute("data-idx"))
                key = {1: "1", 0: "0", 0.5: "h"}[hand[ids[shown]]]
                ActionChains(b.driver).send_keys(key).perform()
                WebDriverWait(b.driver, 60).until(
                    lambda d: d.execute_script("return document.documentElement.dataset.pending") == "0"
                )
            b.driver.execute_script("document.activeElement && document.activeElement.blur();")
            args.output.write_bytes(b.driver.get_screenshot_as_png())
        finally:
            b.close()
            server.shutdown()
            server.server_close()
            thread.join(10)
    print(f"{args.output}: {args.output.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main()

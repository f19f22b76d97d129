"""Headless Chromium for the page tests: Debian's ``chromium`` and ``chromium-driver`` driven by
Selenium (installed by ``.ci/run``; nothing is downloaded at run time). Tests that need it use the
``browser`` fixture of ``tests/report/conftest.py``, which skips with the reason when the browser
is not installed."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not binary.exists():
            return f"{binary} is not installed (apt-get install chromium chromium-driver; .ci/run does)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


class Browser:
    """One headless Chromium with a fresh profile; ``close()`` removes the profile."""

    def __init__(self, width: int = 1280, height: int = 900) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.mkdtemp(prefix="ragmeter-chromium-")
        opts = webdriver.ChromeOptions()
        opts.binary_location = str(CHROMIUM)
        for flag in (
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            f"--window-size={width},{height}",
            f"--user-data-dir={self.profile}",
        ):
            opts.add_argument(flag)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        try:
            self.driver: Any = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
        except BaseException:
            shutil.rmtree(self.profile, ignore_errors=True)
            raise
        self.driver.set_page_load_timeout(120)
        self.driver.set_script_timeout(120)

    def open(self, url: str) -> None:
        """Load ``url`` and wait until the page's script has built it (``<html data-ready>``)."""
        self.driver.get(url)
        self.wait_ready(url)

    def wait_ready(self, url: str) -> None:
        """Wait until the browser shows ``url`` and its page is built (after a click on a link)."""
        from selenium.webdriver.support.ui import WebDriverWait

        WebDriverWait(self.driver, 120).until(
            lambda d: (
                d.current_url == url
                and d.execute_script("return document.documentElement.dataset.ready === '1'")
            )
        )

    def console_errors(self) -> list[dict[str, Any]]:
        """Console messages of level SEVERE since the last call (CSP violations and uncaught
        exceptions included)."""
        return [e for e in self.driver.get_log("browser") if e.get("level") == "SEVERE"]

    def resources(self) -> list[str]:
        """URLs of every resource the page fetched (scripts, styles, images, fetch/XHR)."""
        return list(
            self.driver.execute_script(
                "return performance.getEntriesByType('resource').map(function (e) { return e.name; })"
            )
        )

    def close(self) -> None:
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

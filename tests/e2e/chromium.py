"""The browser every e2e test drives: Debian's Chromium through Playwright, headless, with nothing that phones home.

The ``browser`` fixture (``tests/e2e/conftest.py``) launches it once per test module."""

from __future__ import annotations

import shutil

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]
MISSING = "Chromium is not installed: install Debian's 'chromium' package (apt-get install chromium)"

"""Fixtures shared by the e2e tests."""

from __future__ import annotations

import pytest

from chromium import CHROMIUM, CHROMIUM_ARGS, MISSING


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module (Playwright)."""
    if CHROMIUM is None:
        pytest.fail(MISSING)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()

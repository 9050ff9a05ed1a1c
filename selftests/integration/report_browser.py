"""Headless Chromium under Selenium, for the self-tests that check a built report really renders.

Allure 3 is a single-page app, so fetching its files proves nothing: the page has to
run. The product never drives a browser, so this lives with the self-tests.

Debian's chromedriver (apt chromium-driver) matches its chromium; it is named
explicitly through Service(executable_path=...), so Selenium Manager never runs
(it would look for, and try to download, a driver over the network).

Networking is pinned to loopback: every host name and IP address but 127.0.0.1
resolves to nothing (Chromium applies the mapping to IP literals too), so a page
can never reach outside the machine.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.wait import WebDriverWait

BROWSER_COMMANDS = ("chromium", "chromedriver")

CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",  # the self-tests run as root, where Chromium refuses to start sandboxed
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-extensions",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)


def missing_browser_commands() -> list[str]:
    """The commands of BROWSER_COMMANDS not on PATH (`make setup` installs them with apt)."""
    return [command for command in BROWSER_COMMANDS if shutil.which(command) is None]


@contextmanager
def headless_chromium(*, window: tuple[int, int] = (1400, 1000), page_load_timeout_s: float = 30.0) -> Iterator[WebDriver]:
    """One headless Chromium with one page, quit on exit (Chromedriver removes its temporary profile)."""
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        raise RuntimeError(f"not on PATH: {', '.join(missing_browser_commands())} (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in CHROMIUM_ARGS:
        options.add_argument(argument)
    options.add_argument(f"--window-size={window[0]},{window[1]}")
    driver = webdriver.Chrome(service=Service(executable_path=chromedriver), options=options)
    try:
        driver.set_page_load_timeout(page_load_timeout_s)
        driver.set_script_timeout(page_load_timeout_s)
        yield driver
    finally:
        driver.quit()


def wait_for(driver: WebDriver, expression: str, timeout_s: float = 20.0, poll_s: float = 0.1) -> Any:
    """Poll the JavaScript `expression` until it is truthy; returns that value.

    While a page loads, `document.body` may not exist yet: an exception counts as "not yet".
    """
    guarded = f"try {{ return ({expression}); }} catch (error) {{ return null; }}"
    return WebDriverWait(driver, timeout_s, poll_frequency=poll_s).until(
        lambda d: d.execute_script(guarded), message=f"still false after {timeout_s:.0f} s: {expression.strip()[:200]}")

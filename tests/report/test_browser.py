"""The generated site in a real browser: headless Chromium over the DevTools Protocol.

Not skipped when Chromium is missing: CI (.ci/run) installs it, so a missing
browser is a broken setup that must show up red.
"""

from __future__ import annotations

import itertools
import json
import urllib.parse
from pathlib import Path

import pytest
from cdp import Chromium, find_chromium

from analyzer.report import build_report

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def site(world, tmp_path_factory: pytest.TempPathFactory) -> Path:
    concepts, sides, _ = world
    out = tmp_path_factory.mktemp("site")
    result = build_report(concepts, sides, out, fmt="html")
    if not result.graphviz:
        pytest.fail("Graphviz `dot` is missing: .ci/run installs it (apt-get install graphviz)")
    return out


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory):
    binary = find_chromium()
    if binary is None:
        pytest.fail("chromium is not installed: .ci/run installs it (apt-get install chromium)")
    chrome = Chromium(binary, tmp_path_factory.mktemp("chromium") / "profile")
    yield chrome
    chrome.close()


def _rects(chrome: Chromium, selector: str) -> list[dict[str, float]]:
    return chrome.eval(
        f"Array.from(document.querySelectorAll({json.dumps(selector)})).map(e => {{"
        " const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, width: r.width}; })"
    )


def test_three_columns_side_by_side_and_highlighted(site: Path, browser: Chromium, capsys) -> None:
    page = site / "concepts" / "continuous-batching.html"
    browser.navigate(page.as_uri())
    cols = _rects(browser, ".columns > section.column")
    assert [c for c in browser.eval("Array.from(document.querySelectorAll('section.column')).map(e => e.dataset.project)")] == [
        "reference", "vllm", "sglang"]
    assert len(cols) == 3
    assert max(c["top"] for c in cols) - min(c["top"] for c in cols) < 2, cols  # one row
    for a, b in itertools.pairwise(cols):
        assert a["right"] <= b["left"], cols  # left to right, no overlap
    assert all(c["width"] > 300 for c in cols), cols
    # Long source lines scroll inside their excerpt; the page itself never scrolls sideways.
    assert browser.eval("document.documentElement.scrollWidth <= document.documentElement.clientWidth")

    # Pygments markup is styled: keywords have their own colour, and line numbers start at the symbol.
    colors = browser.eval(
        "(() => { const pre = document.querySelector('.hl td.code pre'); const k = pre.querySelector('.k');"
        " return [getComputedStyle(pre).color, getComputedStyle(k).color]; })()"
    )
    assert colors[0] != colors[1], colors
    assert browser.eval("document.querySelectorAll('.hl .k').length") >= 4
    vllm_numbers = browser.eval("document.querySelector('#col-vllm .hl .linenos').innerText")
    assert vllm_numbers.split()[0] == "11"  # Scheduler.schedule starts at line 11 of its file

    # Source text and mapping prose are shown as text, never run.
    assert browser.eval("typeof window.pwned") == "undefined"
    assert "<script>window.pwned = 1</script>" in browser.eval("document.body.innerText")
    assert '"a < b && c > d"' in browser.eval("document.querySelector('#col-vllm').innerText")

    # The call path is drawn (Graphviz SVG) and crosses the mapped bridge.
    svg = _rects(browser, "#col-vllm .svg svg")
    assert svg and svg[0]["width"] > 50
    assert "engine core client" in browser.eval("document.querySelector('#col-vllm .svg svg').textContent")
    assert browser.eval("document.querySelectorAll('#col-reference .outside').length") >= 1

    shot = browser.screenshot(site / "continuous-batching.png")
    with capsys.disabled():
        print(f"\nbrowser screenshot: {shot}")
    assert shot.stat().st_size > 10_000


def test_search_and_filter(site: Path, browser: Chromium) -> None:
    browser.navigate((site / "index.html").as_uri())
    visible = "Array.from(document.querySelectorAll('ul.concepts > li')).filter(li => li.offsetParent !== null).map(li => li.id)"
    assert browser.eval(visible) == ["c-continuous-batching", "c-request-entry"]
    browser.type_into("#search", "batching")
    assert browser.eval(visible) == ["c-continuous-batching"]
    assert browser.eval("document.getElementById('shown').textContent") == "1 of 2 concepts"
    browser.type_into("#search", "create_completion")  # a mapped symbol, not in any title
    assert browser.eval(visible) == ["c-request-entry"]
    browser.type_into("#search", "no such words")
    assert browser.eval(visible) == []
    browser.type_into("#search", "")
    browser.eval("(() => { const f = document.getElementById('filter'); f.value = 'gap-vllm';"
                 " f.dispatchEvent(new Event('change')); })()")
    assert browser.eval(visible) == []
    browser.eval("(() => { const f = document.getElementById('filter'); f.value = 'gap-sglang';"
                 " f.dispatchEvent(new Event('change')); })()")
    assert browser.eval(visible) == ["c-continuous-batching", "c-request-entry"]


def test_internal_links_resolve(site: Path, browser: Chromium) -> None:
    pages = [site / "index.html", *sorted((site / "concepts").glob("*.html"))]
    checked = 0
    for page in pages:
        browser.navigate(page.as_uri())
        hrefs = browser.eval("Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
        for href in hrefs:
            if href.startswith(("http://", "https://")):
                continue
            url = urllib.parse.urlparse(href)
            assert url.scheme == "file", href
            target = Path(urllib.parse.unquote(url.path))
            assert target.is_file(), f"{page.name}: broken link {href}"
            browser.navigate(href)
            assert browser.eval("document.title").endswith("Serving Atlas"), href
            if url.fragment:
                assert browser.eval(f"!!document.getElementById({json.dumps(url.fragment)})"), href
            checked += 1
        browser.navigate(page.as_uri())
    assert checked >= 6  # index -> 2 concepts, each concept -> home + related

"""Pages, HTML and Markdown from the fixture world, without a browser."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from analyzer.report import build_report
from analyzer.report.excerpt import make_excerpt
from analyzer.report.graphviz import find_dot, route_dot
from analyzer.report.markdown import code, fence
from analyzer.report.models import ConceptPage


@pytest.fixture(scope="module")
def built(world, tmp_path_factory: pytest.TempPathFactory):
    concepts, sides, _ = world
    out = tmp_path_factory.mktemp("out")
    (out / ".gitkeep").write_text("")
    (out / "concepts").mkdir()
    (out / "concepts" / "removed-concept.html").write_text("stale")
    return build_report(concepts, sides, out, dot=None), out


def _page(result, concept_id: str) -> ConceptPage:
    return next(p for p in result.pages if p.id == concept_id)


def test_files_written_and_stale_pages_removed(built) -> None:
    result, out = built
    names = sorted(p.relative_to(out).as_posix() for p in result.files)
    assert names == ["concepts/continuous-batching.html", "concepts/request-entry.html", "index.html",
                     "md/continuous-batching.md", "md/index.md", "md/request-entry.md"]
    assert not (out / "concepts" / "removed-concept.html").exists()
    assert (out / ".gitkeep").exists()  # the builder only rewrites what it owns


def test_columns_symbols_and_permalinks(built) -> None:
    result, _ = built
    page = _page(result, "continuous-batching")
    assert [c.project for c in page.columns] == ["reference", "vllm", "sglang"]
    ref, vllm, sgl = page.columns
    schedule = vllm.symbols[0]
    assert (schedule.kind, schedule.path, schedule.line, schedule.end_line) == (
        "method", "vllm/v1/core/scheduler.py", 11, 16)
    assert schedule.permalink == "https://github.com/vllm-project/vllm/blob/ced6857af/vllm/v1/core/scheduler.py#L11-L16"
    assert schedule.excerpt is not None and schedule.excerpt.code.startswith("    def schedule(self)")
    # SGLang: the package lives under python/ upstream, and the wheel records no commit.
    cls = sgl.symbols[0]
    assert cls.permalink == ("https://github.com/sgl-project/sglang/blob/v0.5.20/"
                             "python/sglang/srt/managers/scheduler.py#L1-L6")
    assert sgl.source_line.startswith("tag")
    assert not sgl.symbols[1].found and "gone_method" in " ".join(sgl.warnings)
    assert ref.symbols[0].permalink is None  # a local tree has no upstream link
    assert [k.found for k in vllm.knobs] == [True, False, True]
    assert vllm.knobs[0].default == "256" and vllm.knobs[0].permalink.endswith("vllm/engine/arg_utils.py#L42")


def test_call_path_crosses_the_bridge(built) -> None:
    result, _ = built
    vllm = _page(result, "continuous-batching").columns[1]
    (path,) = vllm.paths
    assert path.reached == ["vllm.v1.core.scheduler.Scheduler.add_request"]
    route = path.routes[0]
    assert [(s.callee, s.kind) for s in route] == [
        ("vllm.v1.engine.client.EngineCoreClient.add_request", route[0].kind),
        ("vllm.v1.engine.client.EngineCoreClient.send", route[1].kind),
        ("vllm.v1.engine.core.EngineCore.handle_request", "bridge"),
        ("vllm.v1.core.scheduler.Scheduler.add_request", route[3].kind),
    ]
    assert route[2].site == "zmq: engine core client"
    assert route[0].permalink.endswith("vllm/entrypoints/api.py#L8")
    assert path.svg is None  # built without Graphviz


def test_state_flags_outside_writers(built) -> None:
    result, _ = built
    ref = _page(result, "continuous-batching").columns[0]
    (state,) = ref.state
    assert state.cls == "refeng.scheduler.Scheduler"
    running = next(a for a in state.attrs if a.name == "running")
    assert running.writers[0].function == "refeng.engine.Engine.add_request" and running.writers[0].outside
    assert state.outside_writes == 1
    # The owner's own methods by name; an outside writer in full.
    assert [w.label for w in running.writers] == ["refeng.engine.Engine.add_request", "__init__", "schedule"]


def test_html_escapes_and_states_the_fallback(built) -> None:
    _, out = built
    html = (out / "concepts" / "continuous-batching.html").read_text()
    assert "<script>window.pwned" not in html
    assert "&lt;script&gt;window.pwned = 1&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in html
    assert "a &lt; b &amp;&amp; c &gt; d" in html  # source text through pygments
    assert "<svg" not in html and 'class="path"' in html
    assert "No drawings: drawing was switched off (--no-graphviz), so call paths are shown as numbered lists" in html
    assert 'href="request-entry.html"' in html and 'href="../index.html"' in html
    assert re.search(r"<script>", html) is None  # concept pages carry no script at all
    index = (out / "index.html").read_text()
    assert index.count("<script>") == 1 and 'id="search"' in index


def test_markdown(built) -> None:
    _, out = built
    md = (out / "md" / "continuous-batching.md").read_text()
    assert "\\<script\\>window.pwned" in md
    assert "## vLLM 0.30.0 — implemented" in md and "## SGLang 0.5.20 — partial" in md
    assert "11      def schedule(self) -> list[str]:" in md
    assert "3. crosses zmq: engine core client to `vllm.v1.engine.core.EngineCore.handle_request`" in md
    assert "[Where a request enters](request-entry.md)" in md
    assert "(continuous-batching.md)" in (out / "md" / "index.md").read_text()


def test_excerpt_cut_short_and_fences() -> None:
    lines = [f"x{i} = {i}" for i in range(1, 201)]
    ex = make_excerpt(lines, "m.py", 10, 190, "class")
    assert ex is not None and (ex.first, ex.last, ex.end, ex.truncated) == (10, 49, 190, True)
    assert make_excerpt(lines, "m.py", 300, 310, "function") is None
    assert fence("a = '```'") == "````python\na = '```'\n````"
    assert code("a`b") == "``a`b``"


def test_svg_when_graphviz_present(world, tmp_path: Path) -> None:
    from analyzer.report.graphviz import find_dot

    dot = find_dot()
    if dot is None:
        pytest.fail("Graphviz `dot` is missing: .ci/run installs it (apt-get install graphviz)")
    concepts, sides, _ = world
    result = build_report(concepts, sides, tmp_path, fmt="html", dot=dot)
    svg = _page(result, "continuous-batching").columns[1].paths[0].svg
    assert svg is not None and svg.startswith("<svg") and "<?xml" not in svg
    assert "zmq: engine core client" in svg
    assert not (tmp_path / "md").exists()


def test_related_concept_outside_the_build_is_named_not_linked(world, tmp_path: Path) -> None:
    concepts, sides, _ = world
    only = [c for c in concepts if c.id == "continuous-batching"]
    result = build_report(only, sides, tmp_path, dot=None)
    assert result.pages[0].related == [("request-entry", "request-entry", False)]
    html = (tmp_path / "concepts" / "continuous-batching.html").read_text()
    assert "request-entry.html" not in html
    assert "request-entry.md" not in (tmp_path / "md" / "continuous-batching.md").read_text()


def test_class_entry_point_starts_from_its_methods(world) -> None:
    from analyzer.report.callpath import find_call_path, target_nodes

    _, sides, _ = world
    graph = sides["vllm"].graphs.calls
    targets = target_nodes(graph, ["vllm.v1.core.scheduler.Scheduler.add_request"])
    view = find_call_path(graph, "vllm.v1.engine.core.EngineCore", targets, [])
    assert view.start == "vllm.v1.engine.core.EngineCore" and not view.problem
    assert [(s.caller, s.callee) for s in view.routes[0]] == [
        ("vllm.v1.engine.core.EngineCore.handle_request", "vllm.v1.core.scheduler.Scheduler.add_request")]
    # Without the bridge, the client side never reaches the scheduler.
    assert find_call_path(graph, "vllm.v1.engine.client.EngineCoreClient", targets, []).problem.startswith(
        "no call path")
    assert "not in this release" in find_call_path(graph, "vllm.nowhere", targets, []).problem


def test_pick_routes_prefers_bridges_then_length_and_drops_prefixes() -> None:
    from analyzer.report.callpath import pick_routes
    from analyzer.report.models import PathStep

    def route(*names: str, bridge_at: int = -1) -> list[PathStep]:
        return [PathStep(a, b, "bridge" if i == bridge_at else "call", "certain")
                for i, (a, b) in enumerate(itertools.pairwise(names))]

    short = route("e", "a")  # ends where `long` passes: adds nothing
    long = route("e", "a", "b", "c")
    other = route("e", "x", "y")
    bridged = route("e", "z", bridge_at=0)
    picked = pick_routes([short, long, other, bridged], 2)
    assert picked == [bridged, long]
    assert pick_routes([short, long, other, bridged], 5) == [bridged, other, long]


def test_missing_graphviz_is_said(world, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    concepts, sides, _ = world
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # no `dot` anywhere on it
    result = build_report(concepts, sides, tmp_path / "site", fmt="html")
    assert not result.graphviz and result.no_graphviz_reason == "Graphviz `dot` was not found"
    html = (tmp_path / "site" / "concepts" / "continuous-batching.html").read_text()
    assert "No drawings: Graphviz `dot` was not found" in html and "<svg" not in html
    assert '<ol class="path">' in html


def test_state_drawing(world, tmp_path: Path) -> None:
    from analyzer.report.graphviz import find_dot

    dot = find_dot()
    if dot is None:
        pytest.fail("Graphviz `dot` is missing: .ci/run installs it (apt-get install graphviz)")
    concepts, sides, _ = world
    result = build_report(concepts, sides, tmp_path, fmt="html", dot=dot)
    (state,) = _page(result, "continuous-batching").columns[0].state
    assert state.svg is not None and state.svg.startswith("<svg")
    # The outside writer is drawn in full and in red; the owner's own writer by method name.
    assert "refeng.engine.Engine.add_request" in state.svg and "#b42318" in state.svg
    assert ">schedule<" in state.svg


def test_steps_are_rows_of_three_cells(built) -> None:
    """Each step is one row: per side the exact lines of its symbol, how the previous
    step reaches it (across the ZMQ bridge for vLLM), or a finding when there is none."""
    page = _page(built[0], "continuous-batching")
    assert [r.title for r in page.steps] == ["A request enters", "Queued", "Scheduled"]
    assert all(len(r.cells) == 3 for r in page.steps)
    enter, queued, scheduled = page.steps
    ref, vllm, sgl = queued.cells
    assert [s.name for s in ref.symbols] == ["refeng.scheduler.Scheduler.add"]
    excerpt = ref.symbols[0].excerpt
    assert excerpt is not None and not excerpt.truncated
    assert excerpt.code.splitlines() == ["    def add(self, request: str) -> None:",
                                         "        self.waiting.append(request)"]
    assert ref.source == 1 and ref.hops == [("refeng.scheduler.Scheduler.add", "call")]
    # vLLM's request crosses the mapped ZMQ bridge into the engine core process.
    assert vllm.source == 1 and vllm.process == "EngineCore"
    assert vllm.crossings == ["engine core client (zmq)"]
    assert vllm.hops[-1] == ("vllm.v1.core.scheduler.Scheduler.add_request", "call")
    # A side with no counterpart is a finding, not an empty cell.
    assert enter.cells[2].none and not enter.cells[2].symbols
    assert sgl.source is None and not sgl.broken  # its first step
    # The reference's schedule() is not called from add(): the chain breaks, and says where.
    assert "schedule is not reached from refeng.scheduler.Scheduler.add (step 2)" in scheduled.cells[0].broken
    assert "does not say" in scheduled.cells[1].missing and "status" in scheduled.cells[2].missing


def test_steps_rendered_in_html_and_markdown(built) -> None:
    out = built[1]
    html = (out / "concepts" / "continuous-batching.html").read_text()
    assert html.index('id="step-1"') < html.index('id="step-2"') < html.index('class="columns"')
    assert "No counterpart: the fixture" in html and "crosses engine core client (zmq)" in html
    assert "The chain breaks here" in html
    assert "<script>window.pwned" not in html  # the step's prose is escaped like the rest
    md = (out / "md" / "continuous-batching.md").read_text()
    assert md.index("## Step by step") < md.index("### 2. Queued") < md.index("## Reference")
    assert "#### `refeng.scheduler.Scheduler.add`" in md


def test_route_drawn_per_side_with_its_process_boundaries(world, tmp_path: Path) -> None:
    concepts, sides, _ = world
    dot = find_dot()
    assert dot is not None, "Graphviz `dot` is required (make test installs it)"
    page = _page(build_report(concepts, sides, tmp_path, fmt="html", dot=dot), "continuous-batching")
    vllm = page.routes["vllm"]
    assert vllm.startswith("<svg") and "API server" in vllm and "EngineCore" in vllm  # one cluster each
    assert "engine core client (zmq)" in vllm  # the edge crossing between them
    assert "1. A request enters" in page.routes["reference"]
    html = (tmp_path / "concepts" / "continuous-batching.html").read_text()
    assert html.count('class="route-svg"') == 3
    source = route_dot(1, page.steps)
    assert source is not None and "subgraph cluster_0" in source and "subgraph cluster_1" in source


def test_module_constant_is_shown_like_map_verify_finds_it(tmp_path: Path) -> None:
    # `map verify` accepts a module-level constant or alias as a symbol; the page shows it
    # with its line instead of calling it missing.
    from analyzer.pinned import directory_tree
    from analyzer.report.pages import symbol_view
    from analyzer.settings import Settings

    pkg = tmp_path / "constpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text("def f() -> int:\n    return 1\n\n\nPLACEHOLDER = 0  # why it is zero\n")
    tree = directory_tree(Settings(cache_dir=tmp_path / "cache"), pkg, "reference")
    view = symbol_view(tree, "constpkg.mod.PLACEHOLDER", "a constant")
    assert view.found and view.kind == "attribute" and view.line == 5 and view.problem == ""
    assert view.excerpt is not None and "PLACEHOLDER = 0" in view.excerpt.code
    missing = symbol_view(tree, "constpkg.mod.NOPE", "gone")
    assert not missing.found and missing.problem == "not found in this release"

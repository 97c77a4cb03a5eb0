"""A tiny three-sided world for report tests: a reference engine, a vLLM-shaped and an
SGLang-shaped tree (a handful of files each), and concept mappings naming them."""

from __future__ import annotations

import textwrap
from pathlib import Path

from analyzer.flags.models import EnvVar, Flag
from analyzer.pinned import Permalinks, PinnedTree, release_permalinks
from analyzer.report.sources import tree_side
from analyzer.settings import Settings

# Source text a report must escape, not interpret.
HOSTILE = "<script>window.pwned = 1</script> & <b>bold</b>"

REFERENCE = {
    "refeng/__init__.py": "",
    "refeng/engine.py": '''
        from .scheduler import Scheduler


        class Engine:
            """Owns the scheduler; add_request is where a request enters."""

            def __init__(self) -> None:
                self.scheduler = Scheduler()

            def add_request(self, request: str) -> None:
                self.scheduler.add(request)
                self.scheduler.running = []  # an outside write the state table must flag
        ''',
    "refeng/scheduler.py": '''
        class Scheduler:
            def __init__(self) -> None:
                self.waiting: list[str] = []
                self.running: list[str] = []

            def add(self, request: str) -> None:
                self.waiting.append(request)

            def schedule(self) -> list[str]:
                while self.waiting:
                    self.running.append(self.waiting.pop(0))
                return self.running
        ''',
}

VLLM = {
    "vllm/__init__.py": "",
    "vllm/entrypoints/__init__.py": "",
    "vllm/entrypoints/api.py": f'''
        from vllm.v1.engine.client import EngineCoreClient

        BANNER = "{HOSTILE}"


        def create_completion(prompt: str) -> None:
            client = EngineCoreClient()
            client.add_request(prompt)
        ''',
    "vllm/v1/__init__.py": "",
    "vllm/v1/engine/__init__.py": "",
    "vllm/v1/engine/client.py": '''
        class EngineCoreClient:
            def add_request(self, prompt: str) -> None:
                self.send(prompt)

            def send(self, message: str) -> None:
                print("over zmq", message)
        ''',
    "vllm/v1/engine/core.py": '''
        from vllm.v1.core.scheduler import Scheduler


        class EngineCore:
            def __init__(self) -> None:
                self.scheduler = Scheduler()

            def handle_request(self, prompt: str) -> None:
                self.scheduler.add_request(prompt)
        ''',
    "vllm/v1/core/__init__.py": "",
    "vllm/v1/core/scheduler.py": '''
        class Scheduler:
            """Continuous batching: waiting -> running."""

            def __init__(self) -> None:
                self.waiting: list[str] = []
                self.running: list[str] = []

            def add_request(self, prompt: str) -> None:
                self.waiting.append(prompt)

            def schedule(self) -> list[str]:
                # compare with "a < b && c > d": must reach the page escaped
                self.note = "a line far wider than its column, which must scroll inside the excerpt" * 4
                self.running.extend(self.waiting)
                self.waiting.clear()
                return self.running
        ''' + "\n".join(f"            # padding line {i}" for i in range(120)),
}

SGLANG = {
    "sglang/__init__.py": "",
    "sglang/srt/__init__.py": "",
    "sglang/srt/managers/__init__.py": "",
    "sglang/srt/managers/scheduler.py": '''
        class Scheduler:
            def __init__(self) -> None:
                self.waiting_queue: list[str] = []

            def handle_generate_request(self, prompt: str) -> None:
                self.waiting_queue.append(prompt)
        ''',
}

MAPPINGS = {
    "continuous-batching.toml": f'''
        title = "Continuous batching"
        summary = "Requests join and leave the running batch every step. {HOSTILE}"
        chapters = ["Chapter 4"]
        related = ["request-entry"]

        [reference]
        status = "implemented"
        symbols = [{{ name = "refeng.scheduler.Scheduler", role = "owns the queues" }}, "refeng.scheduler.Scheduler.schedule"]
        entry_points = ["refeng.engine.Engine.add_request"]

        [vllm]
        status = "implemented"
        symbols = ["vllm.v1.core.scheduler.Scheduler.schedule", "vllm.v1.core.scheduler.Scheduler.add_request"]
        entry_points = ["vllm.entrypoints.api.create_completion"]
        flags = [{{ name = "--max-num-seqs", role = "batch size cap" }}, "--no-such-flag"]
        envs = ["VLLM_ENGINE_ITERATION_TIMEOUT_S"]
        bridges = [{{ name = "engine core client", source = "vllm.v1.engine.client.EngineCoreClient.send", target = "vllm.v1.engine.core.EngineCore.handle_request", transport = "zmq" }}]

        [sglang]
        status = "partial"
        note = "only the waiting queue is mapped"
        symbols = ["sglang.srt.managers.scheduler.Scheduler", "sglang.srt.managers.scheduler.Scheduler.gone_method"]

        [[steps]]
        title = "A request enters"
        explain = "The entry point takes the prompt. {HOSTILE}"
        reference = ["refeng.engine.Engine.add_request"]
        vllm = {{ symbols = ["vllm.entrypoints.api.create_completion"], process = "API server" }}
        sglang = {{ none = "the fixture's SGLang has no HTTP entry" }}

        [[steps]]
        title = "Queued"
        explain = "The request waits for the scheduler."
        reference = ["refeng.scheduler.Scheduler.add"]
        vllm = {{ symbols = ["vllm.v1.core.scheduler.Scheduler.add_request"], process = "EngineCore" }}
        sglang = ["sglang.srt.managers.scheduler.Scheduler.handle_generate_request"]

        [[steps]]
        title = "Scheduled"
        explain = "The scheduler moves it to running."
        reference = ["refeng.scheduler.Scheduler.schedule"]
        ''',
    "request-entry.toml": '''
        title = "Where a request enters"
        summary = "The public entry points."
        related = ["continuous-batching"]

        [reference]
        status = "implemented"
        symbols = ["refeng.engine.Engine.add_request"]

        [vllm]
        status = "implemented"
        symbols = ["vllm.entrypoints.api.create_completion"]

        [sglang]
        status = "unmapped"
        ''',
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def fixture_mappings(root: Path) -> Path:
    return write_tree(root / "mappings", MAPPINGS)


def fixture_sides(root: Path, settings: Settings) -> dict[str, PinnedTree | None]:
    ref = write_tree(root / "ref", REFERENCE)
    vllm = write_tree(root / "vllm-tree", VLLM)
    sgl = write_tree(root / "sglang-tree", SGLANG)
    vllm_side = tree_side(settings, "vllm", vllm / "vllm", version="0.30.0",
                          permalinks=release_permalinks("vllm", "0.30.0", "ced6857af", ""), knobs=False)
    vllm_side.flags["--max-num-seqs"] = Flag(flag="--max-num-seqs", aliases=["--max-num-seqs"], dest="max_num_seqs",
                                             defined_at="vllm/engine/arg_utils.py:42", default="256",
                                             help="Maximum number of sequences per iteration.")
    vllm_side.envs["VLLM_ENGINE_ITERATION_TIMEOUT_S"] = EnvVar("VLLM_ENGINE_ITERATION_TIMEOUT_S", "vllm/envs.py:7", "60")
    sgl_links: Permalinks = release_permalinks("sglang", "0.5.20", None, "python/")
    sgl_side = tree_side(settings, "sglang", sgl / "sglang", version="0.5.20", permalinks=sgl_links, knobs=False)
    return {"reference": tree_side(settings, "reference", ref / "refeng"), "vllm": vllm_side, "sglang": sgl_side}

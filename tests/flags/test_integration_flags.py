"""Real releases: flags and env vars of the four pinned vLLM / SGLang wheels.

Besides facts read off the sources by hand, the flag counts are checked against
an independent census done with plain `ast.walk` (no interpreter): vLLM =
1 (-h) + every `add_argument` call with literal option strings in
`make_arg_parser` / `*.add_cli_args` + one per FrontendArgs field (the loop);
SGLang = 1 (-h) + every `A[...]` field with help/Arg metadata and without
`no_cli=True` in the classes listed in `_INPUT_NAMESPACES` + the manual
`add_argument` calls in `ServerArgs.add_cli_args`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from analyzer.flags import env_report, flag_report
from analyzer.flags.models import Flag
from analyzer.settings import Settings
from analyzer.snapshots import ensure_snapshot

pytestmark = pytest.mark.integration

# (ref, actions incl. -h, env vars in the registry) as validated when these tests were written.
EXPECTED = {
    "vllm@0.30.0": (301, 303),
    "vllm@0.33.0": (321, 319),
    "sglang@0.5.20": (495, 623),
    "sglang@0.5.23": (532, 770),
}


def _root(settings: Settings, ref: str) -> Path:
    return ensure_snapshot(settings, ref).package_root


def _flags(settings: Settings, ref: str) -> dict[str, Flag]:
    report = flag_report(_root(settings, ref), ref.split("@")[0])
    return {f.flag: f for f in report.flags}


def _line(root: Path, where: str, span: int = 4) -> str:
    path, line = where.rsplit(":", 1)
    lines = (root / path).read_text().splitlines()
    return "\n".join(lines[int(line) - 1 : int(line) - 1 + span])


@pytest.mark.parametrize("ref", sorted(EXPECTED))
def test_counts_and_no_duplicates(integration_settings: Settings, ref: str) -> None:
    root = _root(integration_settings, ref)
    project = ref.split("@")[0]
    report = flag_report(root, project)
    options = [a for f in report.flags for a in (*f.aliases, *f.hidden_aliases)]
    assert len(options) == len(set(options)), "an option string registered twice would crash argparse"
    n_flags, n_envs = EXPECTED[ref]
    assert len(report.flags) == n_flags
    assert len(env_report(root, project).envs) == n_envs
    assert 250 <= len(report.flags) <= 700


@pytest.mark.parametrize("ref", sorted(EXPECTED))
def test_every_defined_at_points_at_the_definition(integration_settings: Settings, ref: str) -> None:
    """Each path:line holds the option string or the field the option is named after."""
    root = _root(integration_settings, ref)
    project = ref.split("@")[0]
    for f in flag_report(root, project).flags:
        text = _line(root, f.defined_at)
        named = any(a in text for a in f.aliases if not a.startswith("--no-"))
        field = f"{f.dest}:" in text
        assert named or field or f.flag == "--help", f"{f.flag} -> {f.defined_at}: {text!r}"
    for e in env_report(root, project).envs:
        assert e.name in _line(root, e.defined_at, 1)


@pytest.mark.parametrize("ref", ["vllm@0.30.0", "vllm@0.33.0"])
def test_vllm_serve_facts(integration_settings: Settings, ref: str) -> None:
    flags = _flags(integration_settings, ref)
    prefix = flags["--enable-prefix-caching"]
    if ref == "vllm@0.30.0":
        assert prefix.aliases == ["--enable-prefix-caching", "--no-enable-prefix-caching"]
        assert prefix.action == "BooleanOptionalAction"
    else:  # 0.33.0 registers its EnableDisableAction for BooleanOptionalAction
        assert prefix.aliases == ["--enable-prefix-caching", "--disable-prefix-caching"]
        assert prefix.hidden_aliases == ["--no-enable-prefix-caching"]  # accepted, not in --help
        assert prefix.negative_aliases == ["--no-enable-prefix-caching", "--disable-prefix-caching"]
        assert prefix.action == "EnableDisableAction"
    assert prefix.group == "CacheConfig"
    assert prefix.defined_at.startswith("vllm/engine/arg_utils.py:")
    assert prefix.field_at is not None and prefix.field_at.startswith("vllm/config/cache.py:")
    assert flags["--help"].aliases == ["-h", "--help"]
    assert "-tp" in flags["--tensor-parallel-size"].aliases
    # `--model` is only registered when argv lacks a bare `--help` (so `--help=all` lists it).
    assert flags["--model"].condition is not None and "--help" in flags["--model"].condition
    assert flags["--port"].default == "8000" and flags["--port"].group == "Frontend"
    report = flag_report(_root(integration_settings, ref), "vllm")
    assert [(p.name, p.nargs) for p in report.positionals] == [("model_tag", "?")]
    # The platform hook's options, and what FlexibleArgumentParser.parse_args rewrites (`-O3`,
    # `--max_model_len`): neither is followed statically, each is said.
    assert len(report.warnings) == 2 and any("pre_register_and_update" in w for w in report.warnings)
    assert any("FlexibleArgumentParser.parse_args rewrites the command line" in w for w in report.warnings)


@pytest.mark.parametrize("ref", ["vllm@0.30.0", "vllm@0.33.0"])
def test_vllm_envs(integration_settings: Settings, ref: str) -> None:
    report = env_report(_root(integration_settings, ref), "vllm")
    envs = {e.name: e for e in report.envs}
    assert envs["VLLM_HOST_IP"].default == '""'
    if ref == "vllm@0.30.0":
        assert envs["VLLM_ENGINE_ITERATION_TIMEOUT_S"].default == '"60"'
    else:  # dropped from the registry by 0.33.0
        assert "VLLM_ENGINE_ITERATION_TIMEOUT_S" not in envs
    assert envs["VLLM_LOGGING_LEVEL"].default == '"INFO"'
    assert envs["LOCAL_RANK"].source == "registry"  # non-VLLM_ names of the dict are listed too
    assert envs["VLLM_PRECOMPILED_WHEEL_LOCATION"].source == "read"
    assert "VLLM_USE_V1" not in envs  # gone from these releases
    assert report.warnings == []


@pytest.mark.parametrize("ref", ["sglang@0.5.20", "sglang@0.5.23"])
def test_sglang_server_facts(integration_settings: Settings, ref: str) -> None:
    flags = _flags(integration_settings, ref)
    chunked = flags["--chunked-prefill-size"]
    assert chunked.type == "int" and chunked.dest == "chunked_prefill_size"
    assert chunked.defined_at.startswith("sglang/srt/arg_groups/fields/")
    assert chunked.registered_at is not None and chunked.registered_at.startswith("sglang/srt/server_args.py:")
    model = flags["--model-path"]
    assert model.aliases == ["--model-path", "--model"] and model.required
    assert flags["--help"].defined_at.startswith("sglang/srt/server_args.py:")
    assert flags["--config"].defined_at.startswith("sglang/srt/server_args.py:")
    assert flag_report(_root(integration_settings, ref), "sglang").warnings == []


@pytest.mark.parametrize("ref", ["sglang@0.5.20", "sglang@0.5.23"])
def test_sglang_envs(integration_settings: Settings, ref: str) -> None:
    report = env_report(_root(integration_settings, ref), "sglang")
    envs = {e.name: e for e in report.envs}
    assert envs["SGLANG_USE_MODELSCOPE"].kind == "EnvBool" and envs["SGLANG_USE_MODELSCOPE"].default == "False"
    assert envs["SGLANG_EPLB_P2P_BATCH_CHUNK_SIZE"].deprecated_names == ["SGLANG_EPLB_ROCM_P2P_BATCH_CHUNK_SIZE"]
    assert "SGLANG_ENABLE_CP_V2" in {e.name for e in report.retired}
    assert report.warnings == []


def _calls(tree: ast.AST, names: set[str]) -> list[ast.Call]:
    out: list[ast.Call] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in names:
            out += [c for c in ast.walk(node) if isinstance(c, ast.Call) and getattr(c.func, "attr", "") == "add_argument"]
    return out


@pytest.mark.parametrize("ref", ["vllm@0.30.0", "vllm@0.33.0"])
def test_vllm_count_matches_census(integration_settings: Settings, ref: str) -> None:
    root = _root(integration_settings, ref)
    cli = next(p for p in ("vllm/entrypoints/launchers/cli_args.py", "vllm/entrypoints/common/cli_args.py",
                           "vllm/entrypoints/openai/cli_args.py") if (root / p).is_file())
    cli_tree = ast.parse((root / cli).read_text())
    calls = _calls(ast.parse((root / "vllm/engine/arg_utils.py").read_text()), {"add_cli_args"})
    calls += _calls(cli_tree, {"make_arg_parser", "add_cli_args"})
    literal = [[a.value for a in c.args if isinstance(a, ast.Constant) and str(a.value).startswith("-")] for c in calls]
    fields = sum(
        1
        for cls in cli_tree.body
        if isinstance(cls, ast.ClassDef) and cls.name in {"BaseFrontendArgs", "FrontendArgs"}
        for stmt in cls.body
        if isinstance(stmt, ast.AnnAssign) and "ClassVar" not in ast.unparse(stmt.annotation)
    )
    report = flag_report(root, "vllm")
    assert len(report.flags) == 1 + sum(1 for opts in literal if opts) + fields
    aliases = {a for f in report.flags for a in f.aliases}
    assert {o for opts in literal for o in opts} <= aliases


@pytest.mark.parametrize("ref", ["sglang@0.5.20", "sglang@0.5.23"])
def test_sglang_count_matches_census(integration_settings: Settings, ref: str) -> None:
    root = _root(integration_settings, ref)
    sa = ast.parse((root / "sglang/srt/server_args.py").read_text())
    names = next(
        [e.id for e in s.value.elts]  # type: ignore[attr-defined]
        for s in sa.body
        if isinstance(s, ast.Assign) and getattr(s.targets[0], "id", "") == "_INPUT_NAMESPACES"
    )
    classes = {
        c.name: c
        for p in (root / "sglang/srt/arg_groups/fields").glob("*.py")
        for c in ast.parse(p.read_text()).body
        if isinstance(c, ast.ClassDef)
    }
    cli_fields = 0
    for name in names:
        for stmt in classes[name].body:
            if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.annotation, ast.Subscript):
                continue
            src = ast.unparse(stmt.annotation)
            if not src.startswith(("A[", "Annotated[")) or re.search(r"no_cli\s*=\s*True", src):
                continue
            meta = stmt.annotation.slice.elts[1:] if isinstance(stmt.annotation.slice, ast.Tuple) else []
            if any((isinstance(m, ast.Constant) and isinstance(m.value, str))
                   or (isinstance(m, ast.Call) and ast.unparse(m.func) == "Arg") for m in meta):
                cli_fields += 1
    manual = _calls(sa, {"add_cli_args"})
    assert len(flag_report(root, "sglang").flags) == 1 + cli_fields + len(manual)


def test_vllm_033_enable_disable_pairs(integration_settings: Settings) -> None:
    """0.33.0's boolean flags come as --enable-X / --disable-X pairs on one dest, with the
    default the config field (or the call) gives; `--no-` forms of a pair are hidden."""
    flags = _flags(integration_settings, "vllm@0.33.0")
    pairs = [f for f in flags.values() if f.action == "EnableDisableAction" and f.flag.startswith(("--enable-", "--disable-"))]
    assert len(pairs) >= 45
    for f in pairs:
        positive = f.flag.startswith("--enable-")
        stem = f.flag.removeprefix("--enable-" if positive else "--disable-")
        inverse = ("--disable-" if positive else "--enable-") + stem
        # as given (a short form like -ep kept), then the derived inverse
        assert f.aliases[0] == f.flag and f.aliases[-1] == inverse, f.flag
        assert all(not a.startswith("--") for a in f.aliases[1:-1]) and f.hidden_aliases == ["--no-" + f.flag[2:]]
        assert f.dest == f.flag[2:].replace("-", "_") and f.nargs == 0
        assert set(f.negative_aliases) == {inverse, "--no-" + f.flag[2:]}
    # Defaults read by hand off the sources: a config field's, or the call's override.
    assert flags["--enable-auto-tool-choice"].default == "False"  # FrontendArgs field
    assert flags["--enable-prefix-caching"].default == "None"  # `**{..., "default": None}` in add_cli_args
    assert flags["--disable-cascade-attn"].default == "None"  # explicit BooleanOptionalAction call
    assert "--disable-chunked-prefill" in flags["--enable-chunked-prefill"].aliases
    assert flags["--enable-expert-parallel"].aliases == ["--enable-expert-parallel", "-ep", "--disable-expert-parallel"]
    assert flags["--enable-log-requests"].aliases == ["--enable-log-requests", "--disable-log-requests"]


@pytest.mark.parametrize("ref", ["vllm@0.30.0", "vllm@0.33.0"])
def test_vllm_option_strings_match_the_source_oracle(integration_settings: Settings, ref: str) -> None:
    """Every option string --help shows, and every one the parser accepts, equal the
    oracle of benchmarks/flags_accuracy.py (plain `ast` over the sources plus the
    hand-read semantics of BooleanOptionalAction and 0.33.0's EnableDisableAction)."""
    from benchmarks.flags_accuracy import oracle

    root = _root(integration_settings, ref)
    shown, accepted = oracle(root)
    report = flag_report(root, "vllm")
    assert {a for f in report.flags for a in (f.flag, *f.aliases)} == shown
    assert {a for f in report.flags for a in (f.flag, *f.aliases, *f.hidden_aliases)} == accepted


# `sglang generate`'s parser against a census that shares no code with the interpreter: every
# literal option of an `add_argument(...)` call (the parser's or a local wrapper's) in the files
# that build it must be listed, and every listed option must be spelled in multimodal_gen's
# sources: as a literal, as the end of an f-string (`f"--{prefix}.use-tiling"`), or as the tail
# a loop prefixes (`("compile-text-encoder", ...)` under `f"--flux3-{flag}"`).
_GENERATE_FILES = ("runtime/entrypoints/cli/generate.py", "runtime/server_args/server_args.py",
                   "runtime/server_args/disagg.py", "configs/sample/sampling_params.py")


def _census(mmg: Path) -> set[str]:
    found: set[str] = set()
    for rel in _GENERATE_FILES:
        for node in ast.walk(ast.parse((mmg / rel).read_text())):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name == "add_argument":
                    found.update(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str) and a.value.startswith("-"))
    return found


def _spelled(option: str, text: str) -> bool:
    if option in ("-h", "--help"):
        return True
    parts = re.split(r"(?<=[.-])", option.lstrip("-"))
    tails = ["".join(parts[i:]) for i in range(min(2, len(parts)))]
    if any(f'"{t}"' in text or f"}}{t}\"" in text or f'--{t}"' in text for t in tails):
        return True
    return "." in option and f"}}.{option.split('.', 1)[1]}\"" in text


@pytest.mark.parametrize("ref", ["sglang@0.5.20", "sglang@0.5.23"])
def test_sglang_generate_parser_against_a_literal_census(integration_settings: Settings, ref: str) -> None:
    from analyzer.flags import command_report
    from analyzer.flags.entry_flags import accepted

    root = _root(integration_settings, ref)
    found = command_report(root, "sglang generate")
    listed = accepted(found.report)
    mmg = root / "sglang/multimodal_gen"
    assert found.complete
    assert _census(mmg) <= listed
    text = "\n".join(p.read_text(errors="replace") for p in mmg.rglob("*.py"))
    assert [o for o in sorted(listed) if not _spelled(o, text)] == []
    assert {"--num-gpus", "--ulysses-degree", "--num-frames", "--perf-dump-path", "--vae-config.use-tiling"} <= listed
    assert "--component-paths." in found.prefixes and "-path" in found.suffixes
    serve = command_report(root, "sglang serve")
    assert serve.by_hand == ["--model-type"] and "--perf-dump-path" not in accepted(serve.report)

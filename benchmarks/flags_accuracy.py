"""Option strings `atlas flags` lists for `vllm serve` vs an oracle read off the source text.

    .venv/bin/python benchmarks/flags_accuracy.py
    .venv/bin/python benchmarks/flags_accuracy.py --baseline 3ca6227   # the reader before, same run

The oracle shares no code with the analyzer's parser interpreter: plain `ast`
over `vllm/engine/arg_utils.py` and the frontend's `cli_args.py` lists every
`add_argument` call with literal option strings in `add_cli_args` /
`make_arg_parser`, plus one `--field-name` per FrontendArgs field. A call is
boolean when it says `action=argparse.BooleanOptionalAction`, or when its
`**x_kwargs["field"]` names a config-class field annotated `bool` / `bool |
None` (vLLM's `get_kwargs` maps those to BooleanOptionalAction), or for a bool
FrontendArgs field its `_customize_cli_kwargs` gives no other action. Each
boolean option `--X` then accepts what the standard library's
BooleanOptionalAction adds (`--no-X`) and, in a release whose
FlexibleArgumentParser registers `EnableDisableAction` in place of
BooleanOptionalAction, the inverse its constructor derives (hand-read from
vllm/utils/argparse_utils.py: `--enable-X` <-> `--disable-X`). That parser then
hides `--no-X` of such a pair from help (still accepted). Precision and recall
are over option strings (plus `-h` / `--help`), twice: the strings `--help`
shows (the reader's flag + aliases) and every string the parser accepts (plus
the reader's hidden_aliases).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

RELEASES = ["vllm@0.30.0", "vllm@0.33.0"]
_BOOL = {"bool", "bool | None", "None | bool", "Optional[bool]"}


def _classes(root: Path) -> dict[str, ast.ClassDef]:
    out: dict[str, ast.ClassDef] = {}
    for path in [*(root / "vllm/config").rglob("*.py"), root / "vllm/engine/arg_utils.py"]:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                out.setdefault(node.name, node)
    return out


def _annotation(classes: dict[str, ast.ClassDef], cls: str, field: str, depth: int = 0) -> str | None:
    node = classes.get(cls)
    if node is None or depth > 8:
        return None
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == field:
            return ast.unparse(stmt.annotation)
    for base in node.bases:
        found = _annotation(classes, ast.unparse(base).rsplit(".", 1)[-1], field, depth + 1)
        if found is not None:
            return found
    return None


def _calls(tree: ast.AST, names: set[str]) -> list[ast.Call]:
    return [c for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name in names
            for c in ast.walk(node) if isinstance(c, ast.Call) and getattr(c.func, "attr", "") == "add_argument"]


def oracle(root: Path) -> tuple[set[str], set[str]]:
    """(option strings shown by --help, option strings accepted)."""
    classes = _classes(root)
    arg_utils = ast.parse((root / "vllm/engine/arg_utils.py").read_text())
    kwargs_of: dict[str, str] = {}  # model_kwargs -> ModelConfig
    for node in ast.walk(arg_utils):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", "") == "get_kwargs" and node.value.args):
            kwargs_of[ast.unparse(node.targets[0])] = ast.unparse(node.value.args[0])
    cli = next(root / p for p in ("vllm/entrypoints/launchers/cli_args.py", "vllm/entrypoints/common/cli_args.py",
                                  "vllm/entrypoints/openai/cli_args.py")
               if (root / p).is_file())
    cli_tree = ast.parse(cli.read_text())
    argparse_utils = (root / "vllm/utils/argparse_utils.py").read_text()
    enable_disable = re.search(r'register\(\s*"action",\s*BooleanOptionalAction,\s*EnableDisableAction\s*\)',
                               argparse_utils) is not None
    options: list[tuple[list[str], bool]] = []
    for call in _calls(arg_utils, {"add_cli_args"}) + _calls(cli_tree, {"make_arg_parser", "add_cli_args"}):
        names = [a.value for a in call.args if isinstance(a, ast.Constant) and str(a.value).startswith("-")]
        if not names:
            continue
        boolean = False
        for kw in call.keywords:
            text = ast.unparse(kw.value)
            if kw.arg == "action":
                boolean = text.endswith("BooleanOptionalAction")
                break
            # `**x_kwargs["f"]`, or `**{**x_kwargs["f"], "default": None}`
            spread = [kw.value] if kw.arg is None else []
            if spread and isinstance(kw.value, ast.Dict):
                spread = [v for k, v in zip(kw.value.keys, kw.value.values, strict=True) if k is None]
            for value in spread:
                if isinstance(value, ast.Subscript):
                    owner = kwargs_of.get(ast.unparse(value.value))
                    field = value.slice.value if isinstance(value.slice, ast.Constant) else None
                    ann = _annotation(classes, owner, field) if owner and field else None
                    boolean = ann in _BOOL
        options.append((names, boolean))
    customized = {m.group(1) for m in re.finditer(r'frontend_kwargs\["(\w+)"\]\["action"\]', cli.read_text())}
    for cls in cli_tree.body:
        if isinstance(cls, ast.ClassDef) and cls.name in {"BaseFrontendArgs", "FrontendArgs"}:
            for stmt in cls.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    ann = ast.unparse(stmt.annotation)
                    if "ClassVar" in ann:
                        continue
                    name = stmt.target.id
                    options.append(([f"--{name.replace('_', '-')}"], ann in _BOOL and name not in customized))
    shown, hidden = {"-h", "--help"}, set()
    for names, boolean in options:
        shown.update(names)
        if not boolean:
            continue
        for opt in names:
            inverse = None
            if enable_disable:
                for prefix, other in (("--enable-", "--disable-"), ("--disable-", "--enable-")):
                    if opt.startswith(prefix):
                        inverse = other + opt.removeprefix(prefix)
            if inverse is not None:
                shown.add(inverse)
            if opt.startswith("--"):
                (hidden if inverse is not None else shown).add("--no-" + opt[2:])
    return shown, shown | hidden


READER = """
import json, sys
from analyzer.flags import flag_report
report = flag_report(sys.argv[1], "vllm")
shown = {a for f in report.flags for a in (f.flag, *f.aliases)}
hidden = {a for f in report.flags for a in getattr(f, "hidden_aliases", [])}
print(json.dumps([sorted(shown), sorted(shown | hidden)]))
"""


def reader(root: Path, pythonpath: Path) -> tuple[set[str], set[str]]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    out = subprocess.run([sys.executable, "-c", READER, str(root)], check=True, capture_output=True,
                         text=True, env=env, cwd=pythonpath).stdout
    shown, accepted = json.loads(out)
    return set(shown), set(accepted)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", metavar="REV", help="Also measure the reader of git revision REV.")
    args = parser.parse_args()
    from analyzer.settings import Settings, default_cache_dir
    from analyzer.snapshots import open_snapshot

    settings = Settings(cache_dir=default_cache_dir())
    from benchmarks._revision import unpack_analyzer

    with tempfile.TemporaryDirectory() as tmp:
        if args.baseline:
            unpack_analyzer(args.baseline, tmp)
        print(f"{'release, reader':34} {'strings':9} {'oracle':>6} {'listed':>6} {'right':>6} {'precision':>9} {'recall':>7}")
        for ref in RELEASES:
            root = open_snapshot(settings, ref).package_root
            truths = oracle(root)
            runs = [("this tree", ROOT)] + ([(f"baseline {args.baseline}", Path(tmp))] if args.baseline else [])
            for label, path in runs:
                for kind, got, truth in zip(("shown", "accepted"), reader(root, path), truths, strict=True):
                    right = len(got & truth)
                    print(f"{ref + ', ' + label:34} {kind:9} {len(truth):>6} {len(got):>6} {right:>6} "
                          f"{right / len(got):>9.3f} {right / len(truth):>7.3f}")
                    for name, items in (("listed, not in oracle", got - truth), ("in oracle, not listed", truth - got)):
                        if items and label == "this tree":
                            print(f"    {name} ({len(items)}): {', '.join(sorted(items)[:12])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

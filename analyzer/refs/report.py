"""Findings as a rich table (grouped by file), JSON, or SARIF 2.1.0."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from rich.console import Console
from rich.table import Table

from analyzer.refs.models import BROKEN, HIGH_CONFIDENCE, NOT_CHECKABLE, OK, WARNING, Finding

_STATUS_STYLE = {OK: "green", BROKEN: "bold red", WARNING: "magenta", NOT_CHECKABLE: "yellow"}


def summary(findings: list[Finding]) -> dict[str, int]:
    counts = Counter(f.status for f in findings)
    return {status: counts.get(status, 0) for status in (OK, BROKEN, WARNING, NOT_CHECKABLE)}


def _suggestion_cell(f: Finding) -> str:
    best = f.best
    if best is None:
        return ""
    mark = "high" if best.confidence >= HIGH_CONFIDENCE else "medium" if best.confidence >= 0.6 else "low"
    return f"{best.replacement} ({best.confidence:.2f} {mark}: {best.reason})"


def render_table(console: Console, findings: list[Finding], show_ok: bool = False, title: str = "") -> None:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        if show_ok or f.status != OK:
            by_file[f.ref.file].append(f)
    for file in sorted(by_file):
        table = Table(title=file, title_justify="left", show_lines=False, expand=False)
        table.add_column("line", justify="right", style="cyan", no_wrap=True)
        table.add_column("kind")
        table.add_column("reference", overflow="fold")
        table.add_column("framework")
        table.add_column("pin")
        table.add_column("status", no_wrap=True)
        table.add_column("resolved at / note", overflow="fold")
        table.add_column("suggestion", overflow="fold")
        for f in sorted(by_file[file], key=lambda x: (x.ref.line, x.ref.col)):
            framework = f.framework or f.ref.framework
            if f.ref.framework == "ambiguous":
                framework += " (ambiguous)"
            status = f.status
            if f.previous_status and f.previous_status != f.status:
                status = f"{f.previous_status} → {f.status}"
            where = " — ".join(x for x in (f.resolved_at, f.note) if x)
            table.add_row(
                str(f.ref.line), f.ref.kind, f.ref.text, framework, f.pin or "-",
                f"[{_STATUS_STYLE.get(f.status, '')}]{status}[/]", where, _suggestion_cell(f),
            )
        console.print(table)
    counts = summary(findings)
    line = ", ".join(f"{n} {status}" for status, n in counts.items())
    console.print(f"{title + ': ' if title else ''}{len(findings)} findings: {line}")


def to_json(findings: list[Finding]) -> list[dict[str, Any]]:
    return [f.to_dict() for f in findings]


def to_sarif(findings: list[Finding], uris: dict[str, str] | None = None, tool_version: str = "0.1.0") -> dict[str, Any]:
    """SARIF 2.1.0: broken references as errors, stale line anchors as warnings,
    not-checkable ones as notes.

    `uris` maps a finding's file (relative to the book root) to the path code-scanning
    UIs should show, normally relative to the repository the check runs in."""
    uris = uris or {}
    rules = {}
    results = []
    for f in findings:
        if f.status == OK:
            continue
        rule_id = f"refs/{f.status}-{f.ref.kind}"
        rules[rule_id] = {
            "id": rule_id,
            "shortDescription": {"text": f"{f.status} {f.ref.kind} reference"},
        }
        message = f"{f.ref.kind} `{f.ref.text}` is {f.status} against {f.pin or 'no pin'}"
        if f.note:
            message += f": {f.note}"
        if f.best:
            message += f". Suggestion: {f.best.replacement} (confidence {f.best.confidence:.2f}, {f.best.reason})"
        region: dict[str, Any] = {"startLine": f.ref.line}
        if f.ref.col >= 0:
            region["startColumn"] = f.ref.col + 1
            region["endColumn"] = f.ref.col + 1 + len(f.ref.text)
        results.append(
            {
                "ruleId": rule_id,
                "level": "error" if f.status == BROKEN else "warning" if f.status == WARNING else "note",
                "message": {"text": message},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uris.get(f.ref.file, f.ref.file)}, "region": region}}],
                "properties": {"pin": f.pin, "framework": f.framework or f.ref.framework, "kind": f.ref.kind},
            }
        )
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "atlas check",
                        "version": tool_version,
                        "informationUri": "https://github.com/serving-atlas",
                        "rules": sorted(rules.values(), key=lambda r: r["id"]),
                    }
                },
                "results": results,
            }
        ],
    }

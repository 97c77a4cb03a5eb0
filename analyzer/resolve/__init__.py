"""Name, type and call resolution over the index's per-file facts (never re-parses source)."""

from analyzer.resolve.calls import CallResolver
from analyzer.resolve.models import CallEdge, CallRecord, Value
from analyzer.resolve.project import Project

__all__ = ["CallEdge", "CallRecord", "CallResolver", "Project", "Value"]

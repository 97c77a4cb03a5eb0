"""Serving Atlas analyzer: static indexes of pinned vLLM / SGLang sources.

Pipeline stages, one package each, plain data between them:
snapshots -> index -> resolve -> graphs -> refs / mappings / diff -> report.
Upstream code is only ever parsed, never imported or executed.
"""

__version__ = "0.1.0"

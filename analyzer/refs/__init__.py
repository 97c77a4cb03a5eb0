"""Manuscript reference checker: find every path, symbol, flag and env var a book
cites and resolve it against pinned vLLM / SGLang snapshots."""

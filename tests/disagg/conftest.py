"""Fixtures: a prefill and a decode server per test module (see disagg_fixtures.py)."""

from server_session import _single_torch_thread, server_cache_dir

__all__ = ["_single_torch_thread", "server_cache_dir"]

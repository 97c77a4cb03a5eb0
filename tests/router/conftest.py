"""Fixtures: tiny-model engine servers behind a router (see router_fixtures.py)."""

from server_session import _single_torch_thread, server_cache_dir

__all__ = ["_single_torch_thread", "server_cache_dir"]

"""A server with KV tiers reports each tier's capacity, use and hit rate on /metrics."""

from __future__ import annotations

import threading
from pathlib import Path

from server_fixtures import MODEL, start_server

from reference_engine.server.metrics import parse_prometheus


def test_kv_tiers_show_in_metrics(server_cache_dir: Path, tmp_path: Path) -> None:
    # 12 blocks of 8: the second prompt evicts the first, whose blocks come back from a tier.
    srv = start_server(
        server_cache_dir, kv_host_blocks=4, kv_disk_dir=str(tmp_path), num_gpu_blocks=12,
    )  # fmt: skip
    try:
        first = {"model": MODEL, "prompt": list(range(10, 70)), "max_tokens": 2, "temperature": 0}
        second = {**first, "prompt": list(range(100, 160))}
        answers = [srv.http.post("/v1/completions", json=b).json() for b in (first, second, first)]
        assert answers[0]["choices"][0]["text"] == answers[2]["choices"][0]["text"]
        # All of the first prompt's full blocks were hits again: those the second request
        # evicted came back from a tier.
        assert answers[2]["usage"]["prompt_tokens_details"]["cached_tokens"] == 56
        values = parse_prometheus(srv.http.get("/metrics").text)
        assert values['atlas_kv_tier_capacity_blocks{tier="host"}'] == 4
        assert values['atlas_kv_tier_capacity_blocks{tier="disk"}'] == 4096
        assert values["atlas_kv_tier_promoted_blocks_total"] >= 1
        assert values['atlas_kv_tier_hits_total{tier="host"}'] > 0
        assert 0 < values['atlas_kv_tier_hit_rate{tier="host"}'] <= 1
        assert srv.wait_idle()["integrity"] == "ok"
    finally:
        srv.stop()


def test_tier_reads_happen_off_the_engine_thread(server_cache_dir: Path, tmp_path: Path) -> None:
    srv = start_server(server_cache_dir, kv_disk_dir=str(tmp_path), num_gpu_blocks=12)
    try:
        tiers = srv.engine.engine.kv_tiers
        assert tiers is not None and tiers.disk is not None
        readers: list[str] = []
        real_get = tiers.disk.get

        def get(key: bytes) -> bytes | None:
            readers.append(threading.current_thread().name)
            return real_get(key)

        tiers.disk.get = get  # type: ignore[method-assign]
        first = {"model": MODEL, "prompt": list(range(10, 70)), "max_tokens": 2, "temperature": 0}
        second = {**first, "prompt": list(range(100, 160))}
        answers = [srv.http.post("/v1/completions", json=b).json() for b in (first, second, first)]
        assert answers[0]["choices"][0]["text"] == answers[2]["choices"][0]["text"]
        assert answers[2]["usage"]["prompt_tokens_details"]["cached_tokens"] == 56
        assert readers and "atlas-engine" not in readers  # prefetched by a worker thread
        assert tiers.num_promoted > 0
    finally:
        srv.stop()

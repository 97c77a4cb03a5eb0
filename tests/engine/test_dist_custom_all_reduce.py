"""Custom all-reduce algorithms (distributed/custom_all_reduce.py) on gloo ranks against
`dist.all_reduce`: exactly equal on integer-valued inputs, within rounding on random ones,
identical bits on every rank, sizes that do not divide by the ranks included."""

from __future__ import annotations

import os
import tempfile

import pytest
import torch
import torch.multiprocessing as mp

from reference_engine.distributed.custom_all_reduce import ALGORITHMS, predicted_seconds

SIZES = [1, 7, 64, 1000]  # elements: fewer than the ranks, odd, even, not a multiple of 3


def _rank_main(rank: int, world: int, init_file: str, out: str) -> None:
    import datetime

    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world,
        timeout=datetime.timedelta(seconds=60),
    )  # fmt: skip
    results: dict[str, object] = {}
    for n in SIZES:
        gen = torch.Generator().manual_seed(1000 * rank + n)
        ints = torch.randint(-50, 50, (n,), generator=gen).to(torch.float32)
        floats = torch.randn(n, generator=gen, dtype=torch.float64).reshape(-1, 1)
        for data_name, data in (("int", ints), ("float", floats)):
            want = data.clone()
            dist.all_reduce(want)
            for name, algo in ALGORITHMS.items():
                if name == "recursive_doubling" and world & (world - 1):
                    continue
                got = algo(data, None)
                assert got.shape == data.shape
                results[f"{name}/{data_name}/{n}"] = (got, want)
            assert torch.equal(data, data), "inputs untouched"
    torch.save(results, f"{out}.{rank}")
    dist.destroy_process_group()


def _spawn(world: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        init_file, out = os.path.join(tmp, "init"), os.path.join(tmp, "out")
        ctx = mp.get_context("spawn")
        procs = [ctx.Process(target=_rank_main, args=(r, world, init_file, out)) for r in range(world)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=180)
        alive = [p for p in procs if p.is_alive()]
        for p in alive:
            p.kill()
        assert not alive and all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
        return [torch.load(f"{out}.{r}") for r in range(world)]


@pytest.mark.slow
@pytest.mark.parametrize("world", [2, 4])
def test_algorithms_equal_all_reduce(world: int) -> None:
    per_rank = _spawn(world)
    keys = set(per_rank[0])
    assert {k.split("/")[0] for k in keys} == set(ALGORITHMS)
    for key in keys:
        got0 = per_rank[0][key][0]
        for r in range(world):
            got, want = per_rank[r][key]
            if "/int/" in key:
                assert torch.equal(got, want), (key, r)  # exact sums: exactly all_reduce
            else:
                torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
            assert torch.equal(got, got0), f"{key}: rank {r} has different bits from rank 0"


def test_alpha_beta_costs_order_the_algorithms() -> None:
    alpha, beta = 50e-6, 1e-9  # 50 us latency, 1 GB/s
    small, big = 64, 64 << 20
    for n in (2, 4, 8):
        # Small messages: fewest rounds wins; big messages: fewest bytes (ring, two-shot).
        t_small = {a: predicted_seconds(a, small, n, alpha, beta) for a in ALGORITHMS}
        t_big = {a: predicted_seconds(a, big, n, alpha, beta) for a in ALGORITHMS}
        assert t_small["one_shot"] == min(t_small.values())
        if n > 2:  # with two ranks every scheme moves S bytes; only the rounds differ
            assert t_big["two_shot"] <= t_big["ring"] < t_big["recursive_doubling"]
            assert t_big["one_shot"] > t_big["two_shot"]
    # Two ranks: ring, two-shot and recursive doubling move the same bytes.
    assert predicted_seconds("ring", big, 2, 0, beta) == pytest.approx(big * beta)
    assert predicted_seconds("recursive_doubling", big, 2, 0, beta) == pytest.approx(big * beta)
    with pytest.raises(ValueError, match="unknown"):
        predicted_seconds("tree", 8, 2, alpha, beta)

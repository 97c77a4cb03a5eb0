"""BlockPool bookkeeping: allocation, sharing, double-free detection, integrity."""

from __future__ import annotations

import pytest

from reference_engine.block_pool import BlockPool, BlockPoolError


def test_allocate_share_and_free_round_trip() -> None:
    pool = BlockPool(4)
    a, b = pool.allocate(2)
    assert pool.num_free == 2 and pool.ref_count(a) == 1
    pool.incref(a)
    assert pool.decref(a) is False  # still held by the second holder
    assert pool.decref(a) is True
    pool.free([b])
    assert pool.num_free == 4
    pool.check_integrity({})


def test_double_free_and_sharing_a_free_block_are_errors() -> None:
    pool = BlockPool(2)
    (a,) = pool.allocate(1)
    pool.decref(a)
    with pytest.raises(BlockPoolError, match="double free"):
        pool.decref(a)
    with pytest.raises(BlockPoolError, match="free block"):
        pool.incref(a)


def test_allocation_is_all_or_nothing() -> None:
    pool = BlockPool(3)
    with pytest.raises(BlockPoolError):
        pool.allocate(4)
    assert pool.num_free == 3


def test_integrity_catches_unaccounted_references() -> None:
    pool = BlockPool(3)
    (a,) = pool.allocate(1)
    pool.check_integrity({a: 1})
    with pytest.raises(BlockPoolError, match="holders account"):
        pool.check_integrity({})
    pool.incref(a)
    with pytest.raises(BlockPoolError, match="holders account"):
        pool.check_integrity({a: 1})

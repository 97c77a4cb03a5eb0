"""Objects reached by tuple unpacking: a pair fetched from a typed mapping, a pair
of attributes, a pair returned by a method."""

from __future__ import annotations


class Block:
    def __init__(self, block_id: int) -> None:
        self.block_id = block_id
        self.ref_cnt = 0


class Manager:
    def __init__(self) -> None:
        self.hits: dict[str, tuple[int, Block]] = {}
        self.free: list[Block] = []
        self.used: list[Block] = []

    def cow(self, rid: str) -> None:
        hit = self.hits.get(rid)
        if hit is not None:
            _idx, source = hit
            source.ref_cnt += 1

    def pop_hit(self, rid: str) -> int:
        idx, _source = self.hits.pop(rid)  # reads the block only
        return idx

    def swap(self) -> None:
        src, dst = self.free, self.used
        dst.append(src.pop())

    def pair(self) -> tuple[int, Block]:
        return 0, Block(0)

    def bump_pair(self) -> None:
        _, block = self.pair()
        block.ref_cnt -= 1

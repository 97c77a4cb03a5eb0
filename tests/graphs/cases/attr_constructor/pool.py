# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class BlockPool:
    def allocate(self, n):
        return list(range(n))


class KVCacheManager:
    def __init__(self):
        self.block_pool = BlockPool()

    def allocate_slots(self, n):
        return self.block_pool.allocate(n)

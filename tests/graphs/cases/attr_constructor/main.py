# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from pool import KVCacheManager


class Scheduler:
    def __init__(self):
        self.kv_cache_manager = KVCacheManager()

    def schedule(self):
        return self.kv_cache_manager.allocate_slots(4)


Scheduler().schedule()

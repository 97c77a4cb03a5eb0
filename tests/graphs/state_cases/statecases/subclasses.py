"""State declared by a base class, written by its subclasses and their overrides."""


class Cache:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.evictable = 0

    def lock(self, n: int) -> None:
        self.evictable -= n


class HiCache(Cache):
    def __init__(self) -> None:
        super().__init__()
        self.evictable = 0  # re-declared: still the base's attribute

    def lock(self, n: int) -> None:
        self.evictable -= 2 * n

    def load_back(self, n: int) -> None:
        self.evictable += n


class TinyCache(HiCache):
    def evict(self) -> int:
        return self.evictable

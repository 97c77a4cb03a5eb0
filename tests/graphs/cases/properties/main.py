# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Pool:
    def __init__(self):
        self.blocks = []

    @property
    def num_free(self) -> int:
        return len(self.blocks)


class Manager:
    def __init__(self, pool: Pool):
        self.pool = pool

    @property
    def usage(self):
        return self.pool.num_free

    def report(self):
        return self.usage

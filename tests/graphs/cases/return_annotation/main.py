# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Block:
    def free(self):
        pass


class Pool:
    def get(self) -> Block:
        return Block()

    def chain(self) -> "Pool":
        return self


def make_pool() -> Pool:
    return Pool()


def run():
    make_pool().get().free()
    p = make_pool()
    b = p.chain().get()
    b.free()

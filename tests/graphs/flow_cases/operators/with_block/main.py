# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Lock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def critical(lock: Lock):
    with lock:
        pass


critical(Lock())

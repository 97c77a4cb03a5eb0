# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# An object handed to a constructor (or a function) is what its parameter
# holds: a method called on it is that object's class's, not every method of
# that name in the program.
class Disk:
    def flush(self):
        pass


class Cache:
    def flush(self):
        pass


class Writer:
    def __init__(self, target):
        self.target = target

    def close(self):
        self.target.flush()


class Service:
    def __init__(self):
        self.disk = Disk()

    def stop(self):
        w = Writer(self.disk)
        w.close()


def drain(store):
    store.flush()


Service().stop()
drain(Cache())

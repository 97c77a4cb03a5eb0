# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `go` is called through a table twice: once with an A, once with whatever
# `relay` was given (`relay` itself is handed to `map`, so its parameter is
# not known here). `task.run()` may then be any `run`, not only A's.
class A:
    def run(self):
        pass


class B:
    def run(self):
        pass


def go(task):
    task.run()


TABLE = {"go": go}


def relay(thing):
    TABLE["go"](thing)


TABLE["go"](A())
list(map(relay, [B()]))

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `for key, handler in d.items()` with `d: dict[str, Handler]`: the loop's second
# name is a value of the mapping (a Handler), as `for h in d.values()` is; the
# call on it is Handler's, not a guess at every class with a `run`, and the bound
# method passed there is what `run` calls.
class Handler:
    def run(self, key, callback):
        return callback(key)


class Logger:
    def run(self, key, callback):
        return None


class Table:
    def __init__(self):
        self.handlers: dict[str, Handler] = {}

    def register(self, key, handler):
        self.handlers[key] = handler

    def on_key(self, key):
        return key

    def dispatch(self):
        return {key: handler.run(key, self.on_key) for key, handler in self.handlers.items()}


def main(make):
    table = Table()
    table.register("a", make())
    return table.dispatch()


main(Handler)

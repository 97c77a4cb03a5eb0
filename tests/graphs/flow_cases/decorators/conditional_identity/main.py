# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A decorator factory that returns the function itself unless enabled (the
# pattern of sglang's `eager_on_graph`): the name holds the function or the
# wrapper, never another function decorated the same way.
def eager(enabled):
    def decorator(inner):
        if not enabled:
            return inner

        def wrapper():
            return inner()

        return wrapper

    return decorator

@eager(False)
def load():
    pass

@eager(False)
def store():
    pass

load()

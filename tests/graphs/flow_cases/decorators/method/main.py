# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def logged(f):
    def wrapper(self):
        return f(self)
    return wrapper

class A:
    @logged
    def run(self):
        pass

A().run()

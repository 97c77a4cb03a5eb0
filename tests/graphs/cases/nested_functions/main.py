# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def outer():
    def inner():
        return leaf()

    def other():
        return inner()

    return other()


def leaf():
    return 0


class Engine:
    def step(self):
        def helper():
            return self.finish()

        return helper()

    def finish(self):
        return 1

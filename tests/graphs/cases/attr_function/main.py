# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def greedy(x):
    return x


def sample(x):
    return x


class Sampler:
    def __init__(self, use_greedy: bool):
        self.fn = greedy
        self.alt = sample

    def __call__(self, x):
        return self.fn(x)

    def other(self, x):
        return self.alt(x)


def run():
    s = Sampler(True)
    s(1)

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import functools


class Stage:
    def run(self, x):
        return x + 1

    def rank(self):
        return 0


class Report:
    # Same method names on an unrelated class: a guess by name would reach these.
    def run(self, x):
        return x

    def rank(self):
        return 1


def pipeline(stages: list[Stage], x):
    # A lambda's parameter is bound to the elements of what the builtin walks.
    ordered = sorted(stages, key=lambda s: s.rank())
    return functools.reduce(lambda acc, stage: stage.run(acc), ordered, x)


def report(stages: list[Stage]):
    return list(map(lambda s: s.rank(), stages))


pipeline([Stage(), Stage()], 1)
report([Stage()])
Report()

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `tuple(gen(...))` and `list(gen(...))` run the generator to its end where they
# are called: what they return holds its values, and a function that iterates
# that list later resumes no generator. `live` passes the generator itself.
def gen(xs):
    for x in xs:
        yield x


def consume(items):
    for i in items:
        pass


def count(items):
    return len(list(items))


def run():
    t = tuple(gen([1, 2]))
    consume(t)
    lst = list(gen([3]))
    count(lst)


def live():
    consume(gen([4]))


run()
live()

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A decorator that hands back `staticmethod(wrapper)` (Pygments' `make_analysator`):
# the class attribute is the wrapper, so `Tool.double(3)` and `Tool().triple(2)`
# reach `counted.wrapper`, which calls each original; `plain` is not decorated.
def counted(f):
    def wrapper(*args):
        return f(*args)

    return staticmethod(wrapper)


class Tool:
    @counted
    def double(x):
        return 2 * x

    @counted
    def triple(x):
        return 3 * x

    def plain(self):
        return Tool.double(1)


def main():
    return Tool.double(3) + Tool().triple(2) + Tool().plain()


main()

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `self` in `OneOf.check` is a OneOf, or an object of a subclass that inherits
# `check`: `AllOf` replaces `check` without deferring to it, and `Silent`
# replaces it with a class attribute, so `self.message()` there never runs
# their `message`; `Logged` defers through `super()`, so its `message` may run.
class OneOf:
    def message(self):
        return "one"

    def check(self, value):
        return self.message()


class AllOf(OneOf):
    def message(self):
        return "all"

    def check(self, value):
        return [self.message() for v in value]


class Logged(OneOf):
    def message(self):
        return "logged"

    def check(self, value):
        return super().check(value)


class Silent(OneOf):
    check = None

    def message(self):
        return "silent"


def main():
    OneOf().check(1)
    AllOf().check([1])
    Logged().check(2)
    Silent().message()


main()

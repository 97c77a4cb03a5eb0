# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# Functions called only through a table: their first parameter is the object
# passed at the table's call site (a Validator), so `validator.is_type(...)` is
# Validator's method, not every method of that name (TypeChecker's too).
class TypeChecker:
    def is_type(self, instance, kind):
        return isinstance(instance, int)


class Validator:
    def __init__(self):
        self.checker = TypeChecker()

    def is_type(self, instance, kind):
        return self.checker.is_type(instance, kind)

    def run(self, instance):
        for name, check in KEYWORDS.items():
            check(self, instance)


def minimum(validator, instance):
    if validator.is_type(instance, "number"):
        pass


def maximum(validator, instance):
    return validator.is_type(instance, "number")


KEYWORDS = {"minimum": minimum, "maximum": maximum}
Validator().run(3)

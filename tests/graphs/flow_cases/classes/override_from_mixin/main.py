# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A base's method calls another method the base defines, but a subclass lists
# a mixin first whose method of that name wins in the subclass's MRO: on such
# an instance the mixin's version runs, on a plain one the base's.
class AliasMixin:
    def alias(self):
        return "a"


class Node:
    def alias(self):
        return None

    def name(self):
        return self.alias()


class Named(AliasMixin, Node):
    pass


Named().name()
Node().name()

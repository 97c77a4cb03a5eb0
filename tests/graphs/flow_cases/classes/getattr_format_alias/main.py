# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# The dispatch names of getattr_lower_alias spelt with str.format and with `%`:
# `"_visit_{cls}".format(cls=...)` into a local, folded to lower case, and
# `"_leave_%s" % name` in place. Each reaches its own prefix's family (the
# lower-case members for the folded one) and its default; never the other
# family, nor `_visit_Where`, which `.lower()` cannot spell.
class Where:
    pass


class Walker:
    def visit(self, node):
        func_name = "_visit_{cls}".format(cls=type(node).__name__)
        func = getattr(self, func_name.lower(), self._visit_default)
        func(node)

    def leave(self, node, name):
        getattr(self, "_leave_%s" % name, self._leave_default)(node)

    def _visit_where(self, node):
        pass

    def _visit_Where(self, node):
        pass

    def _visit_default(self, node):
        pass

    def _leave_where(self, node):
        pass

    def _leave_default(self, node):
        pass


Walker().visit(Where())
Walker().leave(Where(), "where")

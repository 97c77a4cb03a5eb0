# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A dispatch name built by an f-string into a local, folded to lower case and
# looked up with a default: the lower-case methods of that prefix, or the
# default when the node's class has none (never `_process_Where`, which
# `.lower()` cannot spell).
class Where:
    pass


class Other:
    pass


class Filter:
    def process(self, node):
        func_name = f"_process_{type(node).__name__}"
        func = getattr(self, func_name.lower(), self._process_default)
        func(node)

    def _process_where(self, node):
        pass

    def _process_Where(self, node):
        pass

    def _process_default(self, node):
        pass


Filter().process(Where())
Filter().process(Other())

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# Visitor dispatch by name (jinja2's NodeVisitor, its parser's `parse_<token>`):
# `getattr(self, f"visit_{...}")` is one of the methods whose name has that prefix.
class Visitor:
    def get_visitor(self, node):
        return getattr(self, f"visit_{type(node).__name__}", None)

    def visit(self, node):
        f = self.get_visitor(node)
        if f is not None:
            return f(node)
        return None

    def helper(self, node):
        return node


class Printer(Visitor):
    def visit_Name(self, node):
        return node

    def visit_Const(self, node):
        return node


class Name:
    pass


Printer().visit(Name())

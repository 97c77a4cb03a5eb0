# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `getattr(self, f"visit_{type(node).__name__}")` with `node: Node | list`: the
# name may be `visit_list` too (a list is not a project class), so the
# annotation bounds nothing and every `visit_` method stays a callee.
class Node:
    pass


class Name(Node):
    pass


class Visitor:
    def visit(self, node: "Node | list"):
        f = getattr(self, f"visit_{type(node).__name__}", None)
        if f is not None:
            return f(node)
        return None

    def visit_list(self, nodes):
        for n in nodes:
            self.visit(n)

    def visit_Name(self, node):
        return "name"


Visitor().visit([Name()])

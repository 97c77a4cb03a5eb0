# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `getattr(self, f"visit_{type(node).__name__}")` with `node` a Node: the name
# is `visit_` + the name of a Node class, so `visit_list` (a method of the same
# family called directly) is not reached through the dispatch.
class Node:
    pass


class Name(Node):
    pass


class Const(Node):
    pass


class Visitor:
    def visit(self, node: Node):
        f = getattr(self, f"visit_{type(node).__name__}", None)
        if f is not None:
            return f(node)
        return self.generic_visit(node)

    def generic_visit(self, node):
        return None

    def visit_list(self, nodes):
        out = []
        for n in nodes:
            out.append(self.visit(n))
        return out

    def visit_Name(self, node):
        return "name"

    def visit_Const(self, node):
        return "const"


Visitor().visit_list([Name(), Const(), Node()])

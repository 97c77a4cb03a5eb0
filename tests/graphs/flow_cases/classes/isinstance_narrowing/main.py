# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# Inside `if isinstance(x, C):` x is a C: a call on it reaches C's method (and its
# subclasses'), not every override the declared type allows; an `elif`, a tuple
# of classes and one operand of an `and` narrow too; a runtime-checkable Protocol
# (matched by structure, not by the MRO) leaves the type as it was.
from typing import List, Protocol, runtime_checkable


class Node:
    def visit(self):
        return "node"


class Leaf(Node):
    def visit(self):
        return "leaf"


class Branch(Node):
    def visit(self):
        return "branch"


class Twig(Branch):
    def visit(self):
        return "twig"


def leaves(nodes: List[Node]):
    for node in nodes:
        if isinstance(node, Leaf):
            node.visit()


def branches(nodes: List[Node], deep):
    for node in nodes:
        if deep and isinstance(node, Branch):
            node.visit()
        elif isinstance(node, (Leaf,)):
            node.visit()


@runtime_checkable
class Closer(Protocol):
    def close(self): ...


class File:
    def close(self):
        return 1


def shut(f: File):
    if isinstance(f, Closer):
        f.close()


def run():
    items = [Node(), Leaf(), Branch(), Twig()]
    leaves(items)
    branches(items, True)
    shut(File())


run()

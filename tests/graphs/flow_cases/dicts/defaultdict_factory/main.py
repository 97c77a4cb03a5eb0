# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# `defaultdict(factory)` calls its factory when a missing key is read (`d[k]`,
# `d[k].append(...)`, `d[k] += 1`), in the function that reads it; the value
# then is what the factory returned. Storing (`d[k] = v`) and `.get` call nothing.
from collections import defaultdict


class Tree:
    def __init__(self):
        self.children = defaultdict(self.__class__)

    def child(self, name):
        return self.children[name]

    def size(self):
        return 1


def zero():
    return 0


def fresh():
    return Tree()


def count(words):
    counts = defaultdict(zero)
    for w in words:
        counts[w] += 1
    return counts


def group(pairs):
    groups = defaultdict(list)
    for k, v in pairs:
        groups[k].append(v)
    return groups


def lookup(name):
    table = defaultdict(fresh)
    table["seen"] = Tree()
    table.get("other")
    return table[name].size()


t = Tree()
t.child("a").child("b")
count(["x", "y", "x"])
group([(1, 2)])
lookup("new")

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import os.path
from collections import deque


def run(paths):
    q = deque(paths)
    print(len(q), os.path.join("a", "b"))
    return max(q)

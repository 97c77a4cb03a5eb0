import os.path
from collections import deque


def run(paths):
    q = deque(paths)
    print(len(q), os.path.join("a", "b"))
    return max(q)

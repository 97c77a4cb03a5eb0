# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from base import Module


class Linear(Module):
    def forward(self, x):
        return x + 1


class Net(Module):
    def __init__(self):
        super().__init__()
        self.proj = Linear()

    def forward(self, x):
        return self.proj(x)

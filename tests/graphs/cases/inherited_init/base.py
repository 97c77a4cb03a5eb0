# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Module:
    def __init__(self):
        self.training = True

    def __call__(self, x):
        return self.forward(x)

    def forward(self, x):
        return x

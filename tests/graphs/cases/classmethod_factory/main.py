# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Config:
    def __init__(self, n):
        self.n = n

    @classmethod
    def from_dict(cls, d) -> "Config":
        return cls(d["n"])

    def validate(self):
        return self.n > 0


def load():
    cfg = Config.from_dict({"n": 1})
    cfg.validate()

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Base:
    def __init__(self):
        self.setup()

    def setup(self):
        pass

    @classmethod
    def create(cls):
        return cls()

    @staticmethod
    def util():
        return 0


class Child(Base):
    def __init__(self):
        super().__init__()
        self.util()

    def setup(self):
        super().setup()

    @classmethod
    def make(cls):
        return cls.create()


Child.make()

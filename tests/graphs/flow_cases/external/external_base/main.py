# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from ext import Base


class A(Base):
    def go(self):
        self.helper()

A().go()

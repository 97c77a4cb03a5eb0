# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A function imported under another name is still called there: its parameter
# holds what both callers pass, not only the caller that spells its name.
from jobs import execute
from jobs import execute as launch


class Build:
    def run(self):
        pass


class Deploy:
    def run(self):
        pass


execute(Build())
launch(Deploy())

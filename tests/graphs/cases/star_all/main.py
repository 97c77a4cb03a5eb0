# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from lib import *


def run():
    public()


run()

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from ext import Client


def use():
    c = Client()
    c.fetch()

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import pkg
from pkg import start

engine = start()
pkg.Engine().step()

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from first import *
from second import *

handler()
only_first()

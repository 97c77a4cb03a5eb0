# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import sys


def a():
    pass

def b():
    pass

if len(sys.argv) > 1_000_000:
    fn = a
else:
    fn = b
fn()

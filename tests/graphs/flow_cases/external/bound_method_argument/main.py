# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A bound method of an external class's instance, passed as an argument and
# called inside the callee, is that external method.
from ext import Session


def retry(action):
    action()


s = Session()
retry(s.close)

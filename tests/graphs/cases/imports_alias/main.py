# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import util
import util as u
from util import helper as h


def run():
    util.helper()
    u.other()
    h()


run()

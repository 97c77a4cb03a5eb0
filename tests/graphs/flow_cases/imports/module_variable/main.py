# ruff: noqa  (deliberately unidiomatic: the patterns under test)
import config

config.HOOK()

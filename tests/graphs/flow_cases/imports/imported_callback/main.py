# ruff: noqa  (deliberately unidiomatic: the patterns under test)
from runner import run
from tools import job

run(job)

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
def execute(task):
    task.run()

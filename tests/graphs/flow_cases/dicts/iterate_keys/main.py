# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# Iterating a dict yields its keys: `for name in self.jobs` binds the string
# keys, not the Job objects stored as values (so `f"{name!r}"` runs str's repr,
# not Job's); `.values()` and `.items()` yield the values, `jobs[name]` reads one.
class Job:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "job"

    def run(self):
        return 1


def on_start():
    return 0


class Runner:
    def __init__(self):
        self.jobs = {}
        self.hooks = dict(start=on_start)

    def add(self, names):
        for name in names:
            job = Job(name)
            self.jobs[job.name] = job

    def report(self):
        for name, job in self.jobs.items():
            job.run()
        for job in self.jobs.values():
            job.run()
        for key in self.hooks:
            self.hooks[key]()
        return ", ".join(f"{name!r}" for name in self.jobs)


def main():
    runner = Runner()
    runner.add(["a", "b"])
    return runner.report()


main()

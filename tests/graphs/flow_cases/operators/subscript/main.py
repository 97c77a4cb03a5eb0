# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class Table:
    def __init__(self):
        self.rows = {}

    def __getitem__(self, key):
        return self.rows[key]

    def __setitem__(self, key, value):
        self.rows[key] = value

    def __contains__(self, key):
        return key in self.rows

    def __len__(self):
        return len(self.rows)


def fill(table: Table):
    table["a"] = 1
    if "a" in table:
        return table["a"] + len(table)


fill(Table())

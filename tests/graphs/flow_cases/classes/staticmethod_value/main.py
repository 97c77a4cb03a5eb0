# ruff: noqa  (deliberately unidiomatic: the patterns under test)
class A:
    @staticmethod
    def s():
        pass

fn = A.s
fn()

# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A method of the object handed to `super().m(...)` lands in the parameter of
# the method `super()` finds (the next class of the MRO), as for any call of it:
# parso's `super().__init__(..., tokenizer=self._tokenize_lines)`, stored in a
# field and called later by the base class.
class Base:
    def __init__(self, text, *, tokenizer):
        self.text = text
        self._tokenizer = tokenizer

    def run(self):
        return self._tokenizer(self.text)


class Grammar(Base):
    def __init__(self, text):
        super().__init__(text, tokenizer=self._tokenize)

    def _tokenize(self, text):
        return [text]


Grammar("a b").run()

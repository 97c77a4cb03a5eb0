# ruff: noqa  (deliberately unidiomatic: the patterns under test)
# A tokenizer method stored on the grammar returns a generator; the parser a grammar
# makes from its stored class wraps it in a generator of its own and hands that on
# through `super()` to the loop that drives both (parso's grammar and parser); without
# recovery the tokenizer's own generator is handed on.
def tokenize_lines(lines):
    for line in lines:
        yield line


class BaseGrammar:
    def __init__(self, tokenizer, parser):
        self._tokenizer = tokenizer
        self._parser = parser

    def parse(self, lines, recovery=True):
        tokens = self._tokenizer(lines)
        p = self._parser(recovery)
        return p.parse(tokens=tokens)


class Grammar(BaseGrammar):
    def __init__(self):
        super().__init__(tokenizer=self._tokenize_lines, parser=Parser)

    def _tokenize_lines(self, lines):
        return tokenize_lines(lines)


class BaseParser:
    def __init__(self, recovery):
        self._recovery = recovery

    def parse(self, tokens):
        out = []
        for token in tokens:
            out.append(token)
        return out


class Parser(BaseParser):
    def parse(self, tokens):
        if self._recovery:
            tokens = self._recovery_tokenize(tokens)
        return super().parse(tokens)

    def _recovery_tokenize(self, tokens):
        for token in tokens:
            yield token


g = Grammar()
g.parse(["a", "b"])
g.parse(["c"], recovery=False)

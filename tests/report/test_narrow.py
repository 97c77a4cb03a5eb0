"""Narrowing a step cell's excerpt to the lines that do the step (analyzer/report/narrow.py)."""

from __future__ import annotations

from analyzer.report.narrow import Kept, call_lines, calls_of, narrow, signature_end

# A synthetic 30-line method (file lines 3..32); the step goes on through `self._admit(`.
SOURCE = '''\
class Scheduler:

    def schedule(self, budget: int,
                 now: float) -> list[int]:
        """Pick what runs."""
        out = []
        a = 1
        b = 2
        c = 3
        d = 4
        for req in self.waiting:
            if req.blocked:
                continue
            e = 5
            f = 6
            g = 7
            if budget > 0:
                h = 8
                i = 9
                j = 10
                k = 11
            else:
                self._admit(
                    req,
                    now,
                )
            m = 12
        n = 13
        o = 14
        p = 15
        return out
'''
LINES = SOURCE.splitlines()


def test_signature_spans_its_continuation_lines() -> None:
    assert signature_end(LINES, 3, 32) == 4


def test_calls_of_finds_the_call_by_its_short_name_only_in_the_body() -> None:
    assert calls_of(LINES, 3, 32, "pkg.sched.Scheduler._admit") == {23}
    assert calls_of(LINES, 3, 32, "pkg.sched.Scheduler.schedule") == set()  # the def line is not a call
    assert call_lines(LINES, 3, 32, ["budget > 0"]) == {17}


def test_narrow_keeps_signature_headers_the_whole_call_and_context() -> None:
    # Expected before running: the signature (3-4); the `for` header (11); the `else:` (22)
    # of the `if` the call sits in, and its header (17); the call statement 23-26 plus
    # one line of context either side (22, 27). Gaps of 1-2 lines are shown, not elided:
    # 5..10 (6 lines) and 12..16 (5 lines) and 18..21 (4 lines) and 28..32 (5) are elided.
    kept = narrow(LINES, 3, 32, {23})
    assert kept == [Kept(3, 4), Kept(11, 11), Kept(17, 17), Kept(22, 27)]


HEAD = ["def leaf(x):", '    """Summary line.', "", "    More words.", '    """', "",
        *(f"    v{i} = {i}" for i in range(20)), "    return x"]


def test_short_symbol_stays_whole_and_nothing_to_focus_keeps_the_head() -> None:
    assert narrow(LINES, 11, 16, {13}) is None  # 6 lines: shown whole
    # Nothing leads on: signature (1), the docstring's first line (2), then 12 lines of code
    # after the docstring, not starting on the blank line 6: 7..17 (v0..v10).
    assert narrow(HEAD, 1, len(HEAD), set()) == [Kept(1, 2), Kept(7, 17)]


def test_narrowing_that_would_hide_only_a_few_lines_shows_the_symbol_whole() -> None:
    # 17 lines, head mode: 1, 2 and 7..17 kept, only 3..6 (4 lines) hidden: not worth a cut.
    assert narrow(HEAD[:17], 1, 17, set()) is None
    # 18 lines: line 18 is hidden too, 5 in all: cut.
    assert narrow(HEAD[:18], 1, 18, set()) == [Kept(1, 2), Kept(7, 17)]


def test_a_kept_run_does_not_start_on_a_blank_line() -> None:
    # Focus on `v0 = 0` (line 7): context 6..8, but line 6 is blank, so the run is 7..8.
    assert narrow(HEAD, 1, len(HEAD), {7}) == [Kept(1, 1), Kept(7, 8)]

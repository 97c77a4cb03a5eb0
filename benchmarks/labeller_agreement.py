"""How far two labellers who labelled the same text independently agree.

`python benchmarks/labeller_agreement.py` compares held-out 163's labels of its sglang-note excerpt
with the second, blind labelling of the same excerpt that held-out 161's labeller made
(`real_docs/agreement_h161_vs_h163.txt`): rows both labelled, rows labelled alike, and the broken
rows of each, with one labeller's broken set measured against the other's (precision, recall).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_real_docs import ROOT, Label, load_corpus, parse_labels

DOC = "heldout163/h163_blog_sglang_radix_attention_kvcache_zh.md"


def _rows(labels: list[Label]) -> dict[tuple[int, str], Label]:
    return {(label.line, label.text): label for label in labels if label.doc == DOC}


def main() -> None:
    first = _rows(load_corpus(["heldout163"])[0])
    second = _rows(parse_labels(ROOT / "agreement_h161_vs_h163.txt"))
    both = first.keys() & second.keys()
    alike = sum(first[k].labels == second[k].labels for k in both)
    broken_first = {k for k, label in first.items() if "broken" in label.labels.values()}
    broken_second = {k for k, label in second.items() if "broken" in label.labels.values()}
    shared = broken_first & broken_second
    print(f"{DOC}: rows {len(first)} (held-out 163) and {len(second)} (second labeller); {len(both)} labelled by both, {alike} alike")
    print(f"broken: {len(broken_first)} and {len(broken_second)}, {len(shared)} in both; the second labeller against the first: "
          f"precision {len(shared) / len(broken_second):.3f}, recall {len(shared) / len(broken_first):.3f}")


if __name__ == "__main__":
    main()

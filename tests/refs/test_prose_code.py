"""Names written like code in CJK prose, outside code font (`prose_code.py`), from a Chinese note on
SGLang's pipeline parallelism: `object.member` names are read as the same text in code font is;
bare words, file names and English prose are not."""

from __future__ import annotations

from analyzer.refs.extract import extract_references
from analyzer.refs.prose_code import prose_names


def test_dotted_names_with_an_underscore_or_a_call_are_code() -> None:
    got = [p.text for p in prose_names("随后写入 batch.output_ids，最后 append 到每个 req.output_ids。会 tree_cache.cache_unfinished_req(req)，把")]
    assert got == ["batch.output_ids", "req.output_ids", "tree_cache.cache_unfinished_req(req)"]


def test_bare_words_files_and_hosts_are_not() -> None:
    assert prose_names("可用的 kv_cache 内存 = gpu_mem * util%，增加 user_id 字段") == []
    assert prose_names("见 model_runner.py 和 docs.vllm.ai，e.g. 这里") == []


def test_only_paragraphs_with_cjk_text_are_read() -> None:
    doc = "# SGLang\n\n随后写入 batch.output_ids，最后 append 到每个 req.output_ids。\n\nIn English, batch.output_ids stays prose.\n"
    found = extract_references("doc.md", doc)
    refs = [(r.line, r.text) for r in found]
    assert (3, "batch.output_ids") in refs and (3, "req.output_ids") in refs
    # English prose gives only names a past release must vouch for (`Reference.past`, `--past`).
    assert all(r.past for r in found if r.line == 5)

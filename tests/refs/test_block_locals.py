"""Names a text block makes its own (`block_locals.py`), and a project named in Chinese prose."""

from __future__ import annotations

from analyzer.refs.block_locals import bound_names, enumerated
from analyzer.refs.check import extract_all
from analyzer.refs.framework import document_project, mentions

PASTED = """\
vLLM的Runner会调用模型：

```
    def execute_model(self, model_input, kv_caches):
        model_executable = self.model
        for layer_idx, layer in enumerate(self.layers):
            pass
        hidden_states = model_executable(input_ids=model_input.input_tokens)
        return self.prepare_output(hidden_states)
```

块表的结构：

```
Block Manager
├── Block Tables
│   └── seq_id -> [block_0, block_1, ...]
└── Prefix Cache
    └── hash -> cached_block
```
"""


def test_bound_names_of_pasted_code() -> None:
    lines = PASTED.splitlines()
    assert {"model_executable", "hidden_states", "layer_idx", "layer"} <= bound_names(lines)
    assert "input_ids" not in bound_names(lines)  # a keyword argument, not a binding
    assert "x" not in bound_names(["if x == 1:"])


def test_enumerated_placeholders() -> None:
    assert enumerated("block_0", "seq_id -> [block_0, block_1, ...]")
    assert not enumerated("block_0", "seq_id -> [block_0]")
    assert not enumerated("cached_block", "hash -> cached_block")


def test_a_block_variable_and_placeholders_are_not_references() -> None:
    texts = {r.text for r in extract_all([("note.md", PASTED)])}
    assert not {"model_executable", "block_0", "block_1"} & texts
    assert "cached_block" in texts  # a name of the diagram stays a reference
    assert any(t.startswith("self.prepare_output") or t == "prepare_output" for t in texts)


def test_project_named_against_chinese_words() -> None:
    # Python's \\w counts CJK letters: "vLLM的" must still name vLLM.
    assert [fw for _, fw in mentions("vLLM的Scheduler和最终调用vllm/core文件")] == ["vllm", "vllm"]
    assert document_project("vLLM使用如下。vLLM代码结构。最终调用vllm/model_executor中的函数。")[0] == "vllm"
    assert mentions("nano-vllm的代码") == []


def test_a_heading_that_is_a_file_name_cites_the_file() -> None:
    doc = "# vLLM 源码\n\n## block_manager.py\n\n- BlockTable: 页表\n\n## 总结 scheduler.py 很长\n"
    paths = [(r.line, r.text) for r in extract_all([("n.md", doc)]) if r.kind == "path"]
    assert paths == [(3, "block_manager.py")]  # a heading that only mentions a file among words is prose

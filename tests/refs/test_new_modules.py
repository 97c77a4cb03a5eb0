"""A module an add-a-model guide shows the reader how to write (SGLang's diffusion guide: a snippet
headed `# python/sglang/.../dits/mymodel.py`), imported by a later snippet of the same guide: the
reader's new file, not a stale module; an import from a module the guide never wrote stays judged."""

from __future__ import annotations

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.models import BROKEN, NOT_CHECKABLE
from analyzer.refs.pinview import PinView

GUIDE = """\
# Adding a scheduler to vLLM

```python
# vllm/v1/core/my_sched.py
class MyScheduler:
    def schedule(self):
        ...
```

Then register it:

```python
from vllm.v1.core.my_sched import MyScheduler
from vllm.v1.core.old_sched import LegacyScheduler
```
"""


def test_an_import_of_the_module_the_guide_writes_is_the_readers(vllm30: PinView) -> None:
    found: dict[str, list[str]] = {}
    for f in check_references(extract_all([("guide.md", GUIDE)]), [vllm30]):
        found.setdefault(f.ref.text, []).append(f.status)
    assert "vllm/v1/core/my_sched.py" not in found  # the file to write (check._new_file)
    assert found["vllm.v1.core.my_sched"] == [NOT_CHECKABLE]
    assert found["vllm.v1.core.old_sched"] == [BROKEN]

"""Code-font words of a page that belong to another program by the page's own evidence: its
commands hand them to that program (SGLang's AMD page: docker's options inside an alias, the
image tag it builds), not by a list of programs' words."""

from __future__ import annotations

from analyzer.refs.check import check_references, extract_all
from analyzer.refs.pinview import PinView

AMD_PAGE = """\
# Install on AMD GPUs

1. Build the docker image. With a pre-built image, replace `sglang_image` with its name below.

   ```bash
   docker build -t sglang_image -f Dockerfile.rocm .
   ```

2. Create an alias.

   ```bash
   alias drun='docker run -it --rm --network=host --privileged --device=/dev/kfd \\
       -v /data:/data'
   ```

   - `--network host` and `--privileged` are required by RDMA.

3. Launch the server.

   ```bash
   drun -p 30000:30000 sglang_image \\
       python3 -m sglang.launch_server --model-path some_org/some_model --chunked-prefill-size 4096
   ```
"""


def test_docker_options_and_image_of_the_pages_commands_are_not_sglangs(sglang20: PinView) -> None:
    refs = extract_all([("amd.md", AMD_PAGE)])
    assert not [r for r in refs if r.text == "sglang_image"]  # the image the page builds
    options = [r for r in refs if r.kind == "flag" and r.target in {"--network", "--privileged"}]
    assert options and all(r.tentative for r in options)  # docker's unless a pin has them
    findings = check_references(refs, [sglang20])
    assert not [f for f in findings if f.status == "broken" and f.ref.target in {"--network", "--privileged"}]

"""References inside shell commands: flags of `vllm serve` / `python -m sglang.launch_server`,
env vars set for them, modules run with `python -m`, scripts run by path."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, replace

from analyzer.refs.classify import classify_env, classify_path, env_framework
from analyzer.refs.models import ENV, FLAG, PATH, SYMBOL

# Commands whose flags are the server's own (EngineArgs / ServerArgs).
SERVER_COMMANDS = {
    "vllm serve": "vllm",
    "vllm.entrypoints.openai.api_server": "vllm",
    "vllm.entrypoints.api_server": "vllm",
    "sglang serve": "sglang",
    "sglang.launch_server": "sglang",
}
# The server command whose parser a wrapper of each engine forwards its options to.
_SERVER_OF = {"vllm": "vllm serve", "sglang": "sglang.launch_server"}


def _serving_wrapper(module: str) -> str | None:
    """The engine a module of another project serves with (`dynamo.sglang`, `dynamo.vllm.worker`:
    a part named after the engine, under another root), or None."""
    parts = module.split(".")
    found = [p for p in parts[1:] if p in _SERVER_OF]
    return found[0] if len(found) == 1 and parts[0] not in _SERVER_OF else None


_WRAPPERS = {"sudo", "env", "time", "nohup", "exec", "command", "$", ">", "numactl", "taskset", "srun", "mpirun"}
# Profilers and launchers that run another command after their own options:
# `nsys profile -o out --trace cuda vllm serve ...`, `ncu --set full python -m ...`.
_LAUNCHERS = {"nsys": {"profile", "launch"}, "ncu": set(), "nvprof": set(), "rocprof": set(), "compute-sanitizer": set(), "cuda-gdb": set()}
_PROJECT_PROGRAMS = {"vllm", "sglang", "python", "python3", "uv", "torchrun"}
# A package manager's verbs: the words after them name packages (`pip install vllm sglang`).
_PACKAGE_VERBS = {"install", "uninstall", "download", "show", "add", "remove"}
_SEPARATORS = {"&&", "||", "|", ";", "&"}
_ASSIGN_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=")
_SHORT_FLAG_RE = re.compile(r"-[A-Za-z][A-Za-z0-9]{0,3}(?:=.*)?")
_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# How a program is named on a command line (`docker`, `drun`, `huggingface-cli`), unlike the first
# word of a log line (`INFO:`, `WARNING`, `[rank0]:`).
_PROGRAM_RE = re.compile(r"[a-z][a-z0-9_.+-]*")
_COMMENT_FLAG_RE = re.compile(r"(?<![\w-])--[A-Za-z0-9][A-Za-z0-9_.-]*[A-Za-z0-9]")
# Groups whose next word names a nested subcommand with its own parser (`vllm bench serve`,
# `vllm launch render`); which ones a pin has is read from its CLI classes (flags/cli_classes.py).
_GROUPS = {"vllm bench", "vllm launch"}
_SCRIPTED_RE = re.compile(r"=\(|<<|\$\{|\$\(|^\s*(?:function\s+\w+|\w+\s*\(\)\s*\{)", re.MULTILINE)
_WORD_RE = re.compile(r"[a-z][a-z0-9-]*")
_QUOTED_OPTIONS_RE = re.compile(r"""^([ \t]*)(["'])(--[A-Za-z][^"'\n]*)\2[ \t]*$""", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ShellRef:
    line: int  # 0-based line inside the snippet
    col: int
    text: str
    kind: str
    target: str
    framework: str | None
    command: str | None
    server_flag: bool = False  # a flag of a server-launching command (checkable against flags)
    value: str | None = None  # a flag's value as written (`--kv-cache-dtype fp8`, `--x=y`)


@dataclass(slots=True)
class _Token:
    text: str  # after shell unquoting
    line: int
    col: int  # -1 when the raw text could not be located
    quoted: bool = False  # written inside quotes in the raw text


def _logical_lines(snippet: str) -> Iterator[list[tuple[int, str]]]:
    """Group physical lines joined by trailing backslashes; drop prompts and comments."""
    group: list[tuple[int, str]] = []
    for idx, raw in enumerate(snippet.splitlines()):
        line = raw
        stripped = line.lstrip()
        if not group and stripped.startswith("#"):
            continue
        group.append((idx, line))
        if line.rstrip().endswith("\\"):
            continue
        yield group
        group = []
    if group:
        yield group


def _tokens(group: list[tuple[int, str]]) -> list[_Token]:
    text = "\n".join(line.rstrip().removesuffix("\\") for _, line in group)
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars="|&;")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words = list(lexer)
    except ValueError:  # unbalanced quotes in a pseudo-command: fall back to whitespace
        words = text.split()
    tokens: list[_Token] = []
    gi, pos = 0, 0
    for word in words:
        found = -1
        for probe in range(gi, len(group)):
            start = pos if probe == gi else 0
            found = group[probe][1].find(word, start)
            if found >= 0:
                gi, pos = probe, found + len(word)
                break
        line_no = group[gi][0]
        raw = group[gi][1]
        quoted = found > 0 and raw[found - 1] in "'\"" and found + len(word) < len(raw) and raw[found + len(word)] in "'\""
        tokens.append(_Token(word, line_no, found, quoted))
    return tokens


def _split_commands(tokens: list[_Token]) -> Iterator[list[_Token]]:
    current: list[_Token] = []
    for tok in tokens:
        if tok.text in _SEPARATORS:
            if current:
                yield current
            current = []
        else:
            current.append(tok)
    if current:
        yield current


def _skip_launcher(tokens: list[_Token], i: int) -> int:
    """Index of the command a profiler or launcher runs, or `i` when there is none."""
    program = tokens[i].text.rsplit("/", 1)[-1]
    if program not in _LAUNCHERS:
        return i
    j = i + 1
    if j < len(tokens) and tokens[j].text in _LAUNCHERS[program]:
        j += 1
    while j < len(tokens):
        word = tokens[j].text
        base = word.rsplit("/", 1)[-1]
        if base in _PROJECT_PROGRAMS or re.fullmatch(r"python[0-9.]*", base):
            return j
        j += 1
    return i


def _inner_command(tokens: list[_Token], i: int) -> int:
    """Index of the project command another program runs (`docker run --privileged IMAGE python3
    -m sglang.launch_server ...`, `ray job submit -- vllm serve ...`, `drun IMAGE ...`), or `i`:
    the flags before it are that program's, the ones after it the project command's."""
    if tokens[i].text.rsplit("/", 1)[-1] in _PROJECT_PROGRAMS or re.fullmatch(r"python[0-9.]*", tokens[i].text.rsplit("/", 1)[-1]):
        return i
    for j in range(i + 1, len(tokens)):
        base = tokens[j].text.rsplit("/", 1)[-1]
        if tokens[j].text in _PACKAGE_VERBS:
            return i  # `pip install vllm transformers`: package names, not a command
        if base in {"vllm", "sglang"} and j + 1 < len(tokens) and _WORD_RE.fullmatch(tokens[j + 1].text):
            return j
        if re.fullmatch(r"python[0-9.]*", base) or base in {"uv", "torchrun"}:
            for k in range(j + 1, len(tokens) - 1):
                if tokens[k].text == "-m":
                    return j if tokens[k + 1].text.split(".", 1)[0] in {"vllm", "sglang"} else i
    return i


def _option_envs(tokens: list[_Token]) -> Iterator[ShellRef]:
    """Env vars another program sets for what it runs (`docker run -e VLLM_X=1 ...`, `--env
    VLLM_X`, `--env=VLLM_X=1`): the project's settings whichever program passes them on."""
    for k, tok in enumerate(tokens):
        if tok.text in {"-e", "--env"} and k + 1 < len(tokens):
            where, col, value = tokens[k + 1], tokens[k + 1].col, tokens[k + 1].text
        elif tok.text.startswith("--env="):
            where, col, value = tok, tok.col + len("--env="), tok.text[len("--env=") :]
        else:
            continue
        name = value.strip("'\"").split("=", 1)[0]
        env = classify_env(name)
        if env is not None:
            yield ShellRef(where.line, col, name, ENV, env.target, env.framework, None)


def _command_refs(
    tokens: list[_Token],
    default: tuple[str, str | None] | None = None,
    seen: list[tuple[int, str, str | None, bool]] | None = None,
    foreign: set[str] | None = None,
    words: set[str] | None = None,
    loose: bool = False,
) -> Iterator[ShellRef]:
    """`loose`: options written alone are the project's (a block of options, not a script)."""
    i = 0
    # Leading `VAR=value` assignments and wrappers.
    while i < len(tokens):
        tok = tokens[i]
        m = _ASSIGN_RE.match(tok.text)
        if m:
            env = classify_env(m.group(1))
            if env is not None:
                yield ShellRef(tok.line, tok.col, m.group(1), ENV, env.target, env.framework, None)
            i += 1
        elif tok.text in _WRAPPERS:
            i += 1
        else:
            break
    if i >= len(tokens):
        return
    i = _skip_launcher(tokens, i)
    if _COMMENT_FLAG_RE.fullmatch(tokens[i].text.removesuffix(":")) and tokens[i].text.endswith(":"):
        # `--context-len: Override the model's max length`: an option described, not given a value.
        tokens = [*tokens[:i], replace(tokens[i], text=tokens[i].text.removesuffix(":"))]
    direct = True  # the line runs the project's program itself, not another program naming it
    if (inner := _inner_command(tokens, i)) > i:
        direct = False
        outer = tokens[i + 1 : inner]
        yield from _option_envs(outer)
        if foreign is not None:
            foreign.update(t.text.split("=", 1)[0] for t in outer if t.text.startswith("--") and len(t.text) > 2)
        if words is not None and _PROGRAM_RE.fullmatch(tokens[i].text.rsplit("/", 1)[-1]):
            words.update(_foreign_words(outer))
        i = inner
    program = tokens[i].text.rsplit("/", 1)[-1]
    rest = tokens[i + 1 :]
    command: str | None = None
    framework: str | None = None
    if _LONG_FLAG_RE.match(tokens[i].text) and default is not None:
        # A fragment of options (`--observability-config '{...}'`): more options for the
        # command the passage runs.
        command, framework = default
        rest = tokens[i:]
        program = ""
    elif loose and _COMMENT_FLAG_RE.fullmatch(tokens[i].text.split("=", 1)[0]):
        # Options alone, no command run before (`--mem-fraction-static 0.7  # or 0.8`): the
        # project's options, judged as a flag written in the prose is, against all its parsers.
        # (Not a rule `----` or an arrow `-->x` of a text block.)
        for k, tok in enumerate(tokens[i:], start=i):
            flag, eq, value = tok.text.partition("=")
            if _COMMENT_FLAG_RE.fullmatch(flag):
                if not eq and k + 1 < len(tokens) and not tokens[k + 1].text.startswith("-"):
                    value = tokens[k + 1].text
                yield ShellRef(tok.line, tok.col, flag, FLAG, flag, None, None, False, value or None)
        return
    if program == "export":
        for tok in rest:
            m = _ASSIGN_RE.match(tok.text)
            name = m.group(1) if m else tok.text
            env = classify_env(name)
            if env is not None:
                yield ShellRef(tok.line, tok.col, name, ENV, env.target, env.framework, None)
        return
    if program in {"vllm", "sglang"} and rest and not rest[0].text.startswith("-"):
        command = f"{program} {rest[0].text}"
        framework = program
        first_word = rest[0]
        rest = rest[1:]
        if command in _GROUPS and rest and _WORD_RE.fullmatch(rest[0].text):
            command = f"{command} {rest[0].text}"  # `vllm bench serve`
            rest = rest[1:]
        if direct and _WORD_RE.fullmatch(first_word.text) and tokens[i].line == first_word.line:
            # The subcommand itself (`vllm infer`): one the CLI has, or not (`check._subcommand`).
            yield ShellRef(tokens[i].line, tokens[i].col, command, SYMBOL, command, framework, command)
    elif re.fullmatch(r"python[0-9.]*", program) or program == "uv" or program == "torchrun":
        while rest and rest[0].text in {"run", "python", "python3"}:
            rest = rest[1:]
        if program == "torchrun":
            # torchrun's own options (`--nproc-per-node 2`) come before `-m module` or the script;
            # they are another program's, whatever it runs.
            while rest and rest[0].text != "-m" and not rest[0].text.endswith(".py"):
                if foreign is not None and _LONG_FLAG_RE.match(rest[0].text):
                    foreign.add(rest[0].text.split("=", 1)[0])
                rest = rest[1:]
        if len(rest) >= 2 and rest[0].text == "-m":
            module_tok = rest[1]
            module = module_tok.text
            root = module.split(".", 1)[0]
            if root in {"vllm", "sglang"}:
                framework = root
                command = module
                yield ShellRef(module_tok.line, module_tok.col, module, SYMBOL, module, root, None)
            elif (served := _serving_wrapper(module)) is not None:
                # `python3 -m dynamo.sglang --model-path ...`: another project's worker for the
                # engine, which hands its options to the engine's own server parser.
                framework, command = served, _SERVER_OF[served]
            rest = rest[2:]
        elif rest and not rest[0].text.startswith("-"):
            script_tok = rest[0]
            path = classify_path(script_tok.text)
            if path is not None and not path.bare_file:  # `python test.py`: the reader's own script
                framework = path.framework
                command = script_tok.text
                yield ShellRef(script_tok.line, script_tok.col, script_tok.text, PATH, path.target, path.framework, None)
            rest = rest[1:]
    if command is None:
        yield from _option_envs(tokens[i:])
        if foreign is not None and _PROGRAM_RE.fullmatch(program):
            # (A quoted error, `ValueError: --x=N requires ...`, runs no program.)
            foreign.update(t.text.split("=", 1)[0] for t in tokens[i + 1 :] if t.text.startswith("--") and len(t.text) > 2)
            if program == "alias":
                # `alias drun='docker run --network=host --privileged ...'`: the value is a command.
                for tok in rest:
                    if "=" in tok.text:
                        foreign |= foreign_flags(" ".join(tok.text.split("=", 1)[1].split()))
        if words is not None and _PROGRAM_RE.fullmatch(program):
            # (A line of output in a console block, `INFO: swap_space is deprecated`, runs nothing.)
            words.update(_foreign_words(tokens[i + 1 :]))
        return  # not a vLLM/SGLang command: its flags (`pip install --upgrade`) are not references
    server = command in SERVER_COMMANDS
    if seen is not None:
        seen.append((tokens[0].line, command, framework, server))
    for k, tok in enumerate(rest):
        if _LONG_FLAG_RE.match(tok.text):
            flag, eq, value = tok.text.partition("=")
            if not eq and k + 1 < len(rest) and not rest[k + 1].text.startswith("-"):
                value = rest[k + 1].text
            yield ShellRef(tok.line, tok.col, flag, FLAG, flag, framework, command, server, value or None)
        elif _SHORT_FLAG_RE.fullmatch(tok.text):
            # `-tp 2`, `-O3`: short options are the parser's too.
            flag = tok.text.split("=", 1)[0]
            yield ShellRef(tok.line, tok.col, flag, FLAG, flag, framework, command, server)
        else:
            env = classify_env(tok.text) if env_framework(tok.text.lstrip("$")) else None
            if env is not None:
                yield ShellRef(tok.line, tok.col, tok.text, ENV, env.target, env.framework, command)


def _comment_flags(snippet: str, commands: list[tuple[int, str, str | None, bool]]) -> list[ShellRef]:
    """Flags written in a comment (`# add --enable-prefix-caching for ...`) belong to the
    command the comment annotates: the next one, else the one before."""
    out: list[ShellRef] = []
    for idx, raw in enumerate(snippet.splitlines()):
        hash_at = raw.find("#")
        if hash_at < 0 or (raw[:hash_at].strip() and raw[hash_at - 1] != " "):
            continue
        comment = raw[hash_at + 1 :]
        if looks_like_command(comment) or "$(" in comment:
            # A command written in the comment (`# export X=$(python3 tool.py --count 4)`, a
            # commented-out `vllm serve ...`): its flags are that command's, not the next one's.
            continue
        after = [c for c in commands if c[0] > idx] or [c for c in reversed(commands) if c[0] < idx]
        if not after:
            continue
        _, command, framework, server = after[0]
        for m in _COMMENT_FLAG_RE.finditer(comment):
            flag = m.group(0)
            out.append(ShellRef(idx, hash_at + 1 + m.start(), flag, FLAG, flag, framework, command, server))
    return out


def shell_refs(snippet: str, default: tuple[str, str | None] | None = None) -> list[ShellRef]:
    """Every reference inside a shell snippet (one or many commands). `default` is the
    (command, framework) an options-only fragment continues, when the passage ran one."""
    refs: list[ShellRef] = []
    commands: list[tuple[int, str, str | None, bool]] = []
    # `"--data-parallel-size 4 --max-num-seqs 256"` alone on its line: options quoted as one
    # string (a preset to paste), read as the fragment they are (quotes blanked: columns stay).
    snippet = _QUOTED_OPTIONS_RE.sub(lambda m: f"{m.group(1)} {m.group(3)} ", snippet)
    # A script (`ARGS=( --x 1 )`, `${VAR}`, `$(...)`, a heredoc) builds other programs' options.
    loose = _SCRIPTED_RE.search(snippet) is None
    for group in _logical_lines(snippet):
        for command in _split_commands(_tokens(group)):
            refs.extend(_command_refs(command, default, commands, loose=loose))
    if "#" in snippet:
        refs.extend(_comment_flags(snippet, commands))
    refs.sort(key=lambda r: (r.line, r.col))
    return refs


# A long option has a letter or digit after its dashes (not a rule `------` of a program's printed output;
# `----dist-init-addr`, an author's slip, is still an option).
_LONG_FLAG_RE = re.compile(r"--+[A-Za-z0-9]")


def foreign_flags(snippet: str) -> set[str]:
    """Flags the snippet passes to other programs (`torchrun --nproc-per-node`, `pip install
    --upgrade`): a text naming them in code font is not naming the projects' flags."""
    found: set[str] = set()
    # (Options written alone, outside a script, are the project's: `shell_refs` cites them.)
    loose = _SCRIPTED_RE.search(snippet) is None
    for group in _logical_lines(snippet):
        for command in _split_commands(_tokens(group)):
            for _ in _command_refs(command, None, None, found, loose=loose):
                pass
    return found


def foreign_words(snippet: str) -> set[str]:
    """Names the snippet hands to other programs as plain arguments (`docker build -t
    sglang_image`, `drun sglang_image python3 -m sglang.launch_server`): the document's own
    names for things outside the projects (an image, a container), not the projects' names."""
    found: set[str] = set()
    for group in _logical_lines(snippet):
        for command in _split_commands(_tokens(group)):
            for _ in _command_refs(command, None, None, None, found):
                pass
    return found


def _foreign_words(tokens: list[_Token]) -> Iterator[str]:
    """Unquoted identifier-shaped arguments of another program's command, up to a project
    command it runs (whose words are that command's). A quoted one may be a search pattern
    (`grep -rn "schedule_batch"`), which names the projects' code: left out."""
    for tok in tokens:
        base = tok.text.rsplit("/", 1)[-1]
        if base in _PROJECT_PROGRAMS or re.fullmatch(r"python[0-9.]*", base):
            return
        if _IDENTIFIER_RE.fullmatch(tok.text) and tok.col >= 0 and not tok.quoted:
            yield tok.text


def last_command(refs: list[ShellRef]) -> tuple[str, str | None] | None:
    """The last vLLM/SGLang command a snippet runs, for fragments that follow it."""
    for ref in reversed(refs):
        if ref.command:
            return ref.command, ref.framework
    return None


def looks_like_command(text: str) -> bool:
    """Whether an inline code span holds a command line rather than a name."""
    first = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    return (
        bool(re.fullmatch(r"python[0-9.]*|vllm|sglang|uv|torchrun|export|env", first))
        or bool(_ASSIGN_RE.match(first))
    ) and " " in text.strip()

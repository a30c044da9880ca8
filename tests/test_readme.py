"""The README tells a new user the truth: its benchmark table is the registry's, by answer kind; its run plan is a plan
mmbatch accepts; every ``mmbatch`` command it shows (``docker run ... mmbatch:IMAGE`` ones included) parses with the
real parser, so every flag and value exists; the commands that use only bundled files (``examples/``) and their own
outputs (``out/``) run as written, in order, from a folder that has the repository's examples; and every ``make``
target and script it runs exists."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from mmbatch.benchmarks.registry import BUILT_IN
from mmbatch.cli import build_parser, main
from mmbatch.plans.read import plan_from_mapping
from tests.conftest import REPO_ROOT

README = REPO_ROOT / "README.md"
OPERATORS = frozenset({";", "&", "&&", "|", "||"})
FILE_SUFFIXES = (".tsv", ".parquet", ".json", ".jsonl", ".html", ".md", ".csv", ".yaml", ".xlsx", ".j2", ".sqlite")
BUNDLED = ("examples/", "out/")
"""Where a command's files must all be for it to run here: the bundled examples, and what earlier commands wrote."""


@dataclass(frozen=True)
class Command:
    """One shell command of a README code block."""

    line: int
    """The README line its block starts on."""
    words: tuple[str, ...]
    """Its words, environment assignments left out."""

    def mmbatch_args(self) -> list[str] | None:
        """The arguments given to mmbatch (after ``mmbatch`` or a ``mmbatch:`` image), None for another program."""
        if self.words[0] == "mmbatch":
            return list(self.words[1:])
        if self.words[0] == "docker":
            image = next((i for i, word in enumerate(self.words) if word.startswith("mmbatch:")), None)
            return None if image is None else list(self.words[image + 1:])
        return None


def blocks(language: str) -> list[tuple[int, str]]:
    """(first line, text) of every fenced ``language`` block of the README."""
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, match.start()) + 2, match.group(1))
            for match in re.finditer(rf"^```{language}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)]


def commands() -> list[Command]:
    """Every command of the README's bash blocks: continuation lines joined, split at ``;``, ``&``, ``|``."""
    found = []
    for line, text in blocks("bash"):
        for logical in text.replace("\\\n", " ").splitlines():
            lexer = shlex.shlex(logical, posix=True, punctuation_chars=";&|")
            lexer.whitespace_split = True
            lexer.commenters = "#"
            words: list[str] = []
            for token in [*lexer, ";"]:
                if token not in OPERATORS:
                    words.append(token)
                    continue
                while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):
                    words.pop(0)  # VARIABLE=value before the program
                if words:
                    found.append(Command(line, tuple(words)))
                words = []
    return found


def mmbatch_commands() -> list[tuple[Command, list[str]]]:
    return [(command, args) for command in commands() if (args := command.mmbatch_args()) is not None]


def file_words(args: list[str]) -> list[str]:
    return [word for word in args if not word.startswith("-") and ("/" in word or word.endswith(FILE_SUFFIXES))]


def runs_here(args: list[str]) -> bool:
    """Whether every file the command names is bundled or written by an earlier command (and it names one)."""
    files = file_words(args)
    return bool(files) and all(word.startswith(BUNDLED) for word in files)


def test_the_readme_shows_commands_of_every_stage() -> None:
    shown = {args[0] for _, args in mmbatch_commands()}
    assert {"prepare", "infer", "extract", "score", "report", "view", "compare", "import", "export", "run", "merge",
            "validate"} <= shown


@pytest.mark.parametrize(("command", "args"), mmbatch_commands(),
                         ids=lambda value: " ".join(value.words[:3]) if isinstance(value, Command) else "")
def test_every_mmbatch_command_parses(command: Command, args: list[str]) -> None:
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        try:
            build_parser().parse_args(args)
        except SystemExit as exc:
            pytest.fail(f"README.md:{command.line}: mmbatch {shlex.join(args)}\n{stderr.getvalue()} (exit {exc.code})")


def test_the_commands_on_bundled_files_run_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "examples").symlink_to(REPO_ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    ran = []
    for command, args in mmbatch_commands():
        if not runs_here(args):
            continue
        assert main(args) == 0, f"README.md:{command.line}: mmbatch {shlex.join(args)}"
        ran.append(args[0])
    assert {"prepare", "infer", "extract", "score", "report", "view", "validate", "import"} <= set(ran)
    assert (tmp_path / "out" / "try" / "report.html").is_file()


def test_the_bundled_commands_are_told_apart_from_the_others() -> None:
    assert runs_here(["prepare", "--input", "examples/x.tsv", "--output", "out/y.parquet"])
    assert not runs_here(["infer", "--input", "out/y.parquet", "--model", "llava-hf/llava-1.5-7b-hf"])
    assert not runs_here(["infer", "--input", "prepared.parquet"])
    assert not runs_here(["list"])


def test_the_benchmark_table_is_the_registry_by_answer_kind() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Benchmarks\n", 1)[1].split("\n## ", 1)[0]
    table = {}
    for row in re.findall(r"^\| `([\w-]+)` \|.*\| ([^|]+) \|$", section, flags=re.MULTILINE):
        kind, cell = row
        table.update({name: kind for name in re.findall(r"`([\w-]+)`", cell)})
    assert table == {benchmark.name: benchmark.kind().name for benchmark in BUILT_IN}


def test_the_readme_plan_is_a_plan(tmp_path: Path) -> None:
    (plan_text,) = [text for _, text in blocks("yaml")]
    plan = plan_from_mapping(yaml.safe_load(plan_text), base=tmp_path, source=None)
    assert len(plan.models) * len(plan.benchmarks) >= 4


def test_the_make_targets_and_scripts_it_runs_exist() -> None:
    makefile = (REPO_ROOT / "Makefile").read_text(encoding="utf-8")
    checked = 0
    for command in commands():
        program, *rest = command.words
        if program == "make":
            for target in rest:
                assert re.search(rf"^{re.escape(target)}:", makefile, flags=re.MULTILINE), f"make {target}"
                checked += 1
        elif program in ("python", "python3", "bash") and rest and not rest[0].startswith("-"):
            assert (REPO_ROOT / rest[0]).is_file(), f"README.md:{command.line}: {rest[0]}"
            checked += 1
    assert checked >= 2

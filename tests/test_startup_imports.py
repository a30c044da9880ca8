"""Start-up cost: ``--help`` and argument errors import no table or array library, and each stage imports only what
it uses (issue 21 item 3; ``bench/bench_startup.py`` times it).

Each case runs the real CLI in a fresh interpreter (a subprocess is the point: ``sys.modules`` of the test process
already holds everything) and reads back which packages were imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO_ROOT

TABLE_LIBRARIES = ("polars", "pyarrow", "numpy")
"""What ``--help`` and a usage error must not import (~0.2-0.5 s of a 0.15 s budget)."""

_PROBE = r"""
import json, sys
blocked, argv = json.loads(sys.argv[1])
for name in blocked:
    sys.modules[name] = None  # a later `import name` raises ImportError, naming the module that asked for it
from mmbatch.cli import main
try:
    status = main(argv)
except SystemExit as exc:
    status = exc.code
print(json.dumps({"status": status, "modules": sorted({m.partition(".")[0] for m in sys.modules
                                                       if sys.modules[m] is not None}),
                  "mmbatch": sorted(m for m in sys.modules
                                    if m.startswith("mmbatch.") and sys.modules[m] is not None),
                  "rich.progress": sys.modules.get("rich.progress") is not None}))
"""


def imported(argv: list[str], blocked: tuple[str, ...] = ()) -> dict[str, object]:
    """Run ``mmbatch ARGV`` in a fresh interpreter with ``blocked`` packages unimportable; its exit status and the
    top-level packages it imported."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    result = subprocess.run([sys.executable, "-c", _PROBE, json.dumps([list(blocked), argv])],
                            capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    report: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


@pytest.mark.parametrize("argv", [
    ["--help"],
    ["score", "--help"],
    ["infer", "--input", "x.parquet"],  # a usage error: required options missing
    ["prepare", "--benchmark", "no-such-benchmark", "--input", "x", "--output", "y.parquet", "--bogus"],
    ["run", "--help"],
])
def test_help_and_usage_errors_import_no_table_library(argv):
    report = imported(argv, blocked=TABLE_LIBRARIES)
    assert report["status"] in (0, 2)
    assert not set(TABLE_LIBRARIES) & set(report["modules"])  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def stage_files(tmp_path_factory) -> dict[str, Path]:
    """The bundled MMBench example through prepare, infer (echo) and extract, one file per stage."""
    folder = tmp_path_factory.mktemp("stages")
    files = {name: folder / f"{name}.parquet" for name in ("prepared", "predictions", "extracted")}
    from mmbatch.cli import main

    assert main(["prepare", "--benchmark", "mmbench", "--input", str(EXAMPLES / "mmbench" / "mmbench_example.tsv"),
                 "--output", str(files["prepared"])]) == 0
    assert main(["infer", "--backend", "echo", "--model", "answer", "--input", str(files["prepared"]),
                 "--output", str(files["predictions"])]) == 0
    assert main(["extract", "--no-judge", "--benchmark", "mmbench", "--input", str(files["predictions"]),
                 "--output", str(files["extracted"])]) == 0
    return files


MODEL_LIBRARIES = {"torch", "transformers", "openai", "httpx", "jinja2"}
"""Packages only a model backend, the ``openai`` package's transport or a Jinja template needs."""


@pytest.mark.parametrize("stage", ["infer", "extract", "score"])
def test_each_stage_imports_only_what_it_uses(stage, stage_files, tmp_path):
    argv = {
        "infer": ["infer", "--backend", "echo", "--model", "answer", "--input", str(stage_files["prepared"]),
                  "--output", str(tmp_path / "predictions.parquet")],
        "extract": ["extract", "--no-judge", "--benchmark", "mmbench", "--input", str(stage_files["predictions"]),
                    "--output", str(tmp_path / "extracted.parquet")],
        "score": ["score", "--input", str(stage_files["extracted"]), "--output", str(tmp_path / "metrics.json")],
    }[stage]
    report = imported(argv)
    assert report["status"] == 0
    modules = set(report["modules"])  # type: ignore[arg-type]
    assert not modules & MODEL_LIBRARIES
    assert "pyarrow" not in modules  # polars reads and writes Parquet itself, metadata included
    assert not report["rich.progress"]  # off a terminal, progress is plain lines: no bar to draw
    if stage in ("extract", "score"):
        assert "PIL" not in modules  # neither opens an image
        # No judge asked: its HTTP client, cache and CLIP phase stay out (~45 ms of an extract's start).
        assert not {"mmbatch.openai_client", "mmbatch.http_transport", "mmbatch.extract.judge_phase",
                    "mmbatch.extract.judge", "mmbatch.extract.clip_phase"} & set(report["mmbatch"])  # type: ignore[arg-type]


def test_score_imports_numpy_only_to_bootstrap(stage_files, tmp_path):
    """The point values are plain Python (mmbatch/score/point_values.py); numpy (and the numpy.ma polars pulls in
    for numpy input) only for --bootstrap replicates."""
    plain = imported(["score", "--input", str(stage_files["extracted"]), "--output", str(tmp_path / "m.json")],
                     blocked=("numpy",))
    assert plain["status"] == 0 and "numpy" not in plain["modules"]  # type: ignore[operator]
    boot = imported(["score", "--bootstrap", "20", "--input", str(stage_files["extracted"]),
                     "--output", str(tmp_path / "b.json")])
    assert boot["status"] == 0 and "numpy" in boot["modules"]  # type: ignore[operator]


_COMMANDS_PROBE = r"""
import json, sys
from mmbatch.cli import main
from mmbatch.commands import COMMANDS
try:
    main(json.loads(sys.argv[1]))
except SystemExit:
    pass
print(json.dumps(sorted(name for name, command in COMMANDS.items() if command.module in sys.modules)))
"""


@pytest.mark.parametrize(("argv", "variables", "built"), [
    (["score", "--help"], {}, ["score"]),
    # An infer option's variable: telling it from a typo needs every command's options (and no warning is given).
    (["score", "--help"], {"MMBATCH_BATCH_SIZE": "2"}, "all"),
    # The commands and their summaries only: no command module.
    (["--help"], {}, []),
    (["--version"], {}, []),
    ([], {}, []),
    (["scroe", "--input", "x"], {}, []),
    (["--help"], {"MMBATCH_BATCH_SIZE": "2"}, "all"),
])
def test_a_command_line_builds_only_the_parser_of_its_command(argv: list[str], variables: dict[str, str],
                                                              built: object) -> None:
    env = {name: value for name, value in os.environ.items() if not name.startswith("MMBATCH_")}
    env |= {"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])), **variables}
    result = subprocess.run([sys.executable, "-c", _COMMANDS_PROBE, json.dumps(argv)], capture_output=True,
                            text=True, env=env, cwd=REPO_ROOT, timeout=120)
    assert "warning" not in result.stderr
    commands = json.loads(result.stdout.strip().splitlines()[-1])
    from mmbatch.commands import COMMANDS

    assert commands == (sorted(COMMANDS) if built == "all" else built)


@pytest.mark.parametrize("argv", [["--help"], ["--version"], [], ["scroe", "--input", "x"], ["-h", "score"]])
def test_the_commands_parser_answers_as_the_full_parser_does(argv: list[str], capsys) -> None:
    """``mmbatch --help``, ``--version``, nothing or a misspelt command print from the light parser exactly what the
    parser of every command prints."""
    from mmbatch.cli import build_parser, commands_parser

    printed = []
    for parser in (build_parser(), commands_parser()):
        with pytest.raises(SystemExit) as exited:
            parser.parse_args(argv)
        printed.append((exited.value.code, capsys.readouterr()))
    assert printed[0] == printed[1]
    assert printed[0][1].out or printed[0][1].err


@pytest.mark.parametrize("era", ["vlmevalkit", "vlmevalkit-2024", "official"])
def test_a_vqa_extract_imports_no_numpy(era, tmp_path):
    """VLMEvalKit's per-row mean is taken in plain Python in numpy's order (mmbatch/numpy_order.py): importing numpy
    cost a TextVQA extract more than the VQA metric over 100K rows' distinct answers."""
    from mmbatch.cli import main

    predictions = tmp_path / "predictions.parquet"
    assert main(["import", "--format", "vlmevalkit", "--benchmark", "textvqa", "--model", "example",
                 "--input", str(EXAMPLES / "textvqa" / "textvqa_example_predictions.tsv"),
                 "--output", str(predictions)]) == 0
    report = imported(["extract", "--no-judge", "--kind-option", f"rules={era}", "--input", str(predictions),
                       "--output", str(tmp_path / "extracted.parquet")], blocked=("numpy",))
    assert report["status"] == 0 and "numpy" not in report["modules"]  # type: ignore[operator]

"""``prepare`` checks the image payloads while it writes the file (issue 21 item 4): the checks overlap the write,
and a payload they refuse still leaves no output, no temporary file, and the same error as before. The checks are
the neutral VLMEvalKit reader's (:func:`mmbatch.formats.vlmevalkit_tsv.check_media`), so every benchmark read
through it overlaps them, MMBench's own reader and MMStar's alike."""

from __future__ import annotations

import base64
import io
import threading
from pathlib import Path

import pytest
from PIL import Image

import mmbatch.formats.images as image_checks
from mmbatch.cli import main
from mmbatch.tableio import read_table


def jpeg_base64(seed: int) -> str:
    """A small JPEG of its own pixels, as base64."""
    buffer = io.BytesIO()
    Image.new("RGB", (48, 32), (seed % 256, 40, 90)).save(buffer, "JPEG")
    return base64.b64encode(buffer.getvalue()).decode()


def mmbench_tsv(path: Path, rows: int, *, broken: int | None = None) -> Path:
    """An MMBench-style TSV; row ``broken`` (if any) holds a JPEG cut short."""
    lines = ["index\tquestion\tA\tB\tanswer\tcategory\timage"]
    for i in range(rows):
        image = jpeg_base64(i)
        if i == broken:
            image = base64.b64encode(base64.b64decode(image)[:-40]).decode()
        lines.append(f"{i}\tWhat is in picture {i}?\tred\tblue\tA\tcolour\t{image}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["mmbench", "mmstar"])
def test_the_image_checks_run_while_the_file_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       name: str) -> None:
    writers_alive: list[bool] = []
    check = image_checks.check_image_column

    def watched(*args: object, **kwargs: object) -> None:
        writers_alive.append(any(t.name.startswith("mmbatch-write") for t in threading.enumerate()))
        check(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("mmbatch.formats.vlmevalkit_tsv.check_image_column", watched)
    source = mmbench_tsv(tmp_path / "in.tsv", 40)
    assert main(["prepare", "--benchmark", name, "--input", str(source), "--output",
                 str(tmp_path / "out.parquet")]) == 0
    assert writers_alive == [True]
    assert read_table(tmp_path / "out.parquet").frame.height == 40


@pytest.mark.parametrize("suffix", [".parquet", ".tsv"])
def test_a_payload_refused_while_writing_leaves_no_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       suffix: str) -> None:
    source = mmbench_tsv(tmp_path / "in.tsv", 40, broken=37)
    folder = tmp_path / "out"
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(source), "--output",
                 str(folder / f"prepared{suffix}")]) == 2
    error = " ".join(capsys.readouterr().err.split())
    assert "row index=37: column 'image'" in error
    assert not folder.exists() or sorted(path.name for path in folder.iterdir()) == []  # nor sidecar nor temporary


def test_a_refused_payload_is_still_reported_before_a_later_problem(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # The template fails on every row, after the reader; the broken image, met by the reader, is the error named.
    source = mmbench_tsv(tmp_path / "in.tsv", 8, broken=5)
    template = tmp_path / "unknown.txt"
    template.write_text("{question} {difficulty}", encoding="utf-8")
    assert main(["prepare", "--benchmark", "mmbench", "--input", str(source), "--output",
                 str(tmp_path / "out.parquet"), "--prompt-template", str(template)]) == 2
    error = " ".join(capsys.readouterr().err.split())
    assert "row index=5: column 'image'" in error and "difficulty" not in error
    assert not (tmp_path / "out.parquet").exists()

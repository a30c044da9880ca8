"""Media that must stop ``mmbatch prepare``: paths escaping --media-root, missing files, corrupt and huge images.

Each case runs the real CLI and checks the exit status (2), the one-line message (file, row index, column), that
no traceback is printed, and that neither the output nor a temporary file is left behind.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

SEED = EXAMPLES / "seed"


def assert_refused(result: subprocess.CompletedProcess[str], output: Path, *needles: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)
    assert not output.exists()
    if output.parent.exists():  # no temporary file of an interrupted write either
        assert not [p for p in output.parent.iterdir() if p.name.startswith(f".{output.name}")]


def seed_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the SEED example (JSON, media root) the test may break."""
    root = tmp_path / "seed"
    shutil.copytree(SEED, root)
    return root / "seed_example.json", root / "media"


def edit_record(json_path: Path, position: int, **changes: object) -> None:
    data = json.loads(json_path.read_text())
    data["questions"][position].update(changes)
    json_path.write_text(json.dumps(data), encoding="utf-8")


def prepare_seed(cli, json_path: Path, media: Path, output: Path, *extra: str,
                 benchmark: str = "seedbench") -> subprocess.CompletedProcess[str]:
    return cli("prepare", "--benchmark", benchmark, "--input", str(json_path), "--media-root", str(media),
               "--output", str(output), *extra)


def dot_dot(json_path: Path, media: Path) -> str:
    (media.parent / "outside.png").write_bytes((media / "seed_img_00.png").read_bytes())
    edit_record(json_path, 2, data_id="../outside.png")
    return "escapes --media-root"


def absolute(json_path: Path, media: Path) -> str:
    edit_record(json_path, 2, data_id=str((media / "seed_img_00.png").resolve()))
    return "escapes --media-root"


def symlink_out(json_path: Path, media: Path) -> str:
    outside = media.parent / "outside.png"
    outside.write_bytes((media / "seed_img_00.png").read_bytes())
    (media / "link.png").symlink_to(outside)
    edit_record(json_path, 2, data_id="link.png")
    return "escapes --media-root"


def missing(json_path: Path, media: Path) -> str:
    (media / "seed_img_02.png").unlink()
    return "not found under --media-root"


def corrupt(json_path: Path, media: Path) -> str:
    image = media / "seed_img_02.png"
    image.write_bytes(image.read_bytes()[:60])  # a truncated PNG
    return "not a readable image"


def not_an_image(json_path: Path, media: Path) -> str:
    (media / "seed_img_02.png").write_text("hello, I am text", encoding="utf-8")
    return "not a readable image"


@pytest.mark.parametrize("breakage", [dot_dot, absolute, symlink_out, missing, corrupt, not_an_image],
                         ids=lambda f: f.__name__)
def test_seed_image_media_is_refused(cli, tmp_path: Path, breakage: Callable[[Path, Path], str]) -> None:
    json_path, media = seed_copy(tmp_path)
    message = breakage(json_path, media)
    output = tmp_path / "out" / "prepared.parquet"
    result = prepare_seed(cli, json_path, media, output)
    assert_refused(result, output, message, "seed_example.json", "row index=2", "column 'image_path'")


@pytest.mark.parametrize("data_id", ["../seed_example.json", "/etc/hostname", "no_such_clip.mp4"])
def test_seed_video_path_is_refused(cli, tmp_path: Path, data_id: str) -> None:
    json_path, media = seed_copy(tmp_path)
    edit_record(json_path, 21, data_id=data_id)
    output = tmp_path / "prepared.tsv"
    result = prepare_seed(cli, json_path, media, output)
    message = "not found" if data_id == "no_such_clip.mp4" else "escapes --media-root"
    assert_refused(result, output, message, "row index=21", "column 'video_path'")
    assert not (tmp_path / "prepared.tsv.meta.json").exists()


def test_seed_image_over_the_pixel_limit(cli, tmp_path: Path) -> None:
    json_path, media = seed_copy(tmp_path)
    output = tmp_path / "prepared.parquet"
    result = prepare_seed(cli, json_path, media, output, "--max-pixels", "1000")
    assert_refused(result, output, "over the limit of 1000 pixels", "row index=0", "column 'image_path'")


def test_seed2_frame_list_escaping_the_root(cli, tmp_path: Path) -> None:
    root = tmp_path / "seed"
    shutil.copytree(SEED, root)
    json_path = root / "seed2_example.json"
    data = json.loads(json_path.read_text())
    data["questions"][2]["data_id"][3] = "frames/../../seed_example.json"
    json_path.write_text(json.dumps(data), encoding="utf-8")
    output = tmp_path / "prepared.parquet"
    result = prepare_seed(cli, json_path, root / "media", output, benchmark="seedbench2")
    assert_refused(result, output, "escapes --media-root", "row index=2", "column 'video_path'")


def mme_copy(tmp_path: Path) -> Path:
    root = tmp_path / "mme"
    shutil.copytree(EXAMPLES / "mme", root)
    return root


def test_mme_image_symlinked_out_of_the_folder(cli, tmp_path: Path) -> None:
    root = mme_copy(tmp_path)
    image = root / "count" / "count_02.png"
    outside = tmp_path / "elsewhere.png"
    image.rename(outside)
    image.symlink_to(outside)
    output = tmp_path / "prepared.parquet"
    result = cli("prepare", "--benchmark", "mme", "--input", str(root), "--output", str(output))
    assert_refused(result, output, "escapes --media-root", "count_02.txt", "row index=8", "column 'image'")


def test_mme_corrupt_image(cli, tmp_path: Path) -> None:
    root = mme_copy(tmp_path)
    image = root / "color" / "images" / "color_03.png"
    image.write_bytes(image.read_bytes()[:100])
    output = tmp_path / "prepared.tsv"
    result = cli("prepare", "--benchmark", "mme", "--input", str(root), "--output", str(output))
    assert_refused(result, output, "not a readable image", "color_03.txt", "row index=16", "column 'image'")


def test_mme_folder_outside_the_given_media_root(cli, tmp_path: Path) -> None:
    root = mme_copy(tmp_path)
    other = tmp_path / "other_root"
    other.mkdir()
    output = tmp_path / "prepared.parquet"
    result = cli("prepare", "--benchmark", "mme", "--input", str(root), "--media-root", str(other),
                 "--output", str(output))
    assert_refused(result, output, "escapes --media-root", "row index=0", "column 'image'")


def test_mme_eval_tool_template_with_a_missing_image(cli, tmp_path: Path) -> None:
    root = mme_copy(tmp_path)
    template = tmp_path / "templates" / "count.txt"
    template.parent.mkdir()
    lines = [f"count_0{n}.png\t{q}" for n in (1, 2, 3)
             for q in (root / "count" / f"count_0{n}.txt").read_text().splitlines()]
    template.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "count" / "count_03.png").unlink()
    output = tmp_path / "prepared.parquet"
    result = cli("prepare", "--benchmark", "mme", "--input", str(template.parent), "--media-root", str(root),
                 "--output", str(output))
    assert_refused(result, output, "'count/count_03.png' not found", "count.txt", "row index=4", "column 'image'")

"""VLMEvalKit's ``MME.tsv`` layout (or any table with the same columns): rows -> prepared MME rows.

Columns read: ``index``, ``question``, ``answer`` (Yes/No), ``category`` (the subtask), and the image as ``image``
(base64, or a reference to another row's ``index``) or as ``image_path`` (a file under ``--media-root``, by default
the table's folder, which is then embedded). Every other column is carried through as it is.

The two questions of an image form one group: rows with the same (``category``, ``image_path``) when the table has
``image_path`` (what VLMEvalKit's own MME scorer groups by), otherwise the same image payload. ``g_index`` is the
smallest ``index`` of the group; a ``g_index`` column already in the table wins.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import polars as pl

from mmbatch.benchmarks.base import ReadOptions
from mmbatch.benchmarks.mme.subtasks import canonical_subtask, part_of
from mmbatch.errors import BadInputError
from mmbatch.media import check_image_bytes, decode_base64_image, is_reference, resolve_media, split_image_cell
from mmbatch.progress import progress
from mmbatch.tableio import read_table

REQUIRED = ("index", "question", "answer", "category")


def read_mme_table(path: Path, options: ReadOptions) -> pl.DataFrame:
    """Prepared MME rows from a VLMEvalKit-style table (TSV, Parquet or xlsx).

    Raises:
        BadInputError: a missing column, a duplicate or empty ``index``, an answer other than Yes/No, an image that
            does not decode, a dangling reference, or a missing image file.
    """
    frame = read_table(path).frame
    for column in REQUIRED:
        if column not in frame.columns:
            raise BadInputError("missing required column", path=path, column=column)
    if "image" not in frame.columns and "image_path" not in frame.columns:
        raise BadInputError("missing required column (MME rows need 'image' or 'image_path')", path=path,
                            column="image")
    frame = _checked_index(frame, path)
    if frame["category"].null_count():
        index = frame.filter(pl.col("category").is_null())["index"][0]
        raise BadInputError("empty category (the MME subtask)", path=path, index=index, column="category")
    frame = frame.with_columns(
        pl.Series("answer", [_yes_no(a, i, path) for a, i in zip(frame["answer"], frame["index"], strict=True)]),
        pl.col("category").map_elements(canonical_subtask, return_dtype=pl.String),
        pl.lit("mme").alias("benchmark"),
    )
    if "image" not in frame.columns:
        frame = _embed_image_files(frame, options.media_root or path.parent, path)
    frame = _with_image_groups(frame, path)
    if "l2-category" not in frame.columns:
        frame = frame.with_columns(
            pl.col("category").map_elements(part_of, return_dtype=pl.String).alias("l2-category"))
    if options.limit is not None:
        payloads = dict(zip(frame["index"], frame["image"], strict=True))
        kept_groups = set(frame["g_index"].head(options.limit).to_list())
        frame = frame.filter(pl.col("g_index").is_in(kept_groups))
        frame = _inline_dropped_references(frame, payloads)
    _check_payloads(frame, path, options.max_pixels)
    return frame


def _with_image_groups(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    """``frame`` with ``g_index``: the smallest ``index`` among the rows of the same subtask and image.

    The image is named by ``image_path`` where the table has one, else identified by its payload (references
    resolved); a ``g_index`` column already in the table is kept. References are checked either way.
    """
    identities = _payload_identities(frame, path)
    if "g_index" in frame.columns:
        return frame
    if "image_path" in frame.columns:
        identities = [named or payload for named, payload in zip(frame["image_path"], identities, strict=True)]
    return (frame.with_columns(pl.Series("image_key", identities, dtype=pl.String))
            .with_columns(pl.col("index").min().over("category", "image_key").alias("g_index"))
            .drop("image_key"))


def _checked_index(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    frame = frame.with_columns(pl.col("index").cast(pl.Int64))
    if frame["index"].null_count():
        row = int(frame["index"].is_null().arg_max() or 0)
        raise BadInputError(f"empty index on data row {row + 1}", path=path, column="index")
    duplicated = frame.filter(pl.col("index").is_duplicated())
    if duplicated.height:
        raise BadInputError("duplicate index", path=path, index=duplicated["index"][0], column="index")
    return frame


def _yes_no(answer: str | None, index: int, path: Path) -> str:
    value = (answer or "").strip().capitalize()
    if value not in ("Yes", "No"):
        raise BadInputError(f"the answer must be Yes or No, not {answer!r}", path=path, index=index, column="answer")
    return value


def _payload_identities(frame: pl.DataFrame, path: Path) -> list[str]:
    """A key per row that is equal for rows showing the same image (references resolved)."""
    payload_hash: dict[int, str] = {}
    for index, cell in zip(frame["index"], frame["image"], strict=True):
        if cell is None:
            raise BadInputError("empty image", path=path, index=index, column="image")
        if not is_reference(cell):
            payload_hash[index] = hashlib.sha1(cell.encode()).hexdigest()
    identities = []
    for index, cell in zip(frame["index"], frame["image"], strict=True):
        if not is_reference(cell):
            identities.append(payload_hash[index])
            continue
        target = _reference_target(cell)
        if target not in payload_hash:
            raise BadInputError(f"image reference {cell!r} points at no row holding an image", path=path,
                                index=index, column="image")
        identities.append(payload_hash[target])
    return identities


def _reference_target(cell: str) -> int | None:
    try:
        return int(float(cell.strip()))
    except ValueError:
        return None


def _inline_dropped_references(frame: pl.DataFrame, payloads: dict[int, str]) -> pl.DataFrame:
    """After ``--limit``, a reference whose target row was dropped gets the target's payload instead."""
    kept = set(frame["index"].to_list())
    cells = []
    for cell in frame["image"]:
        target = _reference_target(cell) if is_reference(cell) else None
        cells.append(payloads[target] if target is not None and target not in kept else cell)
    return frame.with_columns(pl.Series("image", cells, dtype=pl.String))


def _embed_image_files(frame: pl.DataFrame, media_root: Path, path: Path) -> pl.DataFrame:
    cells = []
    for index, relative in zip(frame["index"], frame["image_path"], strict=True):
        if relative is None:
            raise BadInputError("empty image_path", path=path, index=index, column="image_path")
        file = resolve_media(media_root, relative, source=path, index=index, column="image_path")
        cells.append(base64.b64encode(file.read_bytes()).decode("ascii"))
    return frame.with_columns(pl.Series("image", cells, dtype=pl.String))


def _check_payloads(frame: pl.DataFrame, path: Path, max_pixels: int) -> None:
    """Every image payload decodes to a complete image within the pixel limit."""
    with progress("checking MME images", total=frame.height, unit="rows") as bar:
        for index, cell in zip(frame["index"], frame["image"], strict=True):
            bar.advance()
            if is_reference(cell):
                continue
            for payload in split_image_cell(cell):
                try:
                    check_image_bytes(decode_base64_image(payload), max_pixels)
                except ValueError as exc:
                    raise BadInputError(str(exc), path=path, index=index, column="image") from exc

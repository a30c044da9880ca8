"""``mmbatch prepare --benchmark mme``: the MME reader.

Three inputs are recognised from ``--input``:

- a table (``.tsv``, ``.parquet``, ``.xlsx``): VLMEvalKit's ``MME.tsv`` layout (:mod:`.vlmevalkit_table`);
- the official release folder, or one subtask folder of it (:func:`.release_folder.read_release_folder`); the
  folder acts as the media root unless ``--media-root`` is given (the folder must then lie inside it);
- the official eval tool's question files (``<subtask>.txt`` with ``image_name<TAB>question<TAB>ground_truth``
  lines, a folder of them or one file), with the release folder as ``--media-root`` for the images.

Rows carry ``index`` (0-based position, subtasks in the official order), ``g_index`` (the ``index`` of the
image's first question), ``category`` (subtask), ``l2-category`` (``perception``/``cognition``), ``answer``
(``Yes``/``No``), ``image`` (base64; the second question of an image references the first) and ``image_name``
(the file name the official eval tool expects).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from mmbatch.benchmarks.base import ReadOptions
from mmbatch.benchmarks.mme.release_folder import (
    is_eval_tool_template,
    read_eval_tool_templates,
    read_release_folder,
)
from mmbatch.benchmarks.mme.rows import BENCHMARK, questions_to_rows
from mmbatch.benchmarks.mme.vlmevalkit_table import read_mme_table
from mmbatch.errors import BadInputError

TABLE_SUFFIXES = (".tsv", ".parquet", ".xlsx")


@dataclass(frozen=True)
class MmeReader:
    """Reads MME from VLMEvalKit's table, the official release folder or the eval tool's question files."""

    name: str = BENCHMARK
    """The ``benchmark`` column value."""

    def read(self, path: Path, options: ReadOptions) -> pl.DataFrame:
        """Prepared MME rows (without the prompt columns) from ``path``.

        Raises:
            BadInputError: an unrecognised input, or any bad question or image (file, row index and column named).
        """
        path = Path(path)
        if options.circular:
            raise BadInputError("--circular applies to multiple-choice files; MME's yes/no questions already come "
                                "in pairs (one group per image)", path=path)
        if not path.exists():
            raise BadInputError("no such file or folder", path=path)
        if path.is_file() and path.suffix.lower() in TABLE_SUFFIXES:
            return read_mme_table(path, options)
        if is_eval_tool_template(path):
            media_root = options.media_root
            questions = read_eval_tool_templates(path, media_root)
        elif path.is_dir():
            media_root = options.media_root or path
            questions = read_release_folder(path)
        else:
            raise BadInputError("not an MME input: expected MME.tsv/.parquet, the release folder, or the eval "
                                "tool's <subtask>.txt question files", path=path)
        if not questions:
            raise BadInputError("no MME questions found", path=path)
        assert media_root is not None  # read_eval_tool_templates refuses a missing media root
        return questions_to_rows(questions, Path(media_root), limit=options.limit, max_pixels=options.max_pixels)


READER = MmeReader()
"""The reader registered as ``mme`` in :data:`mmbatch.benchmarks.READERS`."""

"""Errors that end a command with a documented exit status.

Exit statuses (docs/contract.md §2): 0 all rows done; 2 bad input or usage; 3 finished but some rows failed;
anything else is a crash. Commands raise :class:`BadInputError` for status 2; status 3 is a return value.
"""

from __future__ import annotations

from pathlib import Path

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_ROWS_FAILED = 3


class MmbatchError(Exception):
    """Base class of the errors mmbatch reports as one clear line instead of a traceback."""

    exit_code = 1


class BadInputError(MmbatchError):
    """The input or the options are wrong; the message names the file, the row ``index`` and the column."""

    exit_code = EXIT_BAD_INPUT

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        index: object | None = None,
        column: str | None = None,
    ) -> None:
        self.reason = message
        self.path = None if path is None else str(path)
        self.index = index
        self.column = column
        super().__init__(self._format())

    def _format(self) -> str:
        where = []
        if self.path is not None:
            where.append(self.path)
        if self.index is not None:
            where.append(f"row index={self.index}")
        if self.column is not None:
            where.append(f"column '{self.column}'")
        return f"{': '.join(where)}: {self.reason}" if where else self.reason


class ProgressRefusedError(BadInputError):
    """Earlier progress or output for this path was made with other settings, or records none (exit 2).

    The message names the flag that chooses another output: ``--output`` for a stage command, and
    :meth:`naming` gives the same refusal for a command whose flag is another (``run --output-dir``).
    """

    def __init__(self, where: Path, changed: tuple[str, ...] | None, *, path: Path,
                 output_flag: str = "--output") -> None:
        self.where = where
        self.changed = changed
        self.output_flag = output_flag
        if changed is None:
            reason = (f"{where} exists but holds no settings recorded by this stage of mmbatch (a copied, rewritten "
                      "or imported file?), so its rows cannot be trusted as this run's work; use a new "
                      f"{output_flag}, or --force to replace it")
        else:
            reason = (f"earlier progress for this output ({where}) was made with other settings "
                      f"({', '.join(changed)} differ); use a new {output_flag}, or --force to discard it")
        super().__init__(reason, path=path)

    def naming(self, output_flag: str) -> ProgressRefusedError:
        """The same refusal, naming ``output_flag`` as the way to choose another output."""
        return ProgressRefusedError(self.where, self.changed, path=Path(self.path or self.where),
                                    output_flag=output_flag)

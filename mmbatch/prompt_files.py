"""``prepare --prompt-template FILE``: a user prompt template of your own, over the row's columns.

The file's suffix decides its language, never its content (a Python format string writes a literal brace as ``{{``,
which would read as Jinja): ``.j2``, ``.jinja`` and ``.jinja2`` are Jinja, anything else is a Python format string
(``str.format``). Both see every column of the row except the ``image`` payload and the columns ``prepare`` itself
writes (``prompt``...), plus ``options_text``: the present options as ``A. text`` lines. Jinja also gets
``options`` (letter -> text of the present options, in letter order) and ``row`` (every column by name, for names
that are not identifiers such as ``l2-category``); Jinja runs sandboxed, with undefined names as errors and
``trim_blocks``/``lstrip_blocks`` on, as ``transformers`` chat templates are written. A missing value is None in
Jinja (``{% if hint %}``) and empty text in a format string. One newline at the end of the file is not part of the
template (editors add one).

A name the template uses that no row has is refused before any row is rendered, naming the columns there are. The
rows record ``file:NAME@SHA`` (the file's name and the first 16 hex digits of its SHA-256) as ``prompt_template``;
the prepared file's metadata keeps the whole digest and the template's text.
"""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from mmbatch.errors import BadInputError
from mmbatch.row_facts import is_missing, present_options

JINJA_SUFFIXES = (".j2", ".jinja", ".jinja2")
"""File suffixes read as Jinja; every other file is a Python format string."""
HIDDEN_COLUMNS = ("image", "prompt", "prompt_hash", "prompt_template", "mode")
"""Columns a template cannot use: the image payload (a picture, not text) and what ``prepare`` writes itself."""
DERIVED = {"format": ("options_text",), "jinja": ("options_text", "options", "row")}
"""The names a template gets besides the columns, by language."""


@dataclass(frozen=True)
class TemplateFile:
    """A prompt template read from a file."""

    path: Path
    """Where it was read."""
    text: str
    """The template, without the file's final newline."""
    language: str
    """``jinja`` or ``format``."""
    sha256: str
    """SHA-256 of the file's bytes."""

    @property
    def name(self) -> str:
        """What the rows record as ``prompt_template``: ``file:NAME@`` and the digest's first 16 hex digits."""
        return f"file:{self.path.name}@{self.sha256[:16]}"

    def metadata(self) -> dict[str, str]:
        """What the prepared file's metadata records about the template."""
        return {"path": str(self.path), "language": self.language, "sha256": self.sha256, "text": self.text}


def read_template_file(path: Path) -> TemplateFile:
    """Read a template file (UTF-8) and check its syntax.

    Raises:
        BadInputError: the file cannot be read, or the template does not parse.
    """
    try:
        data = path.read_bytes()
        text = data.decode("utf-8").removesuffix("\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"cannot read the prompt template: {exc}", path=path) from None
    language = "jinja" if path.suffix.lower() in JINJA_SUFFIXES else "format"
    template = TemplateFile(path, text, language, hashlib.sha256(data).hexdigest())
    template_names(template)  # a syntax error is reported now, not at the first row
    return template


def template_names(template: TemplateFile) -> set[str]:
    """The names the template reads from its rows.

    Raises:
        BadInputError: the template does not parse, or a format string has a positional field (``{}``, ``{0}``).
    """
    if template.language == "jinja":
        import jinja2
        from jinja2 import meta

        try:
            return set(meta.find_undeclared_variables(_jinja_environment().parse(template.text)))
        except jinja2.TemplateSyntaxError as exc:
            raise BadInputError(f"Jinja syntax error on line {exc.lineno}: {exc.message}", path=template.path) \
                from None
    names = set()
    try:
        for _, field, _, _ in string.Formatter().parse(template.text):
            if field is None:
                continue
            name = re.split(r"[.\[]", field, maxsplit=1)[0]
            if not name or name.isdigit():
                raise BadInputError(f"the format string has a positional field {{{field}}}; name a column, e.g. "
                                    "{question}", path=template.path)
            names.add(name)
    except ValueError as exc:
        raise BadInputError(f"not a valid Python format string ({exc}); write a literal brace as {{{{ or }}}}, or "
                            f"name the file .j2 for Jinja", path=template.path) from None
    return names


def render_template_file(template: TemplateFile, frame: pl.DataFrame) -> list[str]:
    """The prompt of every row of ``frame``, in order.

    Raises:
        BadInputError: the template uses a name no row has (the message lists those there are), fails on a row
            (the message names its ``index``), or renders an empty prompt.
    """
    columns = [name for name in frame.columns if name not in HIDDEN_COLUMNS]
    known = [*columns, *DERIVED[template.language]]
    unknown = sorted(template_names(template) - set(known))
    if unknown:
        raise BadInputError(f"the template uses {', '.join(unknown)}, which the rows do not have; it can use "
                            f"{', '.join(known)}", path=template.path)
    render = _jinja_renderer(template) if template.language == "jinja" else _format_renderer(template)
    prompts = []
    for row in _rows(frame.select(columns)):
        options = present_options(row)
        try:
            prompt = render(row, options)
        except BadInputError:
            raise
        except Exception as exc:  # anything the template's own expressions raise on this row
            raise BadInputError(f"the template fails on this row: {type(exc).__name__}: {exc}", path=template.path,
                                index=row.get("index")) from None
        if not prompt.strip():
            raise BadInputError("the template renders an empty prompt for this row", path=template.path,
                                index=row.get("index"))
        prompts.append(prompt)
    return prompts


def options_text(options: Mapping[str, str]) -> str:
    """The present options as ``A. text`` lines (no final newline)."""
    return "\n".join(f"{letter}. {text}" for letter, text in options.items())


def _rows(frame: pl.DataFrame) -> Iterator[dict[str, Any]]:
    """Each row as a dict, missing values (null, NaN, empty text) as None."""
    for row in frame.iter_rows(named=True):
        yield {name: None if is_missing(value) else value for name, value in row.items()}


def _jinja_environment() -> Any:
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    return ImmutableSandboxedEnvironment(undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                                         keep_trailing_newline=True, autoescape=False)


def _jinja_renderer(template: TemplateFile) -> Any:
    compiled = _jinja_environment().from_string(template.text)

    def render(row: dict[str, Any], options: dict[str, str]) -> str:
        return str(compiled.render(**row, row=row, options=options, options_text=options_text(options)))

    return render


def _format_renderer(template: TemplateFile) -> Any:
    def render(row: dict[str, Any], options: dict[str, str]) -> str:
        values = {name: "" if value is None else value for name, value in row.items()}
        return template.text.format_map({**values, "options_text": options_text(options)})

    return render

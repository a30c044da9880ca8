"""The report's summary table (one row per model, one column per benchmark headline), its CSV/TSV form, the table
of contents, provenance headers that name the file (issue 25 item 8), and ``score --output`` as CSV."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

from mmbatch.cli import main
from tests.test_report import model_metrics


def _write(tmp_path: Path, name: str, model: str, skill: float) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(model_metrics(model, skill)))
    return path


class Tables(HTMLParser):
    """Every table's header cells and body rows (cell texts), by table class; the nav's links."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict[str, list[list[str]]]] = {}
        self.links: list[str] = []
        self.ids: list[str] = []
        self._table: str | None = None
        self._part = "head"
        self._cell: list[str] | None = None
        self._in_nav = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        if attr.get("id"):
            self.ids.append(str(attr["id"]))
        if tag == "nav":
            self._in_nav = True
        elif tag == "a" and self._in_nav:
            self.links.append(str(attr["href"]))
        elif tag == "table":
            self._table = str(attr.get("class"))
            self.tables[self._table] = {"head": [], "body": []}
        elif tag in ("thead", "tbody"):
            self._part = tag[1:]
        elif tag == "tr" and self._table:
            self.tables[self._table][self._part].append([])
        elif tag in ("th", "td") and self._table:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "nav":
            self._in_nav = False
        elif tag in ("th", "td") and self._table and self._cell is not None:
            self.tables[self._table][self._part][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_summary_table_comes_first_with_one_column_per_benchmark(tmp_path: Path) -> None:
    files = [_write(tmp_path, "a.json", "alpha", 0), _write(tmp_path, "b.json", "beta", 5)]
    out = tmp_path / "report.html"
    assert main(["report", *map(str, files), "--output", str(out)]) == 0
    page = Tables()
    page.feed(out.read_text())
    summary = page.tables["overview"]
    assert summary["head"] == [["model", "mmbench (dev): Overall (circular)", "mme: Perception", "seedbench: Overall"]]
    assert summary["body"] == [["beta", "65.00 [62.00, 68.00]", "1405.00", "65.00"],
                               ["alpha", "60.00 [57.00, 63.00]", "1400.00", "60.00"]]
    text = out.read_text()
    assert text.index('id="summary"') < text.index('id="provenance"') < text.index('class="board"')
    # The table of contents links every part, and every link lands on an element of the page.
    assert page.links == ["#summary", "#provenance", "#mmbench_dev", "#mme", "#seedbench"]
    assert {link[1:] for link in page.links} <= set(page.ids)


def test_markdown_has_the_summary_and_a_contents_list_whose_anchors_exist(tmp_path: Path) -> None:
    files = [_write(tmp_path, "a.json", "alpha", 0), _write(tmp_path, "b.json", "beta", 5)]
    out = tmp_path / "report.md"
    assert main(["report", *map(str, files), "--output", str(out)]) == 0
    text = out.read_text()
    summary = text.split("## Summary")[1].split("<a id=")[0]
    assert "| beta | 65.00 [62.00, 68.00] | 1405.00 | 65.00 |" in summary
    markdown = pytest.importorskip("markdown")  # python-markdown: a dev dependency
    rendered = markdown.markdown(text, extensions=["tables"])
    page = Tables()
    page.feed(rendered)
    targets = re.findall(r"\]\(#([\w-]+)\)", text)
    assert targets == ["summary", "provenance", "mmbench_dev", "mme", "seedbench"]
    assert set(targets) <= set(page.ids), "every contents link has its anchor in the rendered page"


@pytest.mark.parametrize("suffix, separator", [(".csv", ","), (".tsv", "\t")])
def test_csv_and_tsv_reports_are_the_summary_as_numbers(tmp_path: Path, suffix: str, separator: str) -> None:
    files = [_write(tmp_path, "a.json", "alpha", 0), _write(tmp_path, "b.json", "beta", 5)]
    out = tmp_path / f"summary{suffix}"
    assert main(["report", *map(str, files), "--output", str(out)]) == 0
    table = pl.read_csv(out, separator=separator)
    assert table["model"].to_list() == ["beta", "alpha"]
    first = "mmbench (dev): Overall (circular)"
    assert table.columns[:4] == ["model", first, f"{first} ci_low", f"{first} ci_high"]
    assert table.row(0, named=True)["mmbench (dev): Overall (circular) ci_high"] == 68.0
    assert table.row(1, named=True)["mme: Perception"] == 1400.0
    assert table["mme: Perception ci_low"].null_count() == 2, "no interval: empty, not a made-up number"


def test_three_runs_of_one_model_have_three_distinct_headers(tmp_path: Path) -> None:
    """Issue 25 item 8: the provenance headers showed the model label only, three identical headers."""
    files = [_write(tmp_path, f"run{k}/metrics.json", "llava", k) for k in range(3)]
    out = tmp_path / "report.html"
    assert main(["report", *map(str, files), "--output", str(out)]) == 0
    page = Tables()
    page.feed(out.read_text())
    headers = page.tables["provenance"]["head"][0][1:]
    assert headers == ["llavarun0/metrics", "llavarun1/metrics", "llavarun2/metrics"]  # label, then the file
    assert len(set(headers)) == 3
    models = [row[0] for row in page.tables["overview"]["body"]]
    assert sorted(models) == ["llava [run0/metrics]", "llava [run1/metrics]", "llava [run2/metrics]"]
    md = tmp_path / "report.md"
    assert main(["report", *map(str, files), "--output", str(md)]) == 0
    header = md.read_text().split("## Provenance")[1].splitlines()[2]
    assert header == "| | llava<br>`run0/metrics` | llava<br>`run1/metrics` | llava<br>`run2/metrics` |"


def test_score_writes_csv_metrics_that_report_reads(tmp_path: Path) -> None:
    from tests.conftest import EXAMPLES

    prepared, predictions, extracted = (tmp_path / f"{name}.parquet" for name in ("p", "e", "x"))
    assert main(["prepare", "--benchmark", "mme", "--input", str(EXAMPLES / "mme"), "--output", str(prepared)]) == 0
    assert main(["infer", "--input", str(prepared), "--output", str(predictions), "--backend", "echo",
                 "--model", "answer"]) == 0
    assert main(["extract", "--input", str(predictions), "--output", str(extracted), "--no-judge"]) == 0
    as_json, as_csv = tmp_path / "m.json", tmp_path / "m.csv"
    for output in (as_json, as_csv):
        assert main(["score", "--input", str(extracted), "--output", str(output)]) == 0
    csv_rows = pl.read_csv(as_csv).to_dicts()
    assert csv_rows == json.loads(as_json.read_text())
    assert (tmp_path / "m.csv.meta.json").is_file() and (tmp_path / "m.hits.parquet").is_file()
    out = tmp_path / "r.tsv"
    assert main(["report", str(as_csv), "--output", str(out)]) == 0
    assert pl.read_csv(out, separator="\t")["mme: Perception"].to_list() == [800.0]

"""The SQLite judge cache: exact keys, persistence across connections."""

from __future__ import annotations

from pathlib import Path

from mmbatch.extract.judge_cache import JudgeCache, default_cache_path


def test_keys_are_model_prompt_try_and_temperature(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "c.sqlite")
    cache.put("gpt-4o-mini", "prompt", 0, 0.0, "A", prompt_tokens=10, completion_tokens=1)
    assert cache.get("gpt-4o-mini", "prompt", 0, 0.0).text == "A"
    assert cache.get("gpt-4o-mini", "prompt", 1, 0.0) is None  # the second try is asked again
    assert cache.get("gpt-4o-mini", "prompt", 0, 0.5) is None
    assert cache.get("gpt-3.5-turbo-0125", "prompt", 0, 0.0) is None
    assert cache.get("gpt-4o-mini", "prompt ", 0, 0.0) is None  # exact text: one space more is another prompt
    assert len(cache) == 1
    cache.close()


def test_replies_survive_reopening(tmp_path: Path) -> None:
    path = default_cache_path(tmp_path / "out" / "extracted.parquet")
    assert path == tmp_path / "out" / "mmbatch-judge-cache.sqlite"
    first = JudgeCache(path)
    first.put("m", "问题: 图中是什么?", 2, 0.0, "C", prompt_tokens=5, completion_tokens=1)
    first.close()
    second = JudgeCache(path)
    hit = second.get("m", "问题: 图中是什么?", 2, 0.0)
    assert hit is not None and (hit.text, hit.prompt_tokens, hit.completion_tokens) == ("C", 5, 1)
    second.close()


def test_an_empty_reply_is_not_cached_for_good(tmp_path: Path) -> None:
    cache = JudgeCache(tmp_path / "cache.sqlite")
    cache.put("judge", "prompt", 1, 0.0, "  ")
    assert cache.get("judge", "prompt", 1, 0.0) is None and len(cache) == 0


def test_a_foreign_replies_table_is_refused_clearly(tmp_path: Path) -> None:
    import sqlite3

    import pytest

    from mmbatch.errors import BadInputError

    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE replies (id INTEGER, body TEXT)")
    with pytest.raises(BadInputError, match="not an mmbatch judge cache"):
        JudgeCache(path)

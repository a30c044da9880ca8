"""Reading a plan file (YAML) into a checked :class:`~mmbatch.plans.spec.Plan`, every error naming its key.

Relative paths in the file are read from the file's folder. Each model's and benchmark's options are checked by
building the stage options they make (so a plan is refused before any model loads, for the same reasons the stage
commands refuse their flags), and the error names the plan key: ``models[1].backend_args.dtype: 'float8' is not one
of auto, bfloat16, float16, float32``. The layout of the file is in docs/plans.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mmbatch.errors import BadInputError
from mmbatch.plans.spec import DEFAULT_REPORTS, REPORT_FORMATS, BenchmarkEntry, ModelEntry, Plan, stage_actions
from mmbatch.plans.values import PlanError, describe, option_value, require_mapping, require_text, section_values

TOP_KEYS = ("output", "models", "benchmarks", "extract", "score", "report")
MODEL_KEYS = ("name", "backend", "model", "backend_args", "generation", "system_prompt", "system_prompt_file")
BENCHMARK_KEYS = ("benchmark", "name", "input", "split", "template", "mode", "circular", "media_root", "limit",
                  "max_pixels", "shards", "extract", "score")
PREPARE_KEYS = {"input": "input", "split": "split", "template": "prompt_template", "mode": "mode",
                "circular": "circular", "media_root": "media_root", "limit": "limit", "max_pixels": "max_pixels"}
"""Benchmark keys that are ``prepare`` options (plan key -> ``dest``)."""
GENERATION_FLAGS = ("max_new_tokens", "temperature")
"""``generation`` keys that are ``infer`` flags; the others are ``--gen-arg`` settings."""
NOT_BACKEND_ARGS = frozenset({"backend", "model", "backend_arg", "gen_arg", "system_prompt", "system_prompt_file",
                              *GENERATION_FLAGS})
"""``infer`` options with a plan key of their own, so not under ``backend_args``."""
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
"""A model or benchmark name: a folder name that needs no quoting and cannot climb out of the output root."""


def read_plan(path: Path) -> Plan:
    """Read and check the plan file at ``path``.

    Raises:
        PlanError: the file is not a plan (the message names the key); BadInputError: it cannot be read.
    """
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"cannot read the plan: {exc}", path=path) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BadInputError(f"not a YAML file: {exc}", path=path) from None
    try:
        return plan_from_mapping(data, base=path.resolve().parent, source=path)
    except PlanError as exc:
        raise PlanError(exc.key, exc.detail, path=path) from None


def plan_from_mapping(data: Any, *, base: Path, source: Path | None) -> Plan:
    """The plan a YAML document (or ``run``'s flags, as the same mapping) describes.

    Raises:
        PlanError: a missing, unknown or bad key.
    """
    top = require_mapping(data, "plan")
    _refuse_unknown(top, "", TOP_KEYS, "a plan key")
    output = _path(require_text(top.get("output"), "output"), base)
    models = tuple(_model(item, f"models[{i}]", base) for i, item in enumerate(_entries(top, "models")))
    extract = section_values(top.get("extract"), "extract", stage_actions("extract"), base, what="an extract option")
    score = section_values(top.get("score"), "score", stage_actions("score"), base, what="a score option")
    benchmarks = tuple(_benchmark(item, f"benchmarks[{i}]", base, extract, score)
                       for i, item in enumerate(_entries(top, "benchmarks")))
    _refuse_twice([(m.key, m.name) for m in models])
    _refuse_twice([(b.key, b.name) for b in benchmarks])
    plan = Plan(output, models, benchmarks, _reports(top.get("report", list(DEFAULT_REPORTS))), source)
    check_stage_options(plan)
    return plan


def check_stage_options(plan: Plan) -> None:
    """Build every stage's options of every model and benchmark, as the runner will, refusing what a stage refuses.

    Raises:
        PlanError: naming the model or benchmark (``models[1]: --gen-arg top_p ...``).
    """
    from mmbatch.plans.spec import stage_options

    scratch = plan.output / "_check"
    for model in plan.models:
        try:
            stage_options("infer", model.infer, scratch, scratch).backend_options()
        except PlanError:
            raise
        except BadInputError as exc:
            raise PlanError(model.key, exc.reason) from None
    for benchmark in plan.benchmarks:
        for stage, values in (("extract", benchmark.extract), ("score", benchmark.score)):
            try:
                stage_options(stage, values, scratch, scratch)
            except BadInputError as exc:
                raise PlanError(f"{benchmark.key}.{stage}", exc.reason) from None


def _model(item: Any, key: str, base: Path) -> ModelEntry:
    entry = require_mapping(item, key)
    _refuse_unknown(entry, key, MODEL_KEYS, "a model key")
    actions = stage_actions("infer")
    values: dict[str, Any] = {
        "backend": option_value(actions["backend"], require_text(entry.get("backend"), f"{key}.backend"),
                                f"{key}.backend", base),
        "model": require_text(entry.get("model"), f"{key}.model"),
    }
    backend_args, pairs = _backend_args(entry.get("backend_args"), f"{key}.backend_args", values["backend"], base)
    values |= backend_args
    flags, gen_args = _generation(entry.get("generation"), f"{key}.generation", base)
    values |= flags
    for name in ("system_prompt", "system_prompt_file"):
        if entry.get(name) is not None:
            values[name] = option_value(actions[name], entry[name], f"{key}.{name}", base)
    values["backend_arg"], values["gen_arg"] = pairs, gen_args
    name = _name(entry.get("name"), f"{key}.name", default=default_model_name(values["model"]))
    return ModelEntry(name, key, values)


def _backend_args(section: Any, key: str, backend: str, base: Path) -> tuple[dict[str, Any], list[str]]:
    """``infer`` flags given under ``backend_args``, and the rest as ``--backend-arg`` pairs the backend declares."""
    import dataclasses

    from mmbatch.backends.options import options_class
    from mmbatch.backends.registry import get_backend_declaration

    if section is None:
        return {}, []
    mapping = require_mapping(section, key)
    flags = {dest: action for dest, action in stage_actions("infer").items() if dest not in NOT_BACKEND_ARGS}
    declared = [field.name for field in dataclasses.fields(options_class(get_backend_declaration(backend)))]
    values, pairs = {}, []
    for name, value in mapping.items():
        dest = name.replace("-", "_")
        if value is None:
            continue
        if dest in flags:
            values[dest] = option_value(flags[dest], value, f"{key}.{name}", base)
        elif dest in declared and dest not in NOT_BACKEND_ARGS:
            if isinstance(value, Mapping | list):
                raise PlanError(f"{key}.{name}", f"expected a single value, got {describe(value)}")
            pairs.append(f"{dest}={_text(value)}")
        else:
            raise PlanError(f"{key}.{name}", f"neither an infer option nor a {backend} backend option; infer options: "
                            f"{', '.join(sorted(flags))}; {backend} options: {', '.join(declared)}")
    return values, pairs


def _generation(section: Any, key: str, base: Path) -> tuple[dict[str, Any], list[str]]:
    """``max_new_tokens`` and ``temperature`` as ``infer`` flags, the other keys as checked ``--gen-arg`` pairs."""
    import json

    from mmbatch.backends.generation_args import parse_generation_args

    if section is None:
        return {}, []
    actions = stage_actions("infer")
    flags, pairs = {}, []
    for name, value in require_mapping(section, key).items():
        if value is None:
            continue
        if name in GENERATION_FLAGS:
            flags[name] = option_value(actions[name], value, f"{key}.{name}", base)
            continue
        pair = f"{name}={json.dumps(value) if isinstance(value, list) else _text(value)}"
        try:
            parse_generation_args([pair])
        except BadInputError as exc:
            raise PlanError(f"{key}.{name}", exc.reason.partition(": ")[2] or exc.reason) from None
        pairs.append(pair)
    return flags, pairs


def _benchmark(item: Any, key: str, base: Path, extract: dict[str, Any], score: dict[str, Any]) -> BenchmarkEntry:
    from mmbatch.benchmarks.registry import get_benchmark

    entry = require_mapping(item, key)
    _refuse_unknown(entry, key, BENCHMARK_KEYS, "a benchmark key")
    try:
        benchmark = get_benchmark(require_text(entry.get("benchmark"), f"{key}.benchmark")).name
    except PlanError:
        raise
    except BadInputError as exc:
        raise PlanError(f"{key}.benchmark", exc.reason) from None
    actions = stage_actions("prepare")
    prepare: dict[str, Any] = {"benchmark": benchmark}
    for plan_key, dest in PREPARE_KEYS.items():
        value = entry.get(plan_key)
        if value is not None:
            if dest == "prompt_template" and isinstance(value, str) and (base / value).is_file():
                value = str(base / value)  # a template file beside the plan
            prepare[dest] = option_value(actions[dest], value, f"{key}.{plan_key}", base)
    _check_source(benchmark, prepare, key)
    shards = entry.get("shards", 1)
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        raise PlanError(f"{key}.shards", f"expected a whole number >= 1, got {describe(shards)}")
    split = prepare.get("split")
    name = _name(entry.get("name"), f"{key}.name", default=f"{benchmark}-{split}" if split else benchmark)
    own_extract = section_values(entry.get("extract"), f"{key}.extract", stage_actions("extract"), base,
                                 what="an extract option")
    own_score = section_values(entry.get("score"), f"{key}.score", stage_actions("score"), base, what="a score option")
    media = {"media_root": prepare["media_root"]} if "media_root" in prepare else {}
    return BenchmarkEntry(name, key, benchmark, prepare, media, {**media, **extract, **own_extract},
                          {**score, **own_score}, shards)


def _check_source(benchmark: str, prepare: Mapping[str, Any], key: str) -> None:
    """``input`` or ``split``, not both; a ``split`` the benchmark declares."""
    from mmbatch.benchmarks.registry import get_benchmark
    from mmbatch.data.fetch import source_file

    if "input" in prepare and "split" in prepare:
        raise PlanError(f"{key}.split", "give 'input' (a file of your own) or 'split' (an official file, fetched), "
                        "not both")
    if "input" not in prepare:
        try:
            source_file(get_benchmark(benchmark), prepare.get("split"))
        except BadInputError as exc:
            raise PlanError(f"{key}.split" if "split" in prepare else f"{key}.input", exc.reason) from None


def _entries(top: Mapping[str, Any], key: str) -> list[Any]:
    value = top.get(key)
    if not isinstance(value, list) or not value:
        raise PlanError(key, f"expected a list with at least one entry, got {describe(value)}")
    return value


def _reports(value: Any) -> tuple[str, ...]:
    if value is False or value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    for position, item in enumerate(items):
        if item not in REPORT_FORMATS:
            raise PlanError(f"report[{position}]", f"{describe(item)} is not one of {', '.join(REPORT_FORMATS)}")
    return tuple(dict.fromkeys(items))


def _refuse_unknown(entry: Mapping[str, Any], key: str, accepted: tuple[str, ...], what: str) -> None:
    for name in entry:
        if name not in accepted:
            raise PlanError(f"{key}.{name}" if key else str(name), f"not {what}; accepted: {', '.join(accepted)}")


def _refuse_twice(named: list[tuple[str, str]]) -> None:
    seen: dict[str, str] = {}
    for key, name in named:
        if name.lower() in seen:
            raise PlanError(f"{key}.name", f"{name!r} is also the name of {seen[name.lower()]}; give each its own "
                            "name (it is a folder of the output root)")
        seen[name.lower()] = key


def _name(value: Any, key: str, *, default: str) -> str:
    return folder_name(default if value is None else require_text(value, key), key)


def folder_name(name: str, key: str) -> str:
    """``name`` when it can be a folder of the output root.

    Raises:
        PlanError: it cannot (a path separator, a leading dot, spaces...).
    """
    if not NAME.fullmatch(name):
        raise PlanError(key, f"{name!r} cannot be a folder name: use letters, digits, '.', '_', '+' and '-' "
                        "(set 'name' to choose one)")
    return name


def default_model_name(model: str) -> str:
    """The last part of a hub id or path (``llava-hf/llava-1.5-7b-hf`` -> ``llava-1.5-7b-hf``)."""
    last = model.rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._+-]", "-", last).lstrip(".-_+") or "model"


def _path(text: str, base: Path) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else base / path


def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)

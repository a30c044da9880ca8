"""``mmbatch extract``: turn predictions into choices with the official rules and, for the rest, an LLM judge."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmbatch.answers.letters import CHOICE_RULES, DEFAULT_CHOICE_RULES
from mmbatch.benchmarks.registry import benchmark_names
from mmbatch.commands import summary
from mmbatch.options import LazyHelpStore, non_negative_float, non_negative_int, positive_float, positive_int

if TYPE_CHECKING:
    from mmbatch.extract.options import ExtractOptions

YES_NO_RULES = ("official", "vlmevalkit")
REDUCTIONS = ("sum", "mean", "mean-char")
DEFAULT_REASONING_TAGS = '[["<think>", "</think>"]]'
"""``--reasoning-tags`` as the command line writes it (the same pairs as ``ExtractOptions.reasoning_tags``)."""


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``extract`` command."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "extract",
        help=summary("extract"),
        description="Match each prediction to an option with VLMEvalKit's rules; ask an LLM judge (any "
        "OpenAI-compatible server) only about what the rules cannot match. The judge never guesses, its replies "
        "are cached, and rerunning the same command resumes. The judge's key is read from MMBATCH_JUDGE_API_KEY "
        "or OPENAI_API_KEY and never printed.",
    )
    parser.add_argument("--input", required=True, type=Path,
                        help="predictions (.parquet/.tsv from infer, or a VLMEvalKit/LLaVA .xlsx/.tsv)")
    parser.add_argument("--output", required=True, type=Path, help="extracted file (.parquet or .tsv)")
    parser.add_argument("--benchmark", action=LazyHelpStore,
                        lazy_help=lambda: "benchmark of a file without a 'benchmark' column "
                        f"({', '.join(benchmark_names())})")
    parser.add_argument("--model", dest="model_name",
                        help="model name for a file without a 'model' column (default: the input file's name without "
                        "the benchmark and file-kind words: vila_13b_CCBench.xlsx -> vila_13b)")
    parser.add_argument("--no-judge", action="store_true", help="rules only: what they cannot match stays unmatched")
    parser.add_argument("--judge-model",
                        help="judge model (default gpt-4o-mini, VLMEvalKit's; gpt-3.5-turbo-0125 reproduces the "
                        "MMBench leaderboard)")
    parser.add_argument("--judge-base-url", help="OpenAI-compatible judge server, e.g. http://localhost:8000/v1 "
                        "(default: the official API)")
    parser.add_argument("--judge-cache", type=Path,
                        help="SQLite cache of judge replies (default: mmbatch-judge-cache.sqlite beside the output)")
    parser.add_argument("--concurrency", type=positive_int, default=16, help="judge requests in flight (default 16)")
    parser.add_argument("--timeout", type=positive_float, default=60.0, help="seconds per judge request (default 60)")
    parser.add_argument("--max-retries", type=non_negative_int, default=5,
                        help="retries per judge request on 429/5xx/timeouts/garbage (default 5)")
    parser.add_argument("--retry-backoff", type=non_negative_float, default=1.0,
                        help="first retry delay in seconds, doubled each retry, with jitter; a Retry-After header "
                        "wins (default 1)")
    parser.add_argument("--choice-rules", choices=tuple(CHOICE_RULES), default=DEFAULT_CHOICE_RULES,
                        help="MCQ answers: the era of VLMEvalKit's can_infer: vlmevalkit (today's, default), "
                        "vlmevalkit-2025 (Aug 2025 - Jun 2026), vlmevalkit-2024 (the rules of numbers published "
                        "2024 - mid-2025); recorded in the output. VLMEvalKit's default choice judge was "
                        "gpt-3.5-turbo-0125 until its pull request 1499 (Apr 2026), gpt-4o-mini since: to reproduce a "
                        "number, pair the era with --judge-model (docs/extract.md, 'Judge eras')")
    parser.add_argument("--yes-no-rule", choices=YES_NO_RULES, default="official",
                        help="yes/no benchmarks: official (the benchmark's own rule: MME's tool, POPE's script; "
                        "default) or vlmevalkit (word rule, judge for Unknown)")
    parser.add_argument("--kind-option", action="append", default=[], type=kind_option, metavar="NAME=VALUE",
                        help="a setting of a benchmark's answer kind (e.g. a benchmark's official rule instead of "
                        "VLMEvalKit's); repeatable; names and values per kind in docs/scoring.md; recorded")
    parser.add_argument("--likelihood-reduction", choices=REDUCTIONS, default="sum",
                        help="likelihood rows: rank options by summed log-prob (sum, default), per token (mean) or "
                        "per character (mean-char)")
    parser.add_argument("--unmatched", choices=("none", "random"), default="none",
                        help="rows the judge cannot match: none (stay empty, default) or random (VLMEvalKit's "
                        "seeded random letter)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of --unmatched random (default 0)")
    parser.add_argument("--skip-failed-groups", action=argparse.BooleanOptionalAction, default=True,
                        help="CircularEval: do not ask the judge about rows of a group already known wrong "
                        "(default on, as VLMEvalKit)")
    parser.add_argument("--clip-model", default="openai/clip-vit-large-patch14",
                        help="generate-image rows (SEED-Bench-2 level 3): CLIP-family model comparing the generated "
                        "picture with each option picture (default openai/clip-vit-large-patch14); recorded")
    parser.add_argument("--clip-batch-size", type=positive_int, default=16,
                        help="generate-image rows: pictures per CLIP forward pass (default 16)")
    parser.add_argument("--clip-device", default="auto", help="generate-image rows: auto (CUDA when present), cpu, "
                        "cuda or cuda:N")
    parser.add_argument("--media-root", type=Path, help="generate-image rows: folder the option pictures are read "
                        "in (default: the predictions file's folder, or the root prepare recorded when inside it)")
    parser.add_argument("--reasoning-tags", default=DEFAULT_REASONING_TAGS, metavar="none|JSON",
                        help="reasoning traces removed from the prediction before matching, as a JSON list of "
                        "[opening, closing] pairs; the raw text stays in prediction, the matched text goes to "
                        "answer_text (default: <think>...</think>; none keeps the prediction as it is)")
    parser.add_argument("--stored-verdicts", action="store_true",
                        help="rows the rules leave open take the judge output an imported judged file stored "
                        "(`import --format vlmevalkit --judged`, or the judged file alone; mmvet-grades; "
                        "llava-bench-reviews), read as a live reply, instead of asking a judge; every row's score is "
                        "checked against the one recorded there, where there is one (exit 2 naming the first row that "
                        "differs). Without it stored judge outputs are ignored")
    parser.add_argument("--force", action="store_true",
                        help="discard earlier progress for OUTPUT made with other settings instead of refusing")
    return parser


def kind_option(text: str) -> tuple[str, str]:
    """``--kind-option NAME=VALUE`` as a pair."""
    name, equals, value = text.partition("=")
    if not equals or not name.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def options(args: argparse.Namespace) -> ExtractOptions:
    """The stage's options from the parsed arguments."""
    from mmbatch.extract.options import DEFAULT_JUDGE_MODEL, ExtractOptions
    from mmbatch.extract.reasoning import parse_reasoning_tags

    _refuse_judge_settings_without_judge(args)
    return ExtractOptions(
        input=args.input, output=args.output, benchmark=args.benchmark, model_name=args.model_name,
        use_judge=not args.no_judge, judge_model=args.judge_model or DEFAULT_JUDGE_MODEL,
        judge_base_url=args.judge_base_url,
        judge_cache=args.judge_cache, concurrency=args.concurrency, request_timeout_s=args.timeout,
        max_retries=args.max_retries, retry_backoff_s=args.retry_backoff, choice_rules=args.choice_rules,
        yes_no_rule=args.yes_no_rule, kind_options=tuple(args.kind_option),
        likelihood_reduction=args.likelihood_reduction, unmatched=args.unmatched, seed=args.seed,
        skip_failed_groups=args.skip_failed_groups, clip_model=args.clip_model,
        clip_batch_size=args.clip_batch_size, clip_device=args.clip_device, media_root=args.media_root,
        force=args.force, reasoning_tags=parse_reasoning_tags(args.reasoning_tags),
        stored_verdicts=args.stored_verdicts,
    )


JUDGE_SETTINGS = (("judge_model", "--judge-model"), ("judge_base_url", "--judge-base-url"),
                  ("judge_cache", "--judge-cache"))
"""Options that only the judge uses: given with ``--no-judge`` they say two contradictory things."""


def _refuse_judge_settings_without_judge(args: argparse.Namespace) -> None:
    """``--no-judge`` with a judge setting (or its ``MMBATCH_*`` variable) is a contradiction, not a choice to guess.

    Raises:
        BadInputError: both were given.
    """
    from mmbatch.errors import BadInputError

    if not args.no_judge:
        return
    given = [flag for dest, flag in JUDGE_SETTINGS if getattr(args, dest, None) is not None]
    if given:
        raise BadInputError(f"--no-judge contradicts {', '.join(given)}: drop --no-judge to use the judge, or drop "
                            f"{', '.join(given)} for the rules only")


def execute(stage_options: ExtractOptions) -> int:
    """Run the stage and print its summary; exit 3 when some rows failed."""
    from mmbatch.console import error_console
    from mmbatch.extract.stage import run_extract
    from mmbatch.extract.summary import summary_lines

    result = run_extract(stage_options)
    for line in summary_lines(result.summary):
        error_console.print(line, soft_wrap=True, markup=False, highlight=False)
    return result.exit_code


def run(args: argparse.Namespace) -> int:
    """Run the stage and print its summary; exit 3 when some rows failed."""
    return execute(options(args))

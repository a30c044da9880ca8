"""``mmbatch run --plan`` and the one-line form: build the plan, run it, print what became of every pair."""

from __future__ import annotations

import argparse
from pathlib import Path

from mmbatch.errors import BadInputError
from mmbatch.plans.runner import PlanResult, RunSettings, run_plan
from mmbatch.plans.spec import Plan
from mmbatch.shards import WHOLE, Shard, parse_shard, shard_from_environment

PLAN_FLAGS = frozenset({"plan", "output_dir", "shard", "merge", "force", "command", "_run", "_run_parser"})
"""``run`` arguments that may go with ``--plan``; every other setting belongs in the plan file (``MMBATCH_*``
variables still fill in what the plan leaves out, as for any stage)."""


def flags_given(given: argparse.Namespace) -> list[str]:
    """The ``run`` options set on the command line (not by their ``MMBATCH_*`` variable), plan flags left out."""
    parser = getattr(given, "_run_parser", None)
    actions = {action.dest: action for action in parser._actions} if parser is not None else {}
    found = []
    for dest, value in vars(given).items():
        if dest in PLAN_FLAGS:
            continue
        default = parser.get_default(dest) if parser is not None else argparse.SUPPRESS
        action = actions.get(dest)
        if default is not argparse.SUPPRESS and isinstance(default, str) and action is not None \
                and callable(action.type):
            default = action.type(default)
        if default is argparse.SUPPRESS or value != default:
            found.append(dest)
    return sorted(found)


def machine_shard(given: argparse.Namespace) -> Shard:
    """``--shard K/N``, else the scheduler's (a Slurm array or Kubernetes Indexed Job of plan runs), else whole."""
    text = getattr(given, "shard", None)
    return parse_shard(text) if text else shard_from_environment()


def plan_of(given: argparse.Namespace) -> Plan:
    """The plan file's plan (``--output-dir``, when given, replaces its output), or the one-line form's.

    Raises:
        BadInputError: stage options given beside ``--plan``, or a bad plan.
    """
    import dataclasses

    from mmbatch.plans.oneline import plan_from_flags
    from mmbatch.plans.read import read_plan

    if getattr(given, "plan", None) is None:
        return plan_from_flags(given)
    extra = flags_given(given)
    if extra:
        raise BadInputError(f"--{extra[0].replace('_', '-')} is set beside --plan: with a plan, every setting is in "
                            "the plan file (docs/plans.md); only --output-dir, --shard, --merge and --force go with it")
    plan = read_plan(Path(given.plan))
    output = getattr(given, "output_dir", None)
    return plan if output is None else dataclasses.replace(plan, output=Path(output))


def run_plan_command(given: argparse.Namespace) -> int:
    """Run the plan ``given`` describes and print a line per pair; the exit status is the worst pair's."""
    plan = plan_of(given)
    machine = machine_shard(given)
    merge_only = bool(getattr(given, "merge", False))
    if merge_only and machine != WHOLE:
        raise BadInputError("--merge finishes the whole plan: give it without --shard (and without a scheduler's "
                            "shard variables)")
    result = run_plan(plan, RunSettings(machine=machine, merge_only=merge_only,
                                        force=bool(getattr(given, "force", False))))
    print_result(plan, result, machine)
    return result.exit_status


def print_result(plan: Plan, result: PlanResult, machine: Shard) -> None:
    """One line per pair, the model loads, and where the files are."""
    from mmbatch.console import console

    def say(line: str) -> None:
        console.print(line, markup=False, highlight=False, soft_wrap=True)

    which = "" if machine.is_whole else f" (units of shard {machine})"
    say(f"plan: {len(plan.models)} model(s) x {len(plan.benchmarks)} benchmark(s) -> {plan.output}{which}")
    for pair in result.pairs:
        reason = f": {pair.message}" if pair.message else ""
        say(f"  {pair.model} / {pair.benchmark}: {pair.state} (exit {pair.status}){reason}")
    loads = ", ".join(f"{name} {count}x" for name, count in result.loads.items())
    say(f"model loads: {loads or 'none'}")
    for path in result.reports:
        say(f"wrote {path}")

"""The plan's reports: every finished pair's metrics in one leaderboard at the output root.

Each model is shown by its plan name (its metrics file labelled with it), so the summary table has one row per plan
model and one column per benchmark. Pairs that are not finished with the plan's current settings are left out.
"""

from __future__ import annotations

from pathlib import Path

from mmbatch.plans.layout import PlanLayout
from mmbatch.plans.pair_record import finished_status, pair_settings
from mmbatch.plans.spec import Plan


def finished_pairs(plan: Plan, layout: PlanLayout) -> dict[Path, str]:
    """Metrics file -> ``model/benchmark``, of every pair finished with the plan's settings, in plan order."""
    return {layout.pair(model, benchmark).metrics: f"{model.name}/{benchmark.name}"
            for model in plan.models for benchmark in plan.benchmarks
            if finished_status(layout.pair(model, benchmark), pair_settings(model, benchmark)) is not None}


def finished_metrics(plan: Plan, layout: PlanLayout) -> dict[Path, str]:
    """Metrics file -> model name, of every pair finished with the plan's settings, in plan order."""
    return {path: name.partition("/")[0] for path, name in finished_pairs(plan, layout).items()}


def write_plan_reports(plan: Plan, layout: PlanLayout) -> list[Path]:
    """Write ``report.<format>`` for each of the plan's report formats; none when no pair has finished."""
    from mmbatch.console import error_console
    from mmbatch.report.write import write_report

    metrics = finished_metrics(plan, layout)
    if not metrics or not plan.reports:
        return []
    labels = {str(path): name for path, name in metrics.items()}
    written = []
    for report_format in plan.reports:
        output = layout.report(report_format)
        write_report(list(metrics), output, labels=labels)
        written.append(output)
    error_console.print(f"report: {', '.join(str(path) for path in written)} ({len(metrics)} finished pairs)",
                        markup=False, highlight=False, soft_wrap=True)
    return written

"""A stand-in for ``sbatch`` (no Slurm here) that runs each submitted job at once, as Slurm would run it later.

``sbatch --parsable --export=ALL[,NAME=VALUE...] [--array=A-B] [--dependency=afterok:ID] SCRIPT`` runs SCRIPT with
bash in the current folder, with this environment plus the exported pairs, once per array task (with
``SLURM_ARRAY_TASK_ID``/``_COUNT``/``_MIN`` set as Slurm sets them); a job whose ``afterok`` dependency did not end
with 0 in every task never runs, as Slurm leaves it pending. The job id is printed (``--parsable``); every job's
status and output go to ``$FAKE_SBATCH_STATE`` (JSON lines), read by the tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    """Run the job ``argv`` submits; print its id."""
    state = os.environ["FAKE_SBATCH_STATE"]
    jobs = [json.loads(line) for line in Path(state).read_text().splitlines()] if os.path.exists(state) else []
    options = {arg.split("=", 1)[0]: arg.split("=", 1)[1] if "=" in arg else "" for arg in argv[:-1]}
    script = argv[-1]
    env = dict(os.environ)
    for pair in options.get("--export", "ALL").split(",")[1:]:
        name, _, value = pair.partition("=")
        env[name] = value
    job_id = str(1000 + len(jobs))
    tasks = [None]
    if "--array" in options:
        first, last = (int(n) for n in options["--array"].split("-"))
        tasks = list(range(first, last + 1))
    waits_for = options.get("--dependency", "").removeprefix("afterok:")
    if waits_for and not any(job["id"] == waits_for and job["status"] == 0 for job in jobs):
        record = {"id": job_id, "script": os.path.basename(script), "status": None, "output": "never ran"}
    else:
        status, output = 0, ""
        for task in tasks:
            task_env = {**env, "SLURM_JOB_ID": job_id}
            if task is not None:
                task_env.update(SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_COUNT=str(len(tasks)),
                                SLURM_ARRAY_TASK_MIN=str(tasks[0]))
            result = subprocess.run(["bash", script], env=task_env, capture_output=True, text=True, timeout=300)
            output += result.stdout + result.stderr
            status = status or result.returncode
        record = {"id": job_id, "script": os.path.basename(script), "status": status, "output": output[-3000:]}
    with open(state, "a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")
    print(job_id)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

""":func:`~.equality.is_equal` under VLMEvalKit's 30 s timeout: in a worker process that is killed at the deadline.

``latex2sympy`` and sympy can run for ever on some texts, and Python cannot stop a running computation from inside,
so the comparisons run in one long-lived child process (``python -m mmbatch.benchmarks.mathvision.equality_worker``)
fed one pair per line; a pair that is not answered within :data:`DEADLINE_S` is VLMEvalKit's timeout (not equal),
and the child is killed and started again for the next pair. The child exits when its input closes (the parent
ended), so it never outlives the command. Verdicts are kept per pair for the life of the process.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import select
import subprocess
import sys
from pathlib import Path

from mmbatch.benchmarks.mathvision.equality import TIMEOUT, Verdict
from mmbatch.errors import BadInputError

DEADLINE_S = 30.0
"""VLMEvalKit's ``timeout_decorator.timeout(30)`` on ``is_equal``."""
PACKAGE = "latex2sympy2_extended"
"""The converter VLMEvalKit imports first (its pull request 1499, 2026-04-09)."""
INSTALL = "pip install 'mmbatch[mathvision]'"


class EqualityWorker:
    """A child process answering :func:`~.equality.is_equal` for (answer, truth) pairs, within the deadline."""

    def __init__(self, deadline_s: float = DEADLINE_S) -> None:
        self.deadline_s = deadline_s
        self._process: subprocess.Popen[bytes] | None = None
        self._known: dict[tuple[str, str], Verdict] = {}

    def compare(self, answer: str, truth: str) -> Verdict:
        """The verdict of VLMEvalKit's ``is_equal(answer, truth)``.

        Raises:
            BadInputError: latex2sympy2_extended is not installed (exit 2 with the install command).
        """
        key = (answer, truth)
        if key not in self._known:
            self._known[key] = self._ask(answer, truth)
        return self._known[key]

    def _ask(self, answer: str, truth: str) -> Verdict:
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write((json.dumps([answer, truth]) + "\n").encode())
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], self.deadline_s)
        if not ready:
            self.close()
            return Verdict(TIMEOUT, f"no verdict within {self.deadline_s:g} s: VLMEvalKit's timeout")
        line = process.stdout.readline()
        if not line:
            code = process.wait()
            self._process = None
            raise RuntimeError(f"the MathVision comparison worker ended (status {code}) on {answer[:80]!r}")
        outcome, reason = json.loads(line)
        return Verdict(outcome, reason)

    def _start(self) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        if importlib.util.find_spec(PACKAGE) is None:
            raise BadInputError(f"scoring MathVision needs the {PACKAGE} package (VLMEvalKit's latex2sympy), which is "
                                f"not installed here: {INSTALL}")
        root = str(Path(__file__).resolve().parents[3])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (root, os.environ.get("PYTHONPATH"))))}
        self._process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        return self._process

    def close(self) -> None:
        """Stop the child (killed: it may be stuck in a computation)."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None


WORKER = EqualityWorker()
"""The process's worker, started on the first comparison."""
atexit.register(WORKER.close)


def compare(answer: str, truth: str) -> Verdict:
    """VLMEvalKit's ``is_equal(answer, truth)`` through :data:`WORKER`."""
    return WORKER.compare(answer, truth)


def serve() -> None:
    """The child's loop: one JSON pair per input line, one ``[outcome, reason]`` per output line."""
    from latex2sympy2_extended import latex2sympy

    from mmbatch.benchmarks.mathvision.equality import is_equal

    replies, sys.stdout = sys.stdout, sys.stderr  # anything a library prints stays off the reply channel
    for line in sys.stdin:
        answer, truth = json.loads(line)
        verdict = is_equal(answer, truth, latex2sympy)
        replies.write(json.dumps([verdict.outcome, verdict.reason]) + "\n")
        replies.flush()


if __name__ == "__main__":
    serve()

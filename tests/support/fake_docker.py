"""A stand-in for ``docker`` (there is no engine here): records each ``docker run`` and can replay it locally.

``docker run [OPTIONS] IMAGE ARGS...`` is parsed like Docker's own CLI (the options examples/pipeline.sh uses). The
call is appended as JSON to ``$FAKE_DOCKER_LOG``; with ``FAKE_DOCKER_EXECUTE=1`` it then runs ``mmbatch ARGS`` with
this Python in the host folder mounted at the image's working directory ``/data`` (the ENTRYPOINT and WORKDIR the
Dockerfile declares), passing only the ``-e`` variables, as a container would see them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

VALUE_OPTIONS = {"--gpus", "--user", "-u", "-v", "--volume", "-e", "--env", "-w", "--workdir", "--name"}
FLAG_OPTIONS = {"--rm", "-i", "-t", "-it"}
WORKDIR = "/data"


def parse_run(argv: list[str]) -> dict[str, object]:
    """Split ``run OPTIONS IMAGE ARGS`` into its parts; unknown options are an error, as with Docker."""
    if not argv or argv[0] != "run":
        raise SystemExit(f"fake docker: only `docker run` is supported, got {argv[:1]}")
    options: list[tuple[str, str | None]] = []
    rest = argv[1:]
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in FLAG_OPTIONS:
            options.append((option, None))
        elif option in VALUE_OPTIONS:
            options.append((option, rest.pop(0)))
        else:
            raise SystemExit(f"fake docker: unknown option {option}")
    image, args = rest[0], rest[1:]
    return {"options": options, "image": image, "args": args}


def main() -> int:
    call = parse_run(sys.argv[1:])
    with open(os.environ["FAKE_DOCKER_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(call) + "\n")
    if os.environ.get("FAKE_DOCKER_EXECUTE") != "1":
        return 0
    options = call["options"]
    assert isinstance(options, list)
    mounts = dict(value.split(":", 1)[::-1] for key, value in options if key in ("-v", "--volume"))
    env = {"PATH": os.environ["PATH"], "HF_HOME": mounts["/hf-cache"]}
    for key, value in options:
        if key in ("-e", "--env") and value is not None:
            name, _, literal = value.partition("=")
            if literal or name in os.environ:
                env[name] = literal or os.environ[name]
    args = call["args"]
    assert isinstance(args, list)
    return subprocess.run([sys.executable, "-m", "mmbatch", *args], cwd=mounts[WORKDIR], env=env).returncode


if __name__ == "__main__":
    raise SystemExit(main())

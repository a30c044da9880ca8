# The demo's judge, sourced by examples/demo.sh: a real OpenAI-compatible HTTP server on 127.0.0.1 answering as a
# deterministic stand-in judge (tests/support/openai_server.py --reply judge: the MCQ option sharing most words with
# the answer, and MM-Vet grades by word overlap). It is the server the test suite checks the judge-scored kinds
# against, so the demo and the tests grade with the same judge; make demo runs from a repository checkout, where
# tests/ is (neither examples/ nor tests/ is in the Docker images). For a real judge: drop --judge-base-url (and
# MMBATCH_JUDGE_BASE_URL) and export OPENAI_API_KEY, or point them at your own server (docs/extract.md).
#
#   start_judge_server DIR [PORT]   start it (PORT 0: any free port), logging into DIR; sets judge_url and judge_pid.
#                                   It is stopped when the sourcing script exits, however it exits: an EXIT trap
#                                   (errors, Ctrl-C, kill), and the server itself ends when its parent is gone
#                                   (kill -9 runs no trap). Waits at most JUDGE_START_S seconds (default 30) for it
#                                   to listen, then fails naming its log.
#   stop_judge_server               stop it now (again at exit is harmless).

start_judge_server() {
    local dir=$1 port=${2:-0} port_file tries
    port_file="$dir/judge-server.port"
    : >"$port_file"
    python3 tests/support/openai_server.py --port "$port" --reply judge --exit-with-parent \
        >"$port_file" 2>"$dir/judge-server.log" &
    judge_pid=$!
    trap stop_judge_server EXIT
    tries=$(( ${JUDGE_START_S:-30} * 10 ))
    # Bounded: a server that dies (a busy port) or never listens ends the wait, not a hang.
    while (( tries-- > 0 )) && ! grep -q '^PORT ' "$port_file" && kill -0 "$judge_pid" 2>/dev/null; do
        sleep 0.1
    done
    if ! grep -q '^PORT ' "$port_file"; then
        echo "the stand-in judge did not start (log: $dir/judge-server.log):" >&2
        tail -n 5 "$dir/judge-server.log" >&2
        stop_judge_server
        return 1
    fi
    judge_url="http://127.0.0.1:$(awk '/^PORT / {print $2}' "$port_file")/v1"
}

stop_judge_server() {
    if [[ -n ${judge_pid:-} ]]; then
        kill "$judge_pid" 2>/dev/null || true
        wait "$judge_pid" 2>/dev/null || true
        judge_pid=
    fi
}

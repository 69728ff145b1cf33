#!/usr/bin/env bash
# Bootstraps .venv when missing (or when pyproject.toml changed), then:
#   ./run_local.sh               audit the bundled sample into out/sample (replacing the last one) and print the summary
#   ./run_local.sh test [ARGS]   run the test suite on every core (ARGS go to pytest: -m "not slow" for
#                                the fast lane, -n 0 for one process)
#   ./run_local.sh ARGS...       any crawl-audit command, e.g. ./run_local.sh check FILE AGENT URL
set -euo pipefail
cd "$(dirname "$0")"

# EXTRAS picks the optional dependencies (CI adds gcp for the Dataflow graph tests); a change
# of extras reinstalls like a change of pyproject.toml does.
extras=${EXTRAS:-test}
stamp=.venv/.installed-from
wanted="$(sha256sum pyproject.toml | cut -d' ' -f1) [$extras]"
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "Setting up .venv (first run only; about a minute)..." >&2
  python3 -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[$extras]"
  echo "$wanted" > "$stamp"
fi

case "${1:-sample}" in
  sample)
    exec .venv/bin/crawl-audit run \
      --logs 'samples/logs/*.log.gz' --log-format host_combined \
      --robots samples/robots/history.jsonl --ranges samples/ranges \
      --out out/sample --overwrite --runner=FnApiRunner
    ;;
  test)
    shift
    # One test process per core; a module's tests stay in one process, so its fixtures run once.
    exec .venv/bin/python -m pytest -n auto --dist loadfile "$@"
    ;;
  *)
    exec .venv/bin/crawl-audit "$@"
    ;;
esac

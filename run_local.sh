#!/usr/bin/env bash
# Bootstraps .venv when missing (or when pyproject.toml changed), then:
#   ./run_local.sh               audit the bundled sample into out/sample (replacing the last one) and print the summary
#   ./run_local.sh test [ARGS]   run the test suite (ARGS go to pytest)
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
    exec .venv/bin/python -m pytest "$@"
    ;;
  *)
    exec .venv/bin/crawl-audit "$@"
    ;;
esac

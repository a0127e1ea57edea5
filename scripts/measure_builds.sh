#!/usr/bin/env bash
# Measures one plan over several builds of the engine, one campaign per build: a series
# (docs/measuring.md, "Measuring each new engine build").
#
#   bash scripts/measure_builds.sh [DATA_DIR] [VERSION ...]
#
# DATA_DIR: the data directory (default: data). VERSION: xllamacpp versions from the
# package index (default: BUILDS below). Each build gets a venv of its own,
# .venvs/xllamacpp-<version>/, holding only that wheel and reusing everything else from
# .venv (made by scripts/setup.sh), so a build costs one download of ~100 MB, not a whole
# environment. SITEGEN_BUILDS_PLAN names another series plan (default: the demo's),
# SITEGEN_BUILDS_VENVS another folder for the venvs (the tests keep theirs in a tmp dir).
#
# Idempotent and resumable: a build that already has a campaign is not measured again
# (its campaign is resumed when it is the series' latest, which is a no-op once it is
# complete); a build without one gets a new campaign (`measure --new-campaign`). The script
# stops at the first build whose measure does not finish, so that build's campaign stays
# the series' latest and the next run of the script resumes it (a plain `measure` resumes
# only the latest campaign of a series).
set -euo pipefail
cd "$(dirname "$0")/.."

# Builds of xllamacpp that sitegen's embedded engine runs, one per month from the first
# that has `CommonParams.speculative.types` (2026.5.9294; earlier wheels have a single
# `speculative.type` and fail to load any speculative condition) to the newest.
BUILDS=(2026.5.9294 2026.6.9538 2026.7.9873 2026.8.10229 2026.9.10809 2026.10.11549)

DATA_DIR=${1:-data}
shift || true
if (($#)); then BUILDS=("$@"); fi
PLAN=${SITEGEN_BUILDS_PLAN:-examples/plans/demo-builds.yaml}
MAIN_PY=${SITEGEN_PYTHON:-.venv/bin/python}
VENVS=${SITEGEN_BUILDS_VENVS:-.venvs}

if [[ ! -x $MAIN_PY ]]; then
  echo "error: $MAIN_PY not found: run bash scripts/setup.sh first (or set SITEGEN_PYTHON)" >&2
  exit 2
fi
# The main environment's site-packages, which every build's venv reads after its own.
MAIN_SITE=$("$MAIN_PY" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')

# make_venv VERSION: VENVS/xllamacpp-VERSION with that wheel, reused when it has it (the
# main environment's own build needs no wheel of its own: the venv reads it from there).
make_venv() {
  local version=$1 venv=$VENVS/xllamacpp-$1
  if [[ ! -x $venv/bin/python ]]; then
    # No pip of its own: the main environment's pip (found through the .pth below)
    # installs into this venv, as it runs under this venv's interpreter.
    "$MAIN_PY" -m venv --without-pip "$venv"
    local site
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    # addsitedir, not a bare path line: it also runs the main environment's own .pth
    # files (sitegen's editable install). Appended after the venv's own site-packages,
    # so this venv's xllamacpp wins over the main one.
    echo "import site; site.addsitedir('$MAIN_SITE')" >"$site/zz_sitegen_main.pth"
  fi
  if [[ $("$venv/bin/python" -c 'import xllamacpp; print(xllamacpp.__version__)' 2>/dev/null) != "$version" ]]; then
    # --ignore-installed: the main environment's xllamacpp is visible here too and must
    # be neither uninstalled nor taken as satisfying the request; --no-deps: everything
    # else comes from the main environment.
    "$venv/bin/python" -m pip install --quiet --no-deps --ignore-installed "xllamacpp==$version"
  fi
}

# campaign_state VERSION: what measuring VERSION means for DATA_DIR's campaigns of PLAN:
# "new" (no campaign of this build: --new-campaign), "resume" (the series' latest campaign
# is this build's, or one whose engine never loaded: a plain measure resumes it) or
# "done CAMPAIGN" (an earlier campaign of this build, finished before the script moved on).
campaign_state() {
  "$MAIN_PY" - "$DATA_DIR" "$PLAN" "$1" <<'PY'
import json
import sys
from pathlib import Path

from sitegen.core.errors import Issue
from sitegen.plan.plan_file import load_plan, plan_sha256
from sitegen.records.record_models import ENGINE_NOT_LOADED_API
from sitegen.records.registrations import read_registry

data, plan_file, version = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
plan = load_plan(plan_file)
tail = f"-{plan_sha256(plan)[:12]}"
order = {r.campaign_id: i for i, r in enumerate(read_registry(data, list[Issue]()))}
campaigns = sorted(
    (path for path in (data / "campaigns").glob(f"{plan.name}-*{tail}") if path.is_dir()),
    key=lambda path: order.get(path.name, -1),
)


def versions(campaign: Path) -> set[str]:
    """The engine versions of the campaign's records whose engine loaded."""
    found = set()
    records = campaign / "records.jsonl"
    lines = records.read_text(encoding="utf-8").splitlines() if records.exists() else []
    for line in lines:
        try:
            engine = json.loads(line)["provenance"]["engine"]
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line: measure drops it when it resumes
        if engine.get("api") != ENGINE_NOT_LOADED_API:
            found.add(str(engine.get("version", "")).split(" ")[-1])
    return found


latest = campaigns[-1] if campaigns else None
if latest is not None and (version in versions(latest) or not versions(latest)):
    print("resume")
else:
    earlier = [path for path in campaigns if version in versions(path)]
    print(f"done {earlier[0].name}" if earlier else "new")
PY
}

for version in "${BUILDS[@]}"; do
  make_venv "$version"
  # A failing helper stops the script here (set -e), not a measure with a guessed flag.
  state_line=$(campaign_state "$version")
  read -r state campaign <<<"$state_line"
  case $state in
    done)
      echo "xllamacpp $version: measured before (campaign $campaign), skipped"
      continue
      ;;
    new) flags=(--new-campaign) ;;
    *) flags=() ;;
  esac
  echo "xllamacpp $version: sitegen measure --plan $PLAN --data $DATA_DIR${flags[*]:+ ${flags[*]}}"
  status=0
  # `python -m sitegen`: the build's venv has no console script of its own.
  "$VENVS/xllamacpp-$version/bin/python" -m sitegen measure \
    --plan "$PLAN" --data "$DATA_DIR" ${flags[@]+"${flags[@]}"} || status=$?
  if ((status != 0)); then
    # Stop here: this build's campaign stays the series' latest, which the next run of
    # this script resumes (exit 3: failed or pending trials; 2: refused; 130: interrupted).
    echo "xllamacpp $version: measure exited $status; run this script again to resume it" >&2
    exit "$status"
  fi
done
echo "measured ${#BUILDS[@]} build(s) of plan $PLAN into $DATA_DIR; sitegen build publishes the series"

#!/usr/bin/env bash
# Incremental mutation testing of src/domain (docs/mutation-testing.md), for CI: Stryker re-tests only
# the mutants whose code or covering tests changed since test/mutation/stryker-incremental.json and
# reuses every other result, then scripts/mutation-check.ts fails when a file is under its floor
# (test/mutation/thresholds.json) or the whole domain under the overall one. Run it through npm
# (`npm run test:mutation:incremental`) so that the Node of node_modules/.bin runs Stryker.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
# clear-text lists every survivor, already in the state file: the check below names those of a failing file.
npx stryker run --incremental --reporters json,html,progress
node scripts/mutation-check.ts --report reports/mutation/mutation.json --thresholds test/mutation/thresholds.json
echo "mutation testing (incremental) took $(( $(date +%s) - started ))s"

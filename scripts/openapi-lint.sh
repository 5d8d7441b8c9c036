#!/bin/sh
# `npm run lint:openapi`: lints the OpenAPI document satang serves (GET /v1/openapi.json, built without
# a database by scripts/openapi-document.ts) with Redocly's recommended rules; fails on any error.
set -eu
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
node scripts/openapi-document.ts --out "$dir/openapi.json" >/dev/null
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx --no-install redocly lint --extends recommended --format stylish "$dir/openapi.json"

#!/usr/bin/env bash
# Writes the secrets docker-compose.yml reads into ./secrets (ignored by git), each only when absent:
#   db-password            PostgreSQL password of the satang user (the owner role: migrations only)
#   db-service-password    PostgreSQL password of satang_service (what every satang role connects as)
#   api-tokens             SATANG_API_TOKENS: one token with every scope (name default)
#   session-secret         SATANG_SESSION_SECRET_FILE: signs console sessions (every api replica the same)
#   merchant-private.pem   the merchant's RSA key pair (with the sandbox; for the real gateway, put the
#   merchant-public.pem      key pair whose public half the gateway registered)
#   gateway-private.pem    the sandbox's gateway key pair (for the real gateway, put its public key in
#   gateway-public.pem       gateway-public.pem; the private one is not needed)
#   anchor-private.pem     the Ed25519 key the scheduler signs anchors of the event log with (keep it: the
#                            anchors it signed are checked with its public half)
# Usage: scripts/compose-secrets.sh [DIR]   (default: ./secrets next to docker-compose.yml)
set -euo pipefail
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
dir=${1:-"$(cd "$(dirname "$0")/.." && pwd)/secrets"}
command -v openssl >/dev/null || { echo "compose-secrets: openssl is needed" >&2; exit 1; }
umask 077
mkdir -p "$dir"
made=()
random() { openssl rand -hex "$1"; }
if [ ! -s "$dir/db-password" ]; then random 24 >"$dir/db-password"; made+=(db-password); fi
if [ ! -s "$dir/db-service-password" ]; then random 24 >"$dir/db-service-password"; made+=(db-service-password); fi
if [ ! -s "$dir/api-tokens" ]; then printf 'default:%s:payments:write+read+audit+reconcile:write\n' "$(random 24)" >"$dir/api-tokens"; made+=(api-tokens); fi
if [ ! -s "$dir/session-secret" ]; then random 32 >"$dir/session-secret"; made+=(session-secret); fi
if [ ! -s "$dir/anchor-private.pem" ]; then openssl genpkey -algorithm ED25519 -out "$dir/anchor-private.pem" 2>/dev/null; made+=(anchor-private.pem); fi
for who in merchant gateway; do
  if [ ! -s "$dir/$who-private.pem" ]; then
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$dir/$who-private.pem" 2>/dev/null
    openssl pkey -in "$dir/$who-private.pem" -pubout -out "$dir/$who-public.pem"
    made+=("$who-private.pem" "$who-public.pem")
  fi
done
# The containers run as uid 1000 (node) or as the images' own users: Compose mounts file secrets as
# they are on the host, so they must be readable there. Keep ./secrets itself private (0700).
chmod 0700 "$dir"
chmod 0644 "$dir"/*
if [ ${#made[@]} -eq 0 ]; then echo "compose-secrets: every secret already in $dir"; else echo "compose-secrets: wrote ${made[*]} in $dir"; fi
echo "compose-secrets: the API token is in $dir/api-tokens (name:token:scopes)"

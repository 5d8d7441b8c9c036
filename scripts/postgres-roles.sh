#!/usr/bin/env bash
# Run once by the postgres image on a fresh data volume (/docker-entrypoint-initdb.d): creates the service
# role satang connects as (docs/operations.md "Least privilege"), with the password of the db_service_password secret.
# The image's own user (POSTGRES_USER, satang) is the owner role: only the one-shot migrate service
# connects as it (SATANG_DATABASE_OWNER_URL). On an existing volume, run the SQL of docs/operations.md "Least privilege" by hand.
set -euo pipefail
password=$(cat "${SATANG_SERVICE_PASSWORD_FILE:-/run/secrets/db_service_password}")
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -v password="$password" -v db="$POSTGRES_DB" <<'SQL'
create role satang_service login nosuperuser nocreatedb nocreaterole password :'password';
grant connect, create on database :"db" to satang_service;
SQL

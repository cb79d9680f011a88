#!/usr/bin/env bash
# The services the integration tests need, started where they are missing (safe to run again):
# the local cluster, the demo CA and the hub's certificate (trusted by the tests' Chromium),
# and the tests' PostgreSQL. make test runs it on this machine and in the Debian 13 root.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/local/cluster.sh start
bash deploy/local/https.sh make
bash deploy/local/https.sh trust
bash deploy/local/postgres.sh start

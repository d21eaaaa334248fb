#!/usr/bin/env bash
# Runs a test program in the user leg named by DSH_TEST_LEG: "nobody" runs it through
# as-nobody.sh, anything else (the caller leg, and GoogleTest's discovery at build time) runs it
# as it is. CMake prepends this script to every integration test command (the test target's
# CROSSCOMPILING_EMULATOR), so one discovered list of cases serves both legs.
set -euo pipefail
if [ "${DSH_TEST_LEG:-caller}" = nobody ]; then
  exec "$(dirname "${BASH_SOURCE[0]}")/as-nobody.sh" "$@"
fi
exec "$@"

#!/usr/bin/env bash
# The daemon's folders depend one way: the compositor core (compositor/, display/, rpc/) drives
# the backends through backends/backend.hpp and backends/display_feed.hpp; a backend or output
# (backends/*/) never includes the core. Prints each include that breaks this and fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
bad=$(grep -rnE '#include "(\.\./)+(compositor|rpc)/|#include "(\.\./)+display/(display_core|layer_renderer|blend_pipeline)' \
  service/backends || true)
if [ -n "$bad" ]; then
  echo "backends reach into the compositor core:" >&2
  echo "$bad" >&2
  exit 1
fi
echo "layering: no backend includes the compositor core"

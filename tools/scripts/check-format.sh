#!/usr/bin/env bash
# Every C++ source and header the repository tracks is as clang-format writes it (.clang-format).
# Prints each file that is not, with clang-format's complaints, and fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -d .git ]; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h')
else
  mapfile -t files < <(find client-lib service tools tests -name '*.cpp' -o -name '*.hpp' -o -name '*.h')
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "not clang-formatted (clang-format -i FILE fixes it):" >&2
  for f in "${bad[@]}"; do
    echo "  $f" >&2
    clang-format --dry-run "$f" 2>&1 | head -20 >&2
  done
  exit 1
fi
echo "format: ${#files[@]} C++ files as clang-format writes them"

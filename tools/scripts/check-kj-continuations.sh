#!/usr/bin/env bash
# KJ's then(), catch_() and evalLater() keep the function they are given as it is given: passed a
# named function object (an lvalue), the promise keeps a reference to it, which dangles once that
# variable's scope ends while the promise still waits. Every continuation is therefore passed as
# a temporary (a lambda written in place, kj::mv(f) or kj::cp(f)). Prints each call that passes a
# bare name and fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
bad=$(git ls-files '*.cpp' '*.hpp' | xargs perl -0777 -ne '
  while (/(\.(?:then|catch_)|kj::evalLater|kj::evalLast)\(\s*([A-Za-z_]\w*)\s*[,)]/g) {
    my ($call, $name) = ($1, $2);
    my $line = 1 + (substr($_, 0, $-[0]) =~ tr/\n//);
    print "$ARGV:$line: $call($name ...)\n";
  }' || true)
if [ -n "$bad" ]; then
  echo "continuations passed by name (KJ keeps a reference to them; pass kj::mv(f) or kj::cp(f)):" >&2
  echo "$bad" >&2
  exit 1
fi
echo "kj continuations: every one passed as a temporary"

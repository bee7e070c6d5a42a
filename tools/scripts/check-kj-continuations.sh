#!/usr/bin/env bash
# KJ's then(), catch_() and evalLater() keep what they are given as it is given: passed
# a named object (an lvalue), the promise keeps a reference to it, which dangles once that
# variable's scope ends while the promise still waits. Every argument of those calls is therefore
# a temporary (a lambda written in place, kj::mv(x), kj::cp(x), a call's result). Prints each
# argument that is a bare name and fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
bad=$(git ls-files '*.cpp' '*.hpp' | xargs perl -0777 -ne '
  my $src = $_;
  while ($src =~ /(\.(?:then|catch_)|kj::evalLater|kj::evalLast)\s*(\((?:[^()]++|(?2))*\))/g) {
    my ($call, $args, $at) = ($1, substr($2, 1, -1), $-[0]);
    # Split the argument list at its top-level commas.
    my ($depth, $cur, @parts) = (0, "");
    for my $c (split //, $args) {
      $depth++ if $c =~ /[(\[{]/;
      $depth-- if $c =~ /[)\]}]/;
      if ($c eq "," && $depth == 0) { push @parts, $cur; $cur = ""; } else { $cur .= $c; }
    }
    push @parts, $cur;
    for my $arg (@parts) {
      next unless $arg =~ /^\s*([A-Za-z_]\w*)\s*$/;
      next if $1 eq "nullptr" || $1 eq "true" || $1 eq "false";
      my $line = 1 + (substr($src, 0, $at) =~ tr/\n//);
      print "$ARGV:$line: $call(... $1 ...)\n";
    }
  }' || true)
if [ -n "$bad" ]; then
  echo "KJ continuations passed by name (KJ keeps a reference; pass kj::mv(x) or kj::cp(x)):" >&2
  echo "$bad" >&2
  exit 1
fi
echo "kj continuations: every one passed as a temporary"

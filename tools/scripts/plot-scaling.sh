#!/usr/bin/env bash
# Plots bench-scaling.sh's JSON: daemon CPU per client frame, release call p50/p99 and display
# work per display frame against the number of clients (SVG, log-scaled x).
#   tools/scripts/plot-scaling.sh scaling.json out.svg [title]
# Installs jq and gnuplot-nox with apt-get if they are missing.
set -euo pipefail
json=${1:?scaling.json}
svg=${2:?out.svg}
title=${3:-xr-compositord scaling}
need=()
for tool in jq:jq gnuplot:gnuplot-nox; do command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}"); done
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
dat=$(mktemp)
trap 'rm -f "$dat"' EXIT
jq -r '.scenarios[] | select(.ok) | [.clients, .daemon_cpu_us_per_client_frame, .release_call_us.p50,
  .release_call_us.p99, .display_work_us.p50, .missed_display_frames] | @tsv' "$json" >"$dat"
gnuplot <<GNUPLOT
set terminal svg size 900,520 dynamic font "sans,12"
set output "$svg"
set title "$title"
set xlabel "clients"
set ylabel "microseconds"
set logscale x 2
set logscale y 10
set grid
set key top left
plot "$dat" using 1:2 with linespoints title "daemon CPU per client frame", \
     "$dat" using 1:3 with linespoints title "release call p50", \
     "$dat" using 1:4 with linespoints title "release call p99", \
     "$dat" using 1:5 with linespoints title "display work per display frame (p50)"
GNUPLOT
echo "wrote $svg"

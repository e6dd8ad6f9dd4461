#!/usr/bin/env bash
# `dahlsim report` as a person sees it: a traced sweep of the tiny test calibration, its report page rendered
# by headless Chromium into a screenshot (which must be a PNG of real size, not a blank page) and its DOM text
# checked for the page's title, the points table and the per-worker tables. Exit 77 (skipped) where Debian's
# chromium is not installed (scripts/setup-deps installs it).
# usage: report_chromium.sh DAHLSIM_BINARY SOURCE_DIR [KEEP_DIR]
set -euo pipefail
dahlsim=$1
src=$2
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "report_chromium: skipped: chromium is not installed (apt-get install chromium)" >&2
    exit 77
fi
work=${3:-$(mktemp -d /tmp/dahlsim-chromium-XXXXXX)}
mkdir -p "$work"
[ -n "${3:-}" ] || trap 'rm -rf "$work"' EXIT
export DAHLSIM_HOME=$src/tests/data STARPU_SILENT=1 ASAN_OPTIONS=detect_leaks=0
"$dahlsim" sweep "$src/tests/data/scenarios/tiny-sweep.json" --out "$work/sweep" --set trace=true --quiet
"$dahlsim" report "$work/sweep" >/dev/null
page=$work/sweep/report.html
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile")
timeout 120 "$browser" "${flags[@]}" --window-size=1400,2400 --screenshot="$work/screenshot.png" "file://$page" \
    >"$work/chromium.log" 2>&1 || { cat "$work/chromium.log" >&2; exit 1; }
size=$(stat -c %s "$work/screenshot.png")
head -c 4 "$work/screenshot.png" | od -An -c | grep -q 'P   N   G' || { echo "screenshot is not a PNG" >&2; exit 1; }
# A blank 1400x2400 page compresses to a few kB; plots and tables make it far larger.
[ "$size" -gt 50000 ] || { echo "screenshot only $size bytes: an empty page?" >&2; exit 1; }
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$page" >"$work/dom.html" 2>>"$work/chromium.log" \
    || { cat "$work/chromium.log" >&2; exit 1; }
for want in "dahlsim sweep report" "test fixture: a 2 x 3 grid of schedulers and batch sizes" \
            "parallel efficiency" "points/0005/trace/gantt.svg" "transfer wait ms" "<svg"; do
    grep -qF "$want" "$work/dom.html" || { echo "rendered DOM lacks \"$want\"" >&2; exit 1; }
done
echo "report_chromium: ok: screenshot $size bytes ($work/screenshot.png)"

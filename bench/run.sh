#!/usr/bin/env bash
# firstfault benchmark: `firstfault analyze` on one large synthetic incident, single-threaded and
# on every core, side by side with grep and cat over the same files; the scaling over --jobs;
# peak RSS at the full and at a quarter of the log volume. A benchmark, not a test: it prints
# figures and target checks, and exits 0 even when a target is missed. See bench/README.md.
#
#   bench/run.sh [BUILD_DIR=build] [--nodes N] [--lines N] [--seed N] [--runs N] [--keep]
#                [--no-volume]
#   (a relative BUILD_DIR is taken relative to the repository root)
#
# Environment (optional):
#   FIRSTFAULT=path     binary to measure instead of BUILD_DIR/agent/firstfault (not built)
#   FF_BENCH_GEN=path   generator to use instead of BUILD_DIR/bench/ff_bench_gen (not built)
#   FF_BENCH_DIR=path   work directory (default: ${TMPDIR:-/tmp}/firstfault-bench-n<N>-l<N>-s<N>)
set -uo pipefail

usage() {
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  exit "${1:-0}"
}

die() {
  echo "bench: $*" >&2
  exit 1
}

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || die "cannot cd to $repo"

build_dir=build
nodes=512
lines=5000000
seed=1
runs=3
keep=0
volume=1
positional=0
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage 0 ;;
    --nodes) nodes=${2:?--nodes needs a value}; shift ;;
    --nodes=*) nodes=${1#*=} ;;
    --lines) lines=${2:?--lines needs a value}; shift ;;
    --lines=*) lines=${1#*=} ;;
    --seed) seed=${2:?--seed needs a value}; shift ;;
    --seed=*) seed=${1#*=} ;;
    --runs) runs=${2:?--runs needs a value}; shift ;;
    --runs=*) runs=${1#*=} ;;
    --keep) keep=1 ;;
    --no-volume) volume=0 ;;
    -*) echo "bench: unknown option $1" >&2; usage 2 ;;
    *)
      [ $positional -eq 0 ] || { echo "bench: unexpected argument $1" >&2; usage 2; }
      build_dir=${1#BUILD_DIR=}
      positional=1
      ;;
  esac
  shift
done
for v in nodes lines seed runs; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "--$v must be a non-negative integer, got '${!v}'"
done
[ "$runs" -ge 1 ] || die "--runs must be at least 1"

ff=${FIRSTFAULT:-$build_dir/agent/firstfault}
gen=${FF_BENCH_GEN:-$build_dir/bench/ff_bench_gen}

# --- timing tool -----------------------------------------------------------------------------
timer=/usr/bin/time
if [ ! -x "$timer" ]; then
  echo "bench: /usr/bin/time is missing (Debian package 'time')." >&2
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "bench: running as root: apt-get install -y time" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null 2>&1; }
  fi
  if [ ! -x "$timer" ]; then
    echo "bench: falling back to bash's time (TIMEFORMAT): wall time only, no peak RSS." >&2
    timer=""
  fi
fi

# --- build -----------------------------------------------------------------------------------
targets=()
[ -n "${FF_BENCH_GEN:-}" ] || targets+=(ff_bench_gen)
[ -n "${FIRSTFAULT:-}" ] || targets+=(firstfault)
build_ok=1
if [ ${#targets[@]} -gt 0 ]; then
  # Configure when there is no cache, or when an earlier configure failed to write a build system.
  if [ ! -f "$build_dir/CMakeCache.txt" ] ||
    { [ ! -f "$build_dir/Makefile" ] && [ ! -f "$build_dir/build.ninja" ]; }; then
    echo "bench: $build_dir is not configured; cmake -S . -B $build_dir -DCMAKE_BUILD_TYPE=Release" >&2
    cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >&2 || build_ok=0
  fi
  if [ $build_ok -eq 1 ]; then
    echo "bench: cmake --build $build_dir --target ${targets[*]}" >&2
    cmake --build "$build_dir" --target "${targets[@]}" >&2 || build_ok=0
  fi
fi
if [ ! -x "$ff" ]; then
  cat >&2 <<EOF
bench: no firstfault binary at $ff
bench: the engine has not been built yet (or the build failed above); nothing to measure.
bench: build it first, or point FIRSTFAULT=/path/to/firstfault at one.
EOF
  exit 2
fi
[ $build_ok -eq 1 ] || die "the build failed; not measuring a possibly stale $ff"
[ -x "$gen" ] || die "no generator at $gen (cmake --build $build_dir --target ff_bench_gen)"
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build_dir/CMakeCache.txt" 2>/dev/null)
if [ -n "${FIRSTFAULT:-}" ]; then
  build_note="FIRSTFAULT=$ff (build type unknown)"
else
  build_note="$ff (CMAKE_BUILD_TYPE=${build_type:-unset})"
  [ "$build_type" = Release ] ||
    build_note+="; measure a Release build for figures to compare (optimisation differs)"
fi

# --- incidents -------------------------------------------------------------------------------
# The full incident, and (unless --no-volume) one with a quarter of the lines over the same
# nodes: peak RSS must not follow the log volume.
work=${FF_BENCH_DIR:-${TMPDIR:-/tmp}/firstfault-bench-n$nodes-l$lines-s$seed}
work_existed=0
[ -d "$work" ] && work_existed=1
mkdir -p "$work" || die "cannot create $work"
work=$(cd "$work" && pwd)
gen_sum=$(cksum <bench/gen_incident.cpp | cut -d' ' -f1)
quarter_lines=$((lines / 4))
generated=()  # incident names this run generated: deleted at exit unless --keep
# shellcheck disable=SC2317  # invoked by the EXIT trap
cleanup() {
  rm -f -- "$work"/m.*
  # An incident goes only if this run generated it and --keep was not given; a reused one
  # stays where the earlier --keep run left it.
  if [ "$keep" -eq 0 ] && [ ${#generated[@]} -gt 0 ]; then
    local name
    for name in "${generated[@]}"; do
      rm -rf -- "${work:?}/$name"
      rm -f -- "$work/$name.params" "$work/$name.gen.log"
    done
    rm -f -- "$work"/literals.* "$work/diagnosis.json"
    [ "$work_existed" -eq 1 ] || rmdir -- "$work" 2>/dev/null
  fi
}
trap cleanup EXIT

# The generator writes about 110 bytes a line; refuse to start what cannot fit.
need_lines=$lines
[ $volume -eq 1 ] && need_lines=$((lines + quarter_lines))
need_mb=$((need_lines * 110 / 1000000 + 64))
avail_mb=$(df -Pm "$work" | awk 'NR == 2 { print $4 }')
# prepare_incident NAME LINES: generates $work/NAME unless an earlier --keep run left the same
# one; sets gen_note.
prepare_incident() {
  local name=$1 n_lines=$2 dir=$work/$1 stamp=$work/$1.params want t0
  want="nodes=$nodes lines=$n_lines seed=$seed gen_incident.cpp=$gen_sum"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$dir/job.json" ]; then
    echo "bench: reusing $dir ($want)" >&2
    gen_note="reused from an earlier --keep run"
    return
  fi
  if [ -n "$avail_mb" ] && [ "$avail_mb" -lt "$need_mb" ]; then
    die "about $need_mb MB needed under $work, $avail_mb MB free (TMPDIR or FF_BENCH_DIR elsewhere?)"
  fi
  generated+=("$name")
  rm -rf -- "$dir"
  rm -f -- "$stamp"
  echo "bench: generating $dir ($nodes nodes, $n_lines lines, seed $seed)" >&2
  t0=$EPOCHREALTIME
  "$gen" "$dir" --nodes "$nodes" --lines "$n_lines" --seed "$seed" 2>"$work/$name.gen.log" ||
    { cat "$work/$name.gen.log" >&2; die "generation failed"; }
  gen_note=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "generated in %.1f s", b - a }')
  echo "$want" >"$stamp"
}
prepare_incident incident "$lines"
incident=$work/incident
full_note=$gen_note
planted=$(awk '/root node/ { print $3; exit }' "$work/incident.gen.log" 2>/dev/null)
if [ $volume -eq 1 ]; then
  prepare_incident quarter "$quarter_lines"
  quarter=$work/quarter
fi
[ $keep -eq 1 ] && echo "bench: --keep: $work stays for the next run" >&2

# Input size over exactly the files the grep baseline reads. Reading them also warms the page
# cache, so every measured command starts from the same (warm) state.
mapfile -d '' files < <(cd "$incident" && find nodes app cluster -type f -print0 | sort -z)
in_files=${#files[@]}
read -r in_lines in_bytes < <(cd "$incident" && cat -- "${files[@]}" | wc -lc)
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
if [ $volume -eq 1 ]; then
  read -r q_lines q_bytes < <(cd "$quarter" && find nodes app cluster -type f -print0 |
    xargs -0 cat -- | wc -lc)
fi

# --- literals --------------------------------------------------------------------------------
lit=$work/literals.txt
ere=$work/literals.ere
"$ff" rules literals 2>"$work/m.literals.err" | tr -d '\r' | grep -v '^$' >"$lit"
[ -s "$lit" ] || { cat "$work/m.literals.err" >&2; die "'$ff rules literals' printed no literals"; }
sed -e 's/[][\\.^$*+?(){}|]/\\&/g' "$lit" >"$ere"
n_lit=$(wc -l <"$lit")

# --- measuring -------------------------------------------------------------------------------
# run_timed OUT_FILE STDOUT CMD...: runs CMD with stdout to STDOUT, appends "wall_s rss_kb rc"
# to OUT_FILE. grep's stdout must not be /dev/null: GNU grep notices that and stops reading each
# file at its first match (as with -q), which would make the baseline meaninglessly fast.
# Wall time comes from bash's EPOCHREALTIME (microseconds; /usr/bin/time's %e has only 10 ms
# resolution), peak RSS (max resident set size of CMD) from /usr/bin/time's %M.
run_timed() {
  local out=$1 so=$2 tf=$work/m.time ef=$work/m.err rc t0 t1
  shift 2
  if [ -n "$timer" ]; then
    t0=$EPOCHREALTIME
    "$timer" -f "%e %M" -o "$tf" "$@" >"$so" 2>"$ef"
    rc=$?
    t1=$EPOCHREALTIME
    # The last line of -o is "%e %M" ("Command exited with non-zero status N" may precede it).
    tail -n 1 "$tf" | awk -v a="$t0" -v b="$t1" -v rc="$rc" \
      '{ printf "%.3f %s %s\n", (b != "" && a != "") ? b - a : $1, $2, rc }' >>"$out"
  else
    local TIMEFORMAT=%3R
    { time "$@" >"$so" 2>"$ef"; } 2>"$tf"
    rc=$?
    echo "$(tail -n 1 "$tf") - $rc" >>"$out"
  fi
}

# Thread counts: 1, 2, 4, 8, ... below the CPUs this process may use, then that number itself.
cpus=$(nproc)
ladder=()
for ((j = 1; j < cpus; j *= 2)); do ladder+=("$j"); done
ladder+=("$cpus")

analyze_cmd=("$ff" analyze "$incident" --format json --jobs)
grep_e_cmd=(env LC_ALL=C grep -r -c -E -f "$ere" nodes app cluster)
grep_f_cmd=(env LC_ALL=C grep -r -c -F -f "$lit" nodes app cluster)
cat_cmd=(cat -- "${files[@]}")

# One untimed run of each: the diagnosis to check (every timed analyze output is compared with
# it byte for byte), and the baseline's matching-line count.
"${analyze_cmd[@]}" "$cpus" >"$work/diagnosis.json" 2>"$work/m.analyze.err"
analyze_rc=$?
matched=$(cd "$incident" && "${grep_e_cmd[@]}" | awk -F: '{ s += $NF } END { print s + 0 }')

compared=0
differ=0
differ_jobs=""
for ((i = 1; i <= runs; i++)); do
  echo "bench: run $i/$runs" >&2
  for j in "${ladder[@]}"; do
    run_timed "$work/m.analyze.j$j" "$work/m.out" "${analyze_cmd[@]}" "$j"
    compared=$((compared + 1))
    if ! cmp -s "$work/m.out" "$work/diagnosis.json"; then
      differ=$((differ + 1))
      case " $differ_jobs " in *" $j "*) ;; *) differ_jobs+=" $j" ;; esac
    fi
  done
  if [ $volume -eq 1 ]; then
    run_timed "$work/m.quarter" /dev/null "$ff" analyze "$quarter" --format json --jobs "$cpus"
  fi
  (cd "$incident" && run_timed "$work/m.grep_e" "$work/m.stdout" "${grep_e_cmd[@]}")
  (cd "$incident" && run_timed "$work/m.grep_f" "$work/m.stdout" "${grep_f_cmd[@]}")
  (cd "$incident" && run_timed "$work/m.cat" /dev/null "${cat_cmd[@]}")
done

# median FILE COLUMN (1 = wall, 2 = rss); "-" when not measured.
median() {
  awk -v c="$2" '$c != "-" { print $c }' "$1" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'
}
rcs() { awk '{ print $3 }' "$1" | sort -u | paste -sd, -; }
mib() { awk -v k="$1" 'BEGIN { if (k == "-") print "-"; else printf "%.1f", k / 1024 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "n/a" }'; }

one_wall=$(median "$work/m.analyze.j1" 1)
all_wall=$(median "$work/m.analyze.j$cpus" 1)
all_rss=$(median "$work/m.analyze.j$cpus" 2)
max_rss=-
for j in "${ladder[@]}"; do
  r=$(median "$work/m.analyze.j$j" 2)
  [ "$r" = - ] || max_rss=$(awk -v a="$max_rss" -v b="$r" 'BEGIN { print (a == "-" || b > a) ? b : a }')
done
e_wall=$(median "$work/m.grep_e" 1)

# --- diagnosis check -------------------------------------------------------------------------
named=""
verdict=""
if command -v python3 >/dev/null 2>&1; then
  read -r verdict named < <(python3 - "$work/diagnosis.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:  # not JSON: report, do not crash
    print("invalid-json -")
    sys.exit(0)
nodes = [str(rc.get("node", "")) for rc in d.get("root_causes", []) or []]
print(d.get("verdict", "?"), ",".join(n for n in nodes if n) or "-")
PY
  )
else
  verdict=$(grep -o '"verdict": *"[^"]*"' "$work/diagnosis.json" | head -1 | sed 's/.*"\([^"]*\)"$/\1/')
  named=$(sed -n 's/.*"root_causes": *\[\(.*\)/\1/p' "$work/diagnosis.json" |
    grep -o '"node": *"[^"]*"' | sed 's/.*"\([^"]*\)"$/\1/' | paste -sd, -)
  named=${named:--}
fi

# --- report ----------------------------------------------------------------------------------
# "Flat in log volume": four times the lines over the same nodes may cost at most this factor
# in peak RSS (what stays is the per-node, per-rank and per-rule state, not the lines).
flat_factor=1.25
pass() { case "$1" in 1) echo "PASS" ;; -) echo "n/a (not measured)" ;; *) echo "MISS" ;; esac; }
ratio_ok=$(awk -v a="$all_wall" -v b="$e_wall" 'BEGIN { print (b > 0 && a / b <= 1.0) ? 1 : 0 }')
rss_ok=$(awk -v k="$max_rss" 'BEGIN { print (k == "-") ? "-" : (k <= 256 * 1024) ? 1 : 0 }')
root_ok=0
case ",$named," in *",$planted,"*) [ -n "$planted" ] && root_ok=1 ;; esac
same_ok=$([ $differ -eq 0 ] && [ $analyze_rc -eq 0 ] && echo 1 || echo 0)

row() { printf '  %-46s %10s %14s %12s %6s\n' "$@"; }
timing_row() {  # LABEL FILE
  row "$1" "$(median "$2" 1)" "$(mib "$(median "$2" 2)")" \
    "$(ratio "$(median "$2" 1)" "$e_wall")" "$(rcs "$2")"
}

echo
echo "firstfault benchmark ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(uname -n), $cpus CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
printf '  input      %s files, %s lines, %s MB under nodes/ app/ cluster/ (+ job.json)\n' \
  "$in_files" "$in_lines" "$(mb "$in_bytes")"
printf '  incident   %s  (%s nodes, seed %s, %s)\n' "$incident" "$nodes" "$seed" "$full_note"
printf '  binary     %s\n' "$build_note"
printf '  literals   %s from "firstfault rules literals"; grep -E matches %s lines\n' "$n_lit" "$matched"
printf '  timing     median of %s runs, warm page cache, %s\n' "$runs" \
  "$([ -n "$timer" ] && echo '/usr/bin/time -f "%e %M"' || echo 'bash time (no RSS)')"
echo
row "command" "wall s" "peak RSS MiB" "vs grep -E" "exit"
[ "$cpus" -gt 1 ] && timing_row "firstfault analyze DIR --jobs 1" "$work/m.analyze.j1"
timing_row "firstfault analyze DIR --jobs $cpus (all CPUs)" "$work/m.analyze.j$cpus"
timing_row "grep -r -c -E -f literals.ere (baseline)" "$work/m.grep_e"
timing_row "grep -r -c -F -f literals.txt" "$work/m.grep_f"
timing_row "cat FILES > /dev/null" "$work/m.cat"
echo
printf '  %-10s %8s %10s %10s %14s\n' "scaling" "--jobs" "wall s" "speed-up" "peak RSS MiB"
for j in "${ladder[@]}"; do
  w=$(median "$work/m.analyze.j$j" 1)
  printf '  %-10s %8s %10s %10s %14s\n' "" "$j" "$w" "$(ratio "$one_wall" "$w")" \
    "$(mib "$(median "$work/m.analyze.j$j" 2)")"
done
if [ $volume -eq 1 ]; then
  q_rss=$(median "$work/m.quarter" 2)
  printf '\n  %-10s %14s %10s %10s %14s\n' "volume" "lines" "MB" "wall s" "peak RSS MiB"
  printf '  %-10s %14s %10s %10s %14s\n' "" "$in_lines" "$(mb "$in_bytes")" "$all_wall" "$(mib "$all_rss")"
  printf '  %-10s %14s %10s %10s %14s\n' "" "$q_lines" "$(mb "$q_bytes")" \
    "$(median "$work/m.quarter" 1)" "$(mib "$q_rss")"
  printf '  %-10s (analyze --jobs %s; the same %s nodes, %s: a quarter of the lines)\n' "" \
    "$cpus" "$nodes" "$quarter"
  flat_ok=$(awk -v a="$all_rss" -v b="$q_rss" -v f="$flat_factor" \
    'BEGIN { print (a == "-" || b == "-") ? "-" : (a <= f * b) ? 1 : 0 }')
fi
echo
verdict_line() { printf '  %-7s %-46s %s (%s)\n' "$@"; }  # KIND LABEL RESULT DETAIL
verdict_line target "analyze --jobs $cpus <= 1.0x grep -E wall" "$(pass "$ratio_ok")" \
  "$(ratio "$all_wall" "$e_wall")"
verdict_line target "analyze peak RSS <= 256 MiB, every --jobs" "$(pass "$rss_ok")" \
  "max $(mib "$max_rss") MiB"
if [ $volume -eq 1 ]; then
  verdict_line target "peak RSS flat in log volume (<= ${flat_factor}x)" "$(pass "$flat_ok")" \
    "$(mib "$all_rss") MiB / $(mib "$q_rss") MiB = $(ratio "$all_rss" "$q_rss") for $(ratio "$in_lines" "$q_lines") the lines"
fi
verdict_line check "same diagnosis for --jobs $(echo "${ladder[*]}" | tr ' ' ,)" "$(pass "$same_ok")" \
  "cmp: $differ of $compared outputs differ${differ_jobs:+, at --jobs$differ_jobs}"
verdict_line check "root_causes[].node = planted" "$(pass "$root_ok")" \
  "named: $named; planted: ${planted:-?}; verdict: ${verdict:-?}; exit $analyze_rc"
if [ -s "$work/m.analyze.err" ] && [ "$root_ok" != 1 ]; then
  echo "  firstfault stderr (first lines):"
  head -n 5 "$work/m.analyze.err" | sed 's/^/    /'
fi
[ $keep -eq 1 ] && echo "  kept       $work"
exit 0

#!/usr/bin/env bash
# Fails when a C++ file of the repository is not as clang-format (.clang-format)
# would write it, and names the files. `scripts/check-format.sh --fix` rewrites
# them instead. Only files git knows are checked: build trees are not, nor
# third_party/ (upstream's sources, kept as upstream wrote them).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "check-format.sh: clang-format is not installed" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' ':!:third_party/*')
if [ "${1:-}" = --fix ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
# One clang-format run over every file; its diagnostics name each file that differs.
mapfile -t unformatted < <(clang-format --dry-run "${files[@]}" 2>&1 |
  sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "check-format.sh: ${#unformatted[@]} file(s) differ from clang-format (scripts/check-format.sh --fix):" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  exit 1
fi
echo "check-format.sh: ${#files[@]} files formatted"

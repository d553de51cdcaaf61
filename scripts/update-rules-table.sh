#!/usr/bin/env bash
# Regenerates the README's table of what the engine recognises from the rule
# files (`firstfault rules table`), between the rules-table markers.
set -euo pipefail
cd "$(dirname "$0")/.."
ff=${FF:-build/agent/firstfault}
table=$(mktemp)
trap 'rm -f "$table"' EXIT
"$ff" rules table > "$table"
python3 - "$table" <<'PY'
import sys
table = open(sys.argv[1]).read()
text = open("README.md").read()
b, e = "<!-- rules-table:begin -->\n", "<!-- rules-table:end -->"
i, j = text.index(b) + len(b), text.index(e)
open("README.md", "w").write(text[:i] + table + text[j:])
PY

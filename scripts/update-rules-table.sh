#!/usr/bin/env bash
# Regenerates the table of what the engine recognises (docs/rules.md) from the
# rule files (`firstfault rules table`), between the rules-table markers.
set -euo pipefail
cd "$(dirname "$0")/.."
ff=${FF:-build/agent/firstfault}
table=$(mktemp)
trap 'rm -f "$table"' EXIT
"$ff" rules table > "$table"
python3 - "$table" <<'PY'
import sys
table = open(sys.argv[1]).read()
text = open("docs/rules.md").read()
b, e = "<!-- rules-table:begin -->\n", "<!-- rules-table:end -->"
i, j = text.index(b) + len(b), text.index(e)
open("docs/rules.md", "w").write(text[:i] + table + text[j:])
PY

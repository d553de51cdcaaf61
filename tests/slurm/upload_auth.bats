#!/usr/bin/env bats
# An upload must carry a munge credential of an allowed user whose payload
# names this very bundle. Anything else is refused and leaves no trace: no
# row in any table, no file in the agent's state directory.

load helpers

setup_file() { cluster_setup_file; }
setup() {
  e2e_setup
  # Above Slurm's largest job id: never the id of a real job.
  FAKE_JOB=9$(printf '%07d' $((RANDOM * 300 + RANDOM % 300)))
  BUNDLE=n1-$FAKE_JOB-epilog-$(date +%s%N)
  printf '{"schema":"firstfault.incident/v1","job_id":"%s","nodes":["n1"],"state":"FAILED"}\n' \
    "$FAKE_JOB" >"$WORK/job.json"
  printf 'Nov 30 05:01:02 n1 kernel: [100.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n' \
    >"$WORK/kernel"
}
teardown() { e2e_teardown; }

meta() {
  printf '{"bundle_id":"%s","job_id":"%s","attempt":0,"node":"n1","pass":"epilog"}' "$BUNDLE" "$FAKE_JOB"
}

# The digest a payload names (docs/slurm-path.md section 4), computed here
# independently of the C++: the meta part, then each file in name order; each
# preceded by its length as 8 bytes big-endian, a file's name too.
digest() {
  python3 - "$(meta)" "job.json=$WORK/job.json" "nodes/n1/kernel=$WORK/kernel" <<'EOF'
import hashlib, struct, sys
h = hashlib.sha256()
def put(b):
    h.update(struct.pack('>Q', len(b)))
    h.update(b)
put(sys.argv[1].encode())
for name, path in sorted(a.split('=', 1) for a in sys.argv[2:]):
    put(name.encode())
    put(open(path, 'rb').read())
print(h.hexdigest())
EOF
}

# upload [curl header args...]: prints the HTTP status of POST /api/v1/bundles.
upload() {
  curl -s -m 20 -o "$WORK/reply" -w '%{http_code}' "$@" \
    -F "meta=$(meta);type=application/json" \
    -F "file=@$WORK/job.json;filename=job.json" \
    -F "file=@$WORK/kernel;filename=nodes/n1/kernel" \
    "$AGENT_URL/api/v1/bundles"
}

# Everything the agent keeps: the row count of every table and every file
# under its state directory except the database itself.
snapshot() {
  local t
  for t in $(db "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"); do
    echo "$t $(db "SELECT count(*) FROM \"$t\"")"
  done
  find "$FF_ROOT/agent" -path "$DB*" -prune -o -print | sort
}

assert_refused() {  # assert_refused EXPECTED_STATUSES curl-args...
  local expected=$1; shift
  local before after code
  before=$(snapshot)
  code=$(upload "$@")
  echo "HTTP $code: $(head -c 300 "$WORK/reply")"
  [[ " $expected " == *" $code "* ]]
  after=$(snapshot)
  diff <(echo "$before") <(echo "$after")
  [ ! -e "$FF_ROOT/agent/jobs/$FAKE_JOB" ]
}

@test "an upload without a credential is refused with 401 and leaves nothing" {
  assert_refused "401"
}

@test "an upload with a garbage credential is refused and leaves nothing" {
  assert_refused "401 403" -H "X-Firstfault-Munge: bm90IGEgbXVuZ2UgY3JlZGVudGlhbA=="
}

@test "a real credential for another bundle is refused with 403 and leaves nothing" {
  cred=$(munge -s "firstfault-bundle $FAKE_JOB n1 n1-$FAKE_JOB-epilog-1 $(digest)")
  assert_refused "403" -H "X-Firstfault-Munge: $cred"
}

@test "a real credential for other bytes of this bundle is refused with 403 and leaves nothing" {
  cred=$(munge -s "firstfault-bundle $FAKE_JOB n1 $BUNDLE $(digest)")
  echo "forged line" >>"$WORK/kernel"
  assert_refused "403" -H "X-Firstfault-Munge: $cred"
}

@test "a real credential of a user that may not upload is refused with 403 and leaves nothing" {
  cred=$(runuser -u nobody -- munge -s "firstfault-bundle $FAKE_JOB n1 $BUNDLE $(digest)")
  assert_refused "403" -H "X-Firstfault-Munge: $cred"
}

# The control: the same upload with a valid credential is stored, so the
# refusals above are about the credential and nothing else.
@test "the same upload with root's credential for this bundle is stored (control)" {
  cred=$(munge -s "firstfault-bundle $FAKE_JOB n1 $BUNDLE $(digest)")
  code=$(upload -H "X-Firstfault-Munge: $cred")
  echo "HTTP $code: $(head -c 300 "$WORK/reply")"
  [ "$code" = 201 ]
  [ -d "$FF_ROOT/agent/jobs/$FAKE_JOB" ]
  # A retried upload of the same bundle is acknowledged, not stored twice.
  cred=$(munge -s "firstfault-bundle $FAKE_JOB n1 $BUNDLE $(digest)")
  code=$(upload -H "X-Firstfault-Munge: $cred")
  [ "$code" = 200 ]
}

#!/usr/bin/env bash
# Builds the seed corpus of every fuzz target from the repository's own data
# (examples/incidents, rules/*.yaml) plus a few hand-written seeds.
#   fuzz/make_corpus.sh [OUT_DIR=build-fuzz/corpus]
# One directory per target: OUT_DIR/<target>/. Existing files are kept, so a
# corpus grown by earlier runs is not lost.
set -eu  # no pipefail: `head` closes its pipes early on purpose
cd "$(dirname "$0")/.."
OUT=${1:-build-fuzz/corpus}
EX=examples/incidents
for t in timestamp_parser event_extractor job_json rule_file gzip_lines scontrol_parser \
         bundle_paths hostlist bundle_upload http_request flight_recorder; do
  mkdir -p "$OUT/fuzz_$t"
done
seed() {  # seed TARGET NAME < content
  cat > "$OUT/fuzz_$1/$2"
}

# Timestamp parser: distinct log lines of every node/app/cluster file (the
# first 8 of each file; enough to cover every form).
find "$EX" -type f \( -path '*/nodes/*' -o -path '*/app/*' -o -path '*/cluster/*' \) | sort |
  while read -r f; do
    if [[ $f == *.gz ]]; then zcat -f "$f"; else cat "$f"; fi | head -n 8
  done | sort -u | head -n 3000 | {
  i=0
  while IFS= read -r line; do
    printf '%s' "$line" > "$OUT/fuzz_timestamp_parser/line-$i"
    i=$((i + 1))
  done
}

# Event extractor: whole node files; the first byte selects the file kind
# (0 kernel, 1 syslog, 2 fabricmanager, 3 slurmd, 4 app; see the target).
kind_byte() {
  case "$(basename "$1")" in
    kernel* | kern* | dmesg*) printf '\x00' ;;
    syslog* | messages* | journal*) printf '\x01' ;;
    fabricmanager* | nv-fabricmanager*) printf '\x02' ;;
    slurmd* | slurmstepd*) printf '\x03' ;;
    *) printf '\x04' ;;
  esac
}
n=0
find "$EX" -type f -path '*/nodes/*' | sort | while read -r f; do
  n=$((n + 1))
  { kind_byte "$f"; zcat -f "$f" | head -c 65536; } > "$OUT/fuzz_event_extractor/$(basename "$f")-$n"
done

# job.json of every example.
for d in "$EX"/*/; do
  [ -f "$d/job.json" ] && cp "$d/job.json" "$OUT/fuzz_job_json/$(basename "$d").json"
done
printf '{}' | seed job_json empty-object
printf '{"job_id":"1","timezone":"Europe/Berlin","nodes":"gpu[01-04]"}' | seed job_json small

# Rule files: the built-in ones.
for f in rules/*.yaml; do cp "$f" "$OUT/fuzz_rule_file/"; done

# Line reader: plain files, their gzip, a truncated gzip.
i=0
for f in $(find "$EX" -type f -path '*/nodes/*' | sort | head -n 6); do
  i=$((i + 1))
  head -c 8192 "$f" > "$OUT/fuzz_gzip_lines/plain-$i"
  head -c 8192 "$f" | gzip -9c > "$OUT/fuzz_gzip_lines/gz-$i"
done
head -c 8192 "$(find "$EX" -type f -name syslog | sort | head -n 1)" | gzip -c | head -c 300 \
  > "$OUT/fuzz_gzip_lines/gz-truncated"
printf 'no newline at end' | seed gzip_lines no-newline
printf 'a\0b\nc\n' | seed gzip_lines nul-byte

# Flight-recorder dumps: the unit-test fixtures (every layout version at
# protocols 0, 2, 4, 5, the hostile ones) and, with python3, a 200-entry dump
# and one cut short, from the same generator.
cp tests/unit/data/flight_recorder/*.pkl "$OUT/fuzz_flight_recorder/"
if command -v python3 >/dev/null; then
  python3 tests/support/make_flight_recorder.py big "$OUT/fuzz_flight_recorder/big-200.pkl" --entries 200
  head -c 20000 "$OUT/fuzz_flight_recorder/big-200.pkl" > "$OUT/fuzz_flight_recorder/big-200-cut.pkl"
fi

# firstfault-slurm-job records (as the real helper printed them for a failed
# job and an array task), a `show node` line, show config.
printf '%s\n' '{"batch_host":"n1","end_time":"2026-12-02T01:07:05Z","exit_code":"3:0","job_id":"146","nodes":["n1","n2"],"restart_count":0,"start_time":"2026-12-02T01:07:05Z","state":"FAILED","std_err":"/tmp/x 146 NodeList=evil.out","std_out":"/tmp/x 146 NodeList=evil.out","uid":0,"user":"root"}' \
  | seed scontrol_parser helper-failed
printf '%s\n' '{"batch_host":"n1","end_time":"","exit_code":"0:0","job_id":"147_2","nodes":["n1"],"restart_count":1,"start_time":"2026-12-02T01:11:58Z","state":"RUNNING","std_err":"/tmp/ffsj-147_2.out","std_out":"/tmp/ffsj-147_2.out","uid":1001,"user":"alice"}' \
  | seed scontrol_parser helper-array-task
printf '%s\n' "NodeName=n1 Arch=x86_64 CoresPerSocket=1 State=IDLE+DRAIN ThreadsPerCore=1 Reason=firstfault: gpu.fallen_off_bus in jobs 12 State=IDLE [root@2026-11-30T05:01:00]" \
  | seed scontrol_parser show-node-drained
printf 'Configuration data as of 2026-11-30T05:00:00\nClusterName             = test\nSlurmctldHost[0]        = head\nMessageTimeout          = 10 sec\n' \
  | seed scontrol_parser show-config

# Bundle names: "node\npath".
printf 'gpu-a01\njob.json' | seed bundle_paths job-json
printf 'gpu-a01\nnodes/gpu-a01/syslog.1.gz' | seed bundle_paths syslog-gz
printf 'gpu-a01\nnodes/gpu-a01/kernel.log' | seed bundle_paths kernel
printf 'gpu-a01\napp/slurm-48213.out' | seed bundle_paths app
printf 'gpu-a01\nnodes/gpu-a02/../gpu-a01/syslog' | seed bundle_paths dotdot
printf '12_3' | seed bundle_paths job-id

# Hostlists.
printf 'gpu[01-04,07],cpu1' | seed hostlist two-ranges
printf 'r[1-2]n[1-2]' | seed hostlist nested
printf 'gpu-a[001-128]' | seed hostlist padded
printf 'n1,n2,n[3-3]' | seed hostlist single

# Bundle uploads: NUL-separated fields: meta JSON, then name, content, ...
meta='{"bundle_id":"gpu-a01.epilog.1","job_id":"12","node":"gpu-a01","pass":"epilog","attempt":0}'
frag='{"job_id":"12","nodes":["gpu-a01","gpu-a02"]}'
printf '%s\0job.json\0%s\0nodes/gpu-a01/kernel.log\0%s\0app/slurm-12.out\0%s' "$meta" "$frag" \
  '[  12.5] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.' 'NCCL WARN timeout' \
  | seed bundle_upload epilog-bundle
printf '%s\0job.json\0%s' '{"bundle_id":"b7","job_id":"7_3","node":"n1","pass":"step"}' '{}' \
  | seed bundle_upload step-minimal
printf '%s\0job.json\0%s\0job.json\0%s' "$meta" "$frag" "$frag" | seed bundle_upload twice
printf '%s\0nodes/gpu-a02/../gpu-a01/syslog\0x\0job.json\0{}' "$meta" | seed bundle_upload dotdot
printf '%s\0nodes/gpu-a01/syslog.1.gz\0x' "$meta" | seed bundle_upload no-job-json
printf '%s\0job.json\0{"job_id":"13"}' "$meta" | seed bundle_upload other-job
printf '%s\0job.json\0{"job_id":12}' "$meta" | seed bundle_upload job-id-number
printf '{"bundle_id":"b","job_id":"12","node":"n1","pass":"step","attempt":-1}\0job.json\0{}' \
  | seed bundle_upload negative-attempt
printf '{"bundle_id":"b","job_id":"12","node":"n1","pass":"step","attempt":1e9}\0job.json\0{}' \
  | seed bundle_upload float-attempt
printf '[1,2]' | seed bundle_upload meta-array
for d in "$EX"/*/; do
  [ -f "$d/job.json" ] || continue
  printf '%s\0job.json\0' "$meta" > "$OUT/fuzz_bundle_upload/$(basename "$d")"
  head -c 4096 "$d/job.json" >> "$OUT/fuzz_bundle_upload/$(basename "$d")"
done

# HTTP requests: raw bytes on one connection (CRLF line ends).
http() {  # http NAME < request with LF line ends (each becomes CRLF)
  local s
  s=$(cat; echo .)
  s=${s%.}
  printf '%s' "${s//$'\n'/$'\r\n'}" > "$OUT/fuzz_http_request/$1"
}
printf 'GET /api/v1/health HTTP/1.1\nHost: agent\n\n' | http health
printf 'GET /api/v1/jobs/12/diagnosis HTTP/1.1\nHost: agent\nAccept: */*\n\n' | http diagnosis
printf 'GET /api/v1/jobs/12_3/diagnosis HTTP/1.1\nHost: agent\nRange: bytes=0-10,20-\n\n' | http diagnosis-range
printf 'GET /api/v1/diagnoses?node=n2&since=0&limit=10 HTTP/1.1\nHost: agent\n\n' | http diagnoses
printf 'GET /api/v1/diagnoses?limit=99999999999999999999 HTTP/1.1\n\n' | http diagnoses-huge-limit
printf 'GET /api/v1/health HTTP/1.1\nHost: a\n\nGET /api/v1/diagnoses HTTP/1.1\nHost: a\nConnection: close\n\n' \
  | http pipelined
fp='{"job_id":"12","node":"n2","exit_status":256,"attempt":0}'
printf 'POST /api/v1/jobs/12/fastpass HTTP/1.1\nHost: agent\nX-Firstfault-Munge: MUNGE:AwQDAA:\nX-Firstfault-Deadline-Ms: 15000\nContent-Type: application/json\nContent-Length: %d\n\n%s' \
  ${#fp} "$fp" | http fastpass
printf 'POST /api/v1/jobs/12/fastpass HTTP/1.1\nHost: agent\nTransfer-Encoding: chunked\nX-Firstfault-Munge: x\n\n5\n{"job\n0\n\n' \
  | http fastpass-chunked
printf 'POST /api/v1/bundles HTTP/1.1\nHost: agent\nContent-Length: 100000\n\n{}' | http short-body
body=$(printf -- '--XyZ\nContent-Disposition: form-data; name="meta"\nContent-Type: application/json\n\n%s\n--XyZ\nContent-Disposition: form-data; name="file"; filename="job.json"\nContent-Type: application/octet-stream\n\n%s\n--XyZ\nContent-Disposition: form-data; name="file"; filename="nodes/gpu-a01/kernel.log"\n\n[  12.5] NVRM: Xid 79\n--XyZ--\n' \
  "$meta" "$frag" | sed 's/$/\r/')
for cred in with-credential without-credential; do
  hdr=''
  [ $cred = with-credential ] && hdr='X-Firstfault-Munge: MUNGE:AwQDAAA=:\r\n'
  printf 'POST /api/v1/bundles HTTP/1.1\r\nHost: agent\r\n%bContent-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: %d\r\n\r\n%s\n' \
    "$hdr" $((${#body} + 1)) "$body" > "$OUT/fuzz_http_request/bundle-$cred"
done
printf 'POST /api/v1/bundles HTTP/1.1\nHost: agent\nContent-Type: text/plain\nContent-Length: 2\n\nhi' | http bundle-not-multipart
printf 'DELETE /api/v1/jobs/12/diagnosis HTTP/1.0\n\n' | http delete
printf 'GET /%%2e%%2e/%%2e%%2e/etc/passwd HTTP/1.1\n\n' | http traversal

for d in "$OUT"/fuzz_*; do echo "corpus $(basename "$d"): $(find "$d" -type f | wc -l) files"; done

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
         bundle_paths hostlist; do
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

# scontrol: the 22.05 line of the unit test, a multi-record output, show config.
printf '%s\n' "JobId=12 JobName=train job UserId=alice(1001) GroupId=alice(1001) JobState=FAILED Reason=NonZeroExitCode Requeue=1 Restarts=2 ExitCode=5:0 RunTime=00:00:03 TimeLimit=UNLIMITED SubmitTime=2026-11-30T05:01:00 StartTime=2026-11-30T05:01:02 EndTime=2026-11-30T05:01:05 Partition=debug NodeList=n[1-3] BatchHost=n1 NumNodes=3 Command=/home/alice/train.sh WorkDir=/home/alice/my runs Comment=gpu/fallen_off_bus on n2 (Xid 79) StdOut=/home/alice/slurm-12.out Power=" \
  | seed scontrol_parser show-job-failed
printf '%s\n%s\n' "JobId=7_3 ArrayJobId=7 ArrayTaskId=3 JobState=RUNNING Reason=None ExitCode=0:0 StartTime=2026-03-29T01:30:00 EndTime=Unknown NodeList=gpu-a[01-02]" \
  "JobId=8 JobState=COMPLETING" | seed scontrol_parser two-records
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

for d in "$OUT"/fuzz_*; do echo "corpus $(basename "$d"): $(find "$d" -type f | wc -l) files"; done

#!/usr/bin/env python3
"""Guard: the engine and its rules are not fitted to the bundled examples.

Usage: check_rules_not_fitted.py REPO_ROOT

Fails (exit 1), naming file and line, when
  (a) engine/**/*.{cpp,h} or rules/*.yaml name a node or a job id of an
      example incident (examples/incidents/*/job.json `nodes`, `job_id`):
      node names as whole words, job ids as whole numbers of 4+ digits;
  (b) rules/*.yaml contain, verbatim, a line of an example incident's logs
      (nodes/*/*, app/*, cluster/*) longer than 40 characters once its
      leading timestamp/host prefix is stripped (and holding at least 10
      letters); FIXED_MESSAGES below, word-for-word library texts with no
      id or number in them, are exempt from (b).

Rule `examples:` must be real phrasings from public sources, not lines
copied from the incidents the engine is scored on.
"""
import glob
import json
import os
import re
import sys

MIN_SENTENCE = 40   # a stripped incident line longer than this is a "sentence"
MIN_JOB_DIGITS = 4
ANCHOR = MIN_SENTENCE + 1
MIN_LETTERS = 10    # a rule of dashes or a hex dump is no sentence

# Fixed messages: printed word for word by every system that hits the fault
# (no id, address or number in them), so a real example cannot avoid the
# incident's sentence. Exempt from (b) only, each with where it comes from.
FIXED_MESSAGES = {
    # nv-fabricmanager on a host without NVSwitches (NVIDIA/gpu-operator#610)
    'request to query NVSwitch device information from NVSwitch driver failed '
    'with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]',
    # nvidia-fabricmanager-start.sh (data-infra/cube-studio#29)
    '"/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg" '
    'failed! Exit code: 1',
    # the driver's multi-line probe failure (NVIDIA/NVSentinel#155)
    'NVRM: fallen off the bus and is not responding to commands.',
    # NCCL's ncclGetErrorString texts (NVIDIA/nccl#975, NVIDIA/nccl#1410)
    'ncclSystemError: System call (e.g. socket, malloc) or external library '
    'call failed or device error.',
    'ncclUnhandledCudaError: Call to CUDA function failed.',
    # torch elastic's summary header (torch/distributed/elastic/multiprocessing/errors)
    'torch.distributed.elastic.multiprocessing.errors.ChildFailedError:',
}

# Leading prefixes a log line may carry, stripped repeatedly (in any order).
PREFIXES = [re.compile(p) for p in (
    # syslog: "Nov  2 08:00:14 host proc[pid]: " (also non-English months)
    r'^\S{1,4}\s+\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)? [\w.-]+ [^\s:]+?(?:\[\d+\])?: ',
    # RFC 3339 / ISO time, alone or with a host and a program
    r'^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?(?: [\w.-]+ [^\s:]+?(?:\[\d+\])?:)? ',
    # bracketed times: [2026-11-02T08:00:14.123] [Fri Nov 27 03:41:08 2026]
    # [Nov 19 2026 04:02:46] and the kernel's uptime [ 1234.567890]
    r'^\[[^\]]*\d\d:\d\d:\d\d[^\]]*\]\s*',
    r'^\[\s*\d+\.\d+\]\s*',
    # glog (torch elastic): "W1127 10:20:49.000000 1800000 file.py:793] "
    r'^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]*\] ?',
    # srun --label / torchrun --tee: "0: ", "[rank3]: ", "[default0]:"
    r'^\d+: ',
    r'^\[(?:rank|default)\d+\]:\s*',
    # "kernel: ", "host kernel: " left after a timestamp
    r'^(?:[\w.-]+ )?kernel: ',
)]


def strip_prefix(line):
    line = line.strip()
    changed = True
    while changed:
        changed = False
        for rx in PREFIXES:
            m = rx.match(line)
            if m and m.end() > 0:
                line = line[m.end():].lstrip()
                changed = True
    return line


def yaml_unescape(s):
    """A double-quoted YAML scalar's text (the escapes rule files use)."""
    return re.sub(r'\\(["\\/nt])',
                  lambda m: {'n': '\n', 't': '\t'}.get(m.group(1), m.group(1)), s)


def rule_line_texts(line):
    """The line as written, plus the text of any quoted scalar on it."""
    texts = [line]
    for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', line):
        texts.append(yaml_unescape(m.group(1)))
    for m in re.finditer(r"'((?:[^']|'')*)'", line):
        texts.append(m.group(1).replace("''", "'"))
    return texts


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = argv[1]
    inc_root = os.path.join(root, 'examples', 'incidents')
    incidents = sorted(d for d in glob.glob(os.path.join(inc_root, '*'))
                       if os.path.isfile(os.path.join(d, 'job.json')))
    if not incidents:
        print('check_rules_not_fitted: no incidents under %s' % inc_root, file=sys.stderr)
        return 2

    nodes = {}    # name -> incident
    jobs = {}     # id -> incident
    sentences = {}  # stripped line -> (incident file, line number)
    for d in incidents:
        name = os.path.basename(d)
        with open(os.path.join(d, 'job.json'), encoding='utf-8') as f:
            job = json.load(f)
        for n in job.get('nodes') or []:
            nodes.setdefault(str(n), name)
        jid = str(job.get('job_id') or '')
        if re.fullmatch(r'\d{%d,}' % MIN_JOB_DIGITS, jid):
            jobs.setdefault(jid, name)
        logs = (glob.glob(os.path.join(d, 'nodes', '*', '*')) +
                glob.glob(os.path.join(d, 'app', '*')) +
                glob.glob(os.path.join(d, 'cluster', '*')))
        for path in logs:
            if not os.path.isfile(path):
                continue
            with open(path, encoding='utf-8', errors='replace') as f:
                for no, raw in enumerate(f, 1):
                    s = strip_prefix(raw)
                    if (len(s) > MIN_SENTENCE and s not in sentences and
                            s not in FIXED_MESSAGES and
                            sum(c.isalpha() for c in s) >= MIN_LETTERS):
                        sentences[s] = (os.path.relpath(path, root), no)

    # A whole word: node names may hold '-', '.', '_'; job ids are numbers
    # not part of a longer number (a step id 611377.0 still names job 611377).
    node_rx = re.compile(r'(?<![\w.-])(%s)(?![\w-]|\.\w)' % '|'.join(
        re.escape(n) for n in sorted(nodes, key=len, reverse=True))) if nodes else None
    job_rx = re.compile(r'(?<![\w.])(%s)(?!\w)' % '|'.join(
        re.escape(j) for j in sorted(jobs, key=len, reverse=True))) if jobs else None

    targets = sorted(glob.glob(os.path.join(root, 'engine', '**', '*.cpp'), recursive=True) +
                     glob.glob(os.path.join(root, 'engine', '**', '*.h'), recursive=True))
    rule_files = sorted(glob.glob(os.path.join(root, 'rules', '*.yaml')))

    # Index every ANCHOR-long piece of rule text: a sentence can only be in a
    # rule line whose text holds the sentence's first ANCHOR characters.
    by_anchor = {}
    for s in sentences:
        by_anchor.setdefault(s[:ANCHOR], []).append(s)

    problems = []
    for path in targets + rule_files:
        rel = os.path.relpath(path, root)
        is_rule = path in rule_files
        with open(path, encoding='utf-8', errors='replace') as f:
            lines = f.read().split('\n')
        for no, line in enumerate(lines, 1):
            for rx, what, src in ((node_rx, 'node name', nodes), (job_rx, 'job id', jobs)):
                if rx is None:
                    continue
                for m in rx.finditer(line):
                    problems.append('%s:%d: %s %r of example incident %s' % (
                        rel, no, what, m.group(1), src[m.group(1)]))
            if not is_rule:
                continue
            found = set()
            for text in rule_line_texts(line):
                for i in range(0, len(text) - ANCHOR + 1):
                    for s in by_anchor.get(text[i:i + ANCHOR], ()):
                        if s not in found and text.startswith(s, i):
                            found.add(s)
                            inc_file, inc_no = sentences[s]
                            problems.append('%s:%d: line copied from example %s:%d: %r' % (
                                rel, no, inc_file, inc_no, s[:100]))
    if problems:
        for p in problems:
            print(p)
        print('check_rules_not_fitted: %d problem(s): engine and rules must not name the '
              'example incidents (rule examples: use real phrasings from public sources)'
              % len(problems), file=sys.stderr)
        return 1
    print('check_rules_not_fitted: ok (%d incidents, %d nodes, %d job ids, %d sentences; '
          '%d engine files, %d rule files)' % (len(incidents), len(nodes), len(jobs),
                                               len(sentences), len(targets), len(rule_files)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

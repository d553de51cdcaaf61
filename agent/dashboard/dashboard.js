// firstfault dashboard: read-only views over the agent's read API.
//   #/              recent failures   (GET /api/v1/diagnoses)
//   #/job/<id>      one diagnosis     (GET /api/v1/jobs/<id>/diagnosis)
//   #/suspects      suspects          (GET /api/v1/suspects)
// A route may end in "?token=<read token>": the token is kept in
// sessionStorage and removed from the address bar. Without one, a 401/403
// from the API shows a form asking for it.
//
// Diagnoses quote the job's own output, so every piece of data is put into
// the page as text (textContent, text nodes): never as markup.
'use strict';

(function () {
  const TOKEN_KEY = 'firstfault.read_token';
  const app = document.getElementById('app');

  class AuthError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  // The visitor moved on while a request was out: its page is not drawn.
  class StaleError extends Error {}

  let generation = 0;

  // el('td', {class: 'x'}, 'text', child...): strings become text nodes.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      node.setAttribute(key, String(value));
    }
    for (const child of children) append(node, child);
    return node;
  }

  function append(parent, child) {
    if (child === undefined || child === null || child === false) return;
    if (Array.isArray(child)) {
      for (const c of child) append(parent, c);
    } else if (child instanceof Node) {
      parent.appendChild(child);
    } else {
      parent.appendChild(document.createTextNode(String(child)));
    }
  }

  function show(state, ...children) {
    app.replaceChildren();
    app.setAttribute('data-state', state);
    append(app, children);
  }

  function text(value) {
    return value === undefined || value === null || value === '' ? '—' : String(value);
  }

  // Unix seconds as "2026-11-02 10:51:42Z" (UTC, so every viewer agrees).
  function unixTime(seconds) {
    if (!seconds) return '—';
    return new Date(seconds * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }

  function jobLink(jobId, attempt) {
    const label = attempt ? jobId + ' (attempt ' + attempt + ')' : jobId;
    return el('a', {href: '#/job/' + encodeURIComponent(jobId), class: 'job'}, label);
  }

  function verdictBadge(verdict) {
    const v = String(verdict || 'unknown');
    return el('span', {class: 'verdict verdict-' + v.replace(/[^a-z_]/g, '')}, v);
  }

  function table(headers, rows, attrs) {
    return el(
      'table',
      attrs || {},
      el('thead', null, el('tr', null, headers.map((h) => el('th', null, h)))),
      el('tbody', null, rows),
    );
  }

  function readToken() {
    try {
      return sessionStorage.getItem(TOKEN_KEY) || '';
    } catch (e) {
      return '';
    }
  }

  function saveToken(token) {
    try {
      if (token) sessionStorage.setItem(TOKEN_KEY, token);
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch (e) {
      // Storage disabled: the token lasts until the next request fails.
    }
  }

  async function api(path) {
    const mine = generation;
    const headers = {Accept: 'application/json'};
    const token = readToken();
    if (token) headers.Authorization = 'Bearer ' + token;
    const res = await fetch(path, {headers, cache: 'no-store', credentials: 'omit'});
    let body = null;
    try {
      body = await res.json();
    } catch (e) {
      body = null;
    }
    if (mine !== generation) throw new StaleError('stale');
    const message = body && typeof body.error === 'string' ? body.error : 'HTTP ' + res.status;
    if (res.status === 401 || res.status === 403) throw new AuthError(res.status, message);
    if (!res.ok) throw new ApiError(res.status, message);
    return body;
  }

  function tokenForm(err) {
    const hadToken = readToken() !== '';
    if (hadToken && err.status === 403) saveToken('');
    const input = el('input', {
      type: 'password',
      id: 'token',
      name: 'token',
      autocomplete: 'off',
      placeholder: 'read token',
      required: true,
    });
    const form = el(
      'form',
      {id: 'token-form'},
      el('label', {for: 'token'}, 'Read token'),
      input,
      el('button', {type: 'submit'}, 'Open'),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      saveToken(input.value.trim());
      route();
    });
    show(
      'token',
      el('h1', null, 'This agent needs a read token'),
      el(
        'p',
        null,
        hadToken && err.status === 403
          ? 'The token was refused. '
          : 'The agent answered: ' + err.message + '. ',
        'Enter the token from the file named by read_token_file in agent.yaml. ' +
          'It is kept for this browser tab only (sessionStorage).',
      ),
      form,
    );
    input.focus();
  }

  function failure(err, what) {
    if (err instanceof StaleError) throw err;
    if (err instanceof AuthError) return tokenForm(err);
    show('error', el('p', {class: 'error'}, what + ': ' + err.message));
  }

  // ---- #/ recent failures -------------------------------------------------

  async function recentFailures(params) {
    const node = params.get('node') || '';
    const all = params.get('all') === '1';
    let query = '/api/v1/diagnoses?limit=200' + (all ? '' : '&failures=1');
    if (node) query += '&node=' + encodeURIComponent(node);
    let body;
    try {
      body = await api(query);
    } catch (err) {
      return failure(err, 'Cannot list diagnoses');
    }
    const rows = body.diagnoses || [];
    const nodeInput = el('input', {type: 'text', name: 'node', value: node, placeholder: 'node'});
    const allBox = el('input', {type: 'checkbox', name: 'all', checked: all});
    const filter = el(
      'form',
      {class: 'filter'},
      el('label', null, 'Node ', nodeInput),
      el('label', null, allBox, ' include completed jobs'),
      el('button', {type: 'submit'}, 'Filter'),
    );
    filter.addEventListener('submit', (event) => {
      event.preventDefault();
      const p = new URLSearchParams();
      if (nodeInput.value.trim()) p.set('node', nodeInput.value.trim());
      if (allBox.checked) p.set('all', '1');
      const q = p.toString();
      location.hash = '#/' + (q ? '?' + q : '');
    });
    show(
      'failures',
      el('h1', null, 'Recent failures'),
      filter,
      rows.length === 0
        ? el('p', {class: 'empty'}, 'No failed job has been diagnosed' + (node ? ' on ' + node : '') + '.')
        : table(
            ['Time', 'Job', 'Verdict', 'Domain', 'Root cause', 'Summary'],
            rows.map((d) =>
              el(
                'tr',
                {'data-job': d.job_id},
                el('td', {class: 'time'}, unixTime(d.created_at)),
                el('td', null, jobLink(d.job_id, d.attempt)),
                el('td', null, verdictBadge(d.verdict)),
                el('td', null, text(d.domain)),
                el('td', {class: 'node'}, text(d.root_node)),
                el('td', {class: 'summary'}, text(d.summary)),
              ),
            ),
            {id: 'failures'},
          ),
    );
  }

  // ---- #/job/<id> one diagnosis -------------------------------------------

  function evidenceTime(e) {
    const t = e.time ? Date.parse(e.time) : NaN;
    return Number.isNaN(t) ? Infinity : t;
  }

  // Evidence in time order (undated lines last), one column per node.
  function timeline(d) {
    const evidence = Array.isArray(d.evidence) ? d.evidence.slice() : [];
    evidence.sort((a, b) => evidenceTime(a) - evidenceTime(b) || (a.id || 0) - (b.id || 0));
    const rootIds = new Set();
    const rootNodes = new Set();
    for (const rc of d.root_causes || []) {
      if (rc.node) rootNodes.add(rc.node);
      for (const id of rc.evidence || []) rootIds.add(id);
    }
    const symptomOf = new Map();
    for (const s of d.symptoms || [])
      for (const id of s.evidence || []) if (!symptomOf.has(id)) symptomOf.set(id, s);

    const lanes = [];
    const seen = new Set();
    const addLane = (n) => {
      if (!seen.has(n)) {
        seen.add(n);
        lanes.push(n);
      }
    };
    for (const n of d.affected_nodes || []) addLane(n);
    for (const e of evidence) addLane(e.node || '');
    const laneClass = (n) => 'lane lane-' + (lanes.indexOf(n) % 8);

    const head = el(
      'tr',
      null,
      el('th', {class: 'time'}, 'Time (UTC)'),
      lanes.map((n) =>
        el(
          'th',
          {class: laneClass(n) + (rootNodes.has(n) ? ' root-node' : ''), 'data-node': n},
          n || 'cluster',
          rootNodes.has(n) ? el('span', {class: 'tag root'}, 'root cause') : null,
        ),
      ),
    );
    const rows = evidence.map((e) => {
      const isRoot = rootIds.has(e.id);
      const symptom = symptomOf.get(e.id);
      const role = isRoot ? 'root-cause' : symptom ? 'symptom-' + symptom.status : 'other';
      const card = el(
        'div',
        {class: 'evidence ' + role, 'data-evidence': e.id, 'data-role': role},
        el(
          'div',
          {class: 'where'},
          isRoot ? el('span', {class: 'tag root'}, 'root cause') : null,
          symptom && !isRoot ? el('span', {class: 'tag ' + symptom.status}, symptom.status) : null,
          el('span', {class: 'event'}, text(e.event)),
          ' ',
          el('span', {class: 'source'}, text(e.source) + (e.line ? ':' + e.line : '')),
        ),
        el('pre', {class: 'line'}, e.text === undefined ? '' : String(e.text)),
      );
      return el(
        'tr',
        {class: isRoot ? 'root-row' : null},
        el('td', {class: 'time'}, e.time ? String(e.time) : 'undated'),
        lanes.map((n) =>
          n === (e.node || '') ? el('td', {class: laneClass(n), 'data-node': n}, card) : el('td'),
        ),
      );
    });
    return el(
      'table',
      {class: 'timeline', id: 'timeline'},
      el('thead', null, head),
      el('tbody', null, rows),
    );
  }

  function symptomTable(list, id, withExplanation) {
    const headers = ['Node', 'Kind', 'Count', 'First seen', 'Evidence'];
    if (withExplanation) headers.push('Explained by');
    return table(
      headers,
      list.map((s) =>
        el(
          'tr',
          {class: 'symptom ' + text(s.status)},
          el('td', {class: 'node'}, text(s.node)),
          el('td', null, text(s.kind)),
          el('td', {class: 'num'}, text(s.count)),
          el('td', {class: 'time'}, text(s.first_time)),
          el('td', null, (s.evidence || []).join(', ')),
          withExplanation ? el('td', null, text(s.explained_by)) : null,
        ),
      ),
      {id},
    );
  }

  // ---- the hang: ranks x collectives around the divergence ----------------
  // From the diagnosis' `hang` (docs/spec/diagnosis.md). A job of thousands
  // of ranks must not freeze the page, so each table and grid draws at most
  // HANG_MAX_RANKS rows and says how many it left out; the ranks that matter
  // (lagging, then mismatched) come first, so they are always among them.

  const HANG_MAX_RANKS = 64;
  const HANG_MAX_GROUPS = 16;
  const HANG_MAX_SEQS = 32;

  // A view cell's state: its class, the short label it shows (the grid reads
  // without colour) and the legend's words. null: unknown.
  const CELL_STATES = [
    ['completed', 'done', 'completed'],
    ['started', 'started', 'started, not completed'],
    ['scheduled', 'sched', 'scheduled, not started'],
    ['enqueued', 'enq', 'enqueued (started or not: unknown)'],
    ['not_reached', '—', 'not reached'],
    [null, '?', 'unknown'],
  ];

  function cellState(value) {
    for (const [state, label, words] of CELL_STATES)
      if (state === value || (state === null && (value === null || value === undefined)))
        return {cls: state || 'unknown', label, words};
    // A state this page does not know yet: shown as the engine wrote it.
    return {cls: 'other', label: String(value), words: String(value)};
  }

  // Ranks that need a look first, then by rank.
  const RANK_STATE_ORDER = {lagging: 0, mismatched: 1};

  function rankNumber(r) {
    return Number.isInteger(r) ? r : Infinity;
  }

  function byAttentionThenRank(stateOf) {
    return (a, b) => {
      const pa = RANK_STATE_ORDER[stateOf(a)] ?? 2;
      const pb = RANK_STATE_ORDER[stateOf(b)] ?? 2;
      return (
        pa - pb ||
        rankNumber(a.rank) - rankNumber(b.rank) ||
        rankNumber(a.group_rank) - rankNumber(b.group_rank)
      );
    };
  }

  function rankLabel(r) {
    if (r.rank !== undefined && r.rank !== null) return String(r.rank);
    if (r.group_rank !== undefined && r.group_rank !== null) return 'group rank ' + r.group_rank;
    return '—';
  }

  // A state as a class name: the engine's words, nothing else (the text is
  // the job's, so it cannot add or break a class).
  function stateClass(state) {
    return 'rank-' + String(state || '').replace(/[^a-z_]/g, '');
  }

  function stateTag(state) {
    if (!state) return null;
    return el('span', {class: 'tag rank-state ' + stateClass(state)}, String(state));
  }

  function objects(list) {
    return Array.isArray(list) ? list.filter((x) => x && typeof x === 'object') : [];
  }

  function moreRanks(n) {
    if (n <= 0) return null;
    return el('p', {class: 'note hang-more'}, n + ' more rank' + (n === 1 ? '' : 's') + ' not drawn.');
  }

  function groupTitle(g) {
    return 'process group ' + text(g.pg) + (g.name ? ' (' + g.name + ')' : '');
  }

  function hangGroup(g) {
    const ranks = objects(g.ranks).sort(byAttentionThenRank((r) => r.state));
    const drawn = ranks.slice(0, HANG_MAX_RANKS);
    return el(
      'div',
      {class: 'hang-group', 'data-pg': g.pg},
      el('h3', null, 'Ranks of ' + groupTitle(g)),
      el(
        'p',
        {class: 'note'},
        'Status ',
        stateTag(g.status),
        ' · collective ' + text(g.seq) + (g.op ? ' (' + g.op + ')' : '') + ' · ' + text(g.size) + ' ranks',
      ),
      drawn.length === 0
        ? el('p', {class: 'empty'}, 'No rank listed.')
        : table(
            ['Rank', 'Node', 'GPU', 'State', 'Last enqueued', 'Last completed', 'Timed out at'],
            drawn.map((r) =>
              el(
                'tr',
                {'data-rank': r.rank, class: 'rank-row ' + stateClass(r.state)},
                el('td', {class: 'num'}, rankLabel(r)),
                el('td', {class: 'node'}, text(r.node)),
                el('td', null, text(r.gpu)),
                el('td', null, r.state ? stateTag(r.state) : '—'),
                el('td', {class: 'num'}, text(r.last_enqueued)),
                el('td', {class: 'num'}, text(r.last_completed)),
                el('td', {class: 'num'}, text(r.timed_out_at)),
              ),
            ),
            {class: 'hang-ranks'},
          ),
      moreRanks(ranks.length - drawn.length),
    );
  }

  function hangLegend() {
    return el(
      'ul',
      {class: 'hang-legend'},
      CELL_STATES.map(([state, label, words]) =>
        el('li', null, el('span', {class: 'cell cell-' + (state || 'unknown')}, label), ' ' + words),
      ),
    );
  }

  // Rows: ranks (lagging first); columns: the collectives' sequence numbers,
  // the divergence marked.
  function hangGrid(view, group) {
    const seqs = Array.isArray(view.seqs) ? view.seqs : [];
    const divergence = group ? group.seq : undefined;
    let first = 0;
    if (seqs.length > HANG_MAX_SEQS) {
      const at = Math.max(0, seqs.indexOf(divergence));
      first = Math.min(Math.max(0, at - HANG_MAX_SEQS / 2), seqs.length - HANG_MAX_SEQS);
    }
    const shown = seqs.slice(first, first + HANG_MAX_SEQS);
    const stateOfRank = new Map();
    if (group)
      for (const r of objects(group.ranks))
        if (Number.isInteger(r.rank) && !stateOfRank.has(r.rank)) stateOfRank.set(r.rank, r.state);
    const rows = objects(view.rows).sort(byAttentionThenRank((r) => stateOfRank.get(r.rank)));
    const drawn = rows.slice(0, HANG_MAX_RANKS);
    const isDivergence = (seq) => divergence !== undefined && divergence !== null && seq === divergence;

    const head = el(
      'tr',
      null,
      el('th', {class: 'rank'}, 'Rank'),
      el('th', {class: 'node'}, 'Node'),
      shown.map((seq) =>
        el(
          'th',
          {
            class: 'seq' + (isDivergence(seq) ? ' divergence' : ''),
            'data-seq': seq,
            title: 'collective ' + seq + (isDivergence(seq) ? ': where the ranks diverge' : ''),
          },
          String(seq),
          isDivergence(seq) ? el('div', {class: 'tag divergence'}, 'divergence') : null,
        ),
      ),
    );
    const body = drawn.map((r) => {
      const state = stateOfRank.get(r.rank);
      const cells = Array.isArray(r.cells) ? r.cells : [];
      return el(
        'tr',
        {'data-rank': r.rank, class: state ? stateClass(state) : null},
        el(
          'th',
          {class: 'rank', scope: 'row'},
          rankLabel(r),
          state && state !== 'joined' ? stateTag(state) : null,
        ),
        el('td', {class: 'node', title: text(r.node)}, text(r.node)),
        shown.map((seq, i) => {
          const c = cellState(cells[first + i]);
          return el(
            'td',
            {
              class: 'cell cell-' + c.cls + (isDivergence(seq) ? ' divergence' : ''),
              'data-state': c.cls,
              title: 'rank ' + rankLabel(r) + ', collective ' + seq + ': ' + c.words,
            },
            c.label,
          );
        }),
      );
    });
    return [
      el('h3', null, 'Ranks × collectives of ' + groupTitle(group || {pg: view.pg})),
      hangLegend(),
      el(
        'div',
        {class: 'scroll'},
        el(
          'table',
          {class: 'hang-grid', id: 'hang-grid', 'data-pg': view.pg},
          el('thead', null, head),
          el('tbody', null, body),
        ),
      ),
      moreRanks(rows.length - drawn.length),
      seqs.length > shown.length
        ? el('p', {class: 'note'}, seqs.length - shown.length + ' more collectives not drawn.')
        : null,
    ];
  }

  // The Hang section, only when the diagnosis has a `hang` object.
  function hangSection(hang) {
    if (!hang || typeof hang !== 'object' || Array.isArray(hang)) return null;
    const groups = objects(hang.process_groups);
    const view = hang.view && typeof hang.view === 'object' ? hang.view : null;
    const viewGroup = view ? groups.find((g) => String(g.pg) === String(view.pg)) : undefined;
    const drawnGroups = groups.slice(0, HANG_MAX_GROUPS);
    return el(
      'section',
      {id: 'hang', class: 'hang', 'data-status': hang.status},
      el('h2', null, 'Hang'),
      el('p', {class: 'summary', id: 'hang-summary'}, stateTag(hang.status), text(hang.summary)),
      drawnGroups.map(hangGroup),
      groups.length > drawnGroups.length
        ? el('p', {class: 'note'}, groups.length - drawnGroups.length + ' more process groups not drawn.')
        : null,
      view ? hangGrid(view, viewGroup) : el('p', {class: 'empty'}, 'No ranks × collectives view.'),
    );
  }

  async function job(jobId) {
    let d;
    try {
      d = await api('/api/v1/jobs/' + encodeURIComponent(jobId) + '/diagnosis');
    } catch (err) {
      if (err instanceof ApiError && err.status === 404)
        return show('error', el('p', {class: 'error'}, 'No diagnosis for job ' + jobId + '.'));
      return failure(err, 'Cannot read the diagnosis of job ' + jobId);
    }
    const symptoms = Array.isArray(d.symptoms) ? d.symptoms : [];
    const active = symptoms.filter((s) => s.status !== 'demoted');
    const demoted = symptoms.filter((s) => s.status === 'demoted');
    const gaps = (d.coverage || []).filter((c) => c.status !== 'ok');
    const errors = Array.isArray(d.errors) ? d.errors : [];
    const facts = [
      ['Verdict', verdictBadge(d.verdict)],
      ['Domain', text(d.domain)],
      ['Sub-domain', el('span', {id: 'sub-domain'}, text(d.sub_domain))],
      ['Recommended action', text(d.recommended_action)],
      ['Slurm state', text(d.terminal_state)],
      ['Cluster', text(d.cluster)],
      ['Engine', text(d.engine_version)],
    ];
    show(
      'job',
      el('h1', null, 'Job ' + text(d.job_id) + (d.attempt ? ' (attempt ' + d.attempt + ')' : '')),
      el('p', {class: 'summary', id: 'summary'}, text(d.summary)),
      el(
        'dl',
        {class: 'facts'},
        facts.map(([k, v]) => [el('dt', null, k), el('dd', null, v)]),
      ),
      el('h2', null, 'Root cause' + ((d.root_causes || []).length === 1 ? '' : 's')),
      (d.root_causes || []).length === 0
        ? el('p', {class: 'empty'}, 'None named.')
        : table(
            ['Node', 'Device', 'Event', 'Code', 'Time', 'Sub-domain', 'Summary'],
            d.root_causes.map((rc) =>
              el(
                'tr',
                {'data-node': rc.node},
                el('td', {class: 'node root-cause-node'}, text(rc.node)),
                el('td', null, text(rc.device)),
                el('td', null, text(rc.event)),
                el('td', null, text(rc.code)),
                el('td', {class: 'time'}, text(rc.time)),
                el('td', null, text(rc.sub_domain)),
                el('td', null, text(rc.summary)),
              ),
            ),
            {id: 'root-causes'},
          ),
      hangSection(d.hang),
      el('h2', null, 'Evidence timeline'),
      el('div', {class: 'scroll'}, timeline(d)),
      el('h2', null, 'Active symptoms'),
      active.length === 0
        ? el('p', {class: 'empty'}, 'None: every symptom is explained by the root cause.')
        : symptomTable(active, 'active-symptoms', false),
      el('h2', null, 'Demoted symptoms'),
      el('p', {class: 'note'}, 'Explained as downstream of the root cause; kept for inspection.'),
      demoted.length === 0
        ? el('p', {class: 'empty'}, 'None.')
        : symptomTable(demoted, 'demoted-symptoms', true),
      el('h2', null, 'Coverage gaps'),
      gaps.length === 0
        ? el('p', {class: 'empty', id: 'no-gaps'}, 'None: every source was read.')
        : table(
            ['Source', 'Node', 'Status', 'Lines', 'Detail'],
            gaps.map((c) =>
              el(
                'tr',
                {class: 'gap'},
                el('td', null, text(c.source)),
                el('td', {class: 'node'}, text(c.node)),
                el('td', null, text(c.status)),
                el('td', {class: 'num'}, text(c.lines)),
                el('td', null, text(c.detail)),
              ),
            ),
            {id: 'coverage-gaps'},
          ),
      errors.length === 0
        ? null
        : [
            el('h2', null, 'Engine errors'),
            el('ul', {class: 'errors'}, errors.map((e) => el('li', null, typeof e === 'string' ? e : JSON.stringify(e)))),
          ],
    );
  }

  // ---- #/suspects ------------------------------------------------------------

  async function suspects(params) {
    const all = params.get('all') === '1';
    let body;
    try {
      body = await api('/api/v1/suspects' + (all ? '?all=1' : ''));
    } catch (err) {
      if (err instanceof StaleError) throw err;
      if (err instanceof AuthError) return tokenForm(err);
      return show(
        'suspects-unavailable',
        el('h1', null, 'Suspects'),
        el('p', {class: 'error', id: 'suspects-unavailable'}, 'suspects unavailable: ' + err.message),
      );
    }
    const list = Array.isArray(body && body.suspects) ? body.suspects : [];
    const events = Array.isArray(body && body.systemic_events) ? body.systemic_events : [];
    const allBox = el('input', {type: 'checkbox', name: 'all', checked: all});
    allBox.addEventListener('change', () => {
      location.hash = allBox.checked ? '#/suspects?all=1' : '#/suspects';
    });
    const jobsOf = (s) =>
      (s.job_list || []).map((j, i) => [
        i ? ', ' : '',
        jobLink(j.job_id, j.attempt),
        j.role === 'root_cause' ? '' : ' (' + text(j.role) + ')',
      ]);
    show(
      'suspects',
      el('h1', null, 'Suspects'),
      el(
        'p',
        {class: 'note'},
        'Components seen in failed jobs from ' + unixTime(body.since) + ' to ' + unixTime(body.until) + '. ',
        el('label', null, allBox, ' include one-offs'),
      ),
      list.length === 0
        ? el('p', {class: 'empty'}, 'No suspect.')
        : table(
            ['Kind', 'Component', 'Jobs', 'Root cause', 'Attributed', 'Symptom', 'Systemic', 'Score',
             'Domains', 'First seen', 'Last seen', 'Job list'],
            list.map((s) =>
              el(
                'tr',
                {class: s.flagged ? 'flagged' : 'one-off'},
                el('td', null, text(s.kind)),
                el('td', {class: 'node'}, text(s.id), s.device_uuid ? el('div', {class: 'uuid'}, s.device_uuid) : null),
                el('td', {class: 'num'}, text(s.jobs)),
                el('td', {class: 'num'}, text(s.root_cause_jobs)),
                el('td', {class: 'num'}, text(s.attributed_jobs)),
                el('td', {class: 'num'}, text(s.symptom_jobs)),
                el('td', {class: 'num'}, text(s.systemic_jobs)),
                el('td', {class: 'num'}, text(s.score)),
                el('td', null, (s.domains || []).join(', ')),
                el('td', {class: 'time'}, unixTime(s.first_seen)),
                el('td', {class: 'time'}, unixTime(s.last_seen)),
                el('td', null, jobsOf(s)),
              ),
            ),
            {id: 'suspects'},
          ),
      el('h2', null, 'Systemic events'),
      events.length === 0
        ? el('p', {class: 'empty'}, 'None.')
        : table(
            ['Domain', 'First seen', 'Last seen', 'Nodes', 'Jobs'],
            events.map((e) =>
              el(
                'tr',
                null,
                el('td', null, text(e.domain)),
                el('td', {class: 'time'}, unixTime(e.first_seen)),
                el('td', {class: 'time'}, unixTime(e.last_seen)),
                el('td', null, (e.nodes || []).join(', ')),
                el('td', null, (e.jobs || []).map((j, i) => [i ? ', ' : '', jobLink(j.job_id, j.attempt)])),
              ),
            ),
            {id: 'systemic-events'},
          ),
    );
  }

  // ---- routing -----------------------------------------------------------------

  async function route() {
    const hash = location.hash.replace(/^#/, '') || '/';
    const q = hash.indexOf('?');
    const path = q < 0 ? hash : hash.slice(0, q);
    const params = new URLSearchParams(q < 0 ? '' : hash.slice(q + 1));
    if (params.has('token')) {
      saveToken(params.get('token'));
      params.delete('token');
      const rest = params.toString();
      // Out of the address bar and the history.
      history.replaceState(null, '', '#' + path + (rest ? '?' + rest : ''));
    }
    const mine = ++generation;
    show('loading', el('p', {class: 'status'}, 'Loading…'));
    for (const a of document.querySelectorAll('nav a')) a.removeAttribute('aria-current');
    try {
      const m = path.match(/^\/job\/([^/]+)$/);
      if (m) {
        await job(decodeURIComponent(m[1]));
      } else if (path === '/suspects') {
        document.getElementById('nav-suspects').setAttribute('aria-current', 'page');
        await suspects(params);
      } else if (path === '/' || path === '') {
        document.getElementById('nav-failures').setAttribute('aria-current', 'page');
        await recentFailures(params);
      } else {
        show('error', el('p', {class: 'error'}, 'No such page: ' + path));
      }
    } catch (err) {
      if (!(err instanceof StaleError) && mine === generation) show('error', el('p', {class: 'error'}, 'Error: ' + err.message));
    }
  }

  async function footer() {
    const foot = document.getElementById('footer');
    try {
      const h = await api('/api/v1/health');
      foot.textContent = text(h.engine_version) + ' · schema ' + text(h.schema_version) +
        ' · read-only';
    } catch (err) {
      if (err instanceof StaleError) return footer();
      foot.textContent = 'agent unreachable: ' + err.message;
    }
  }

  window.addEventListener('hashchange', route);
  route();
  footer();
})();

// diff.js — a word-level diff of two texts for the revisions panel: Myers' O(ND)
// algorithm ("An O(ND) difference algorithm and its variations", 1986) over the words
// and the runs of white space between them, after the common start and end are set
// aside. No DOM here (a node test imports it): diffWords(a, b) gives [[op, text]…] with
// op '=' (in both), '-' (only in a), '+' (only in b); joined, the '=' and '-' parts are
// a and the '=' and '+' parts are b. null when the texts differ by more than `max`
// pieces (the trace would grow as the square of that): the caller says so instead.
export const tokens = (s) => s.match(/\s+|[^\s]+/gu) || [];

export function diffWords(a, b, max = 2000) {
  const A = tokens(a), B = tokens(b);
  let s = 0;
  while (s < A.length && s < B.length && A[s] === B[s]) s++;
  let ea = A.length, eb = B.length;
  while (ea > s && eb > s && A[ea - 1] === B[eb - 1]) { ea--; eb--; }
  const mid = myers(A.slice(s, ea), B.slice(s, eb), max);
  if (!mid) return null;
  const out = [];
  const push = (op, t) => {
    const last = out[out.length - 1];
    if (last && last[0] === op) last[1] += t; else if (t) out.push([op, t]);
  };
  push('=', A.slice(0, s).join(''));
  for (const [op, t] of mid) push(op, t);
  push('=', A.slice(ea).join(''));
  return out;
}

// the shortest edit script from a to b, as [op, token] pairs in order
function myers(a, b, max) {
  const n = a.length, m = b.length, lim = Math.min(n + m, max);
  const off = lim + 1, v = new Int32Array(2 * lim + 3), trace = [];
  for (let d = 0; d <= lim; d++) {
    trace.push(v.slice(off - d - 1, off + d + 2)); // the k's that step d reads: -d-1..d+1
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) { x++; y++; }
      v[off + k] = x;
      if (x >= n && y >= m) return back(a, b, trace);
    }
  }
  return null;
}

function back(a, b, trace) {
  const ops = [];
  let x = a.length, y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d], at = (k) => v[k + d + 1];
    const k = x - y;
    const pk = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const px = at(pk), py = px - pk;
    while (x > px && y > py) { ops.push(['=', a[x - 1]]); x--; y--; }
    if (d > 0) ops.push(x === px ? ['+', b[py]] : ['-', a[px]]);
    x = px; y = py;
  }
  return ops.reverse();
}

// how many words a diff adds and removes
export function diffCounts(parts) {
  const c = {'+': 0, '-': 0};
  for (const [op, t] of parts) if (op !== '=') c[op] += (t.match(/\S+/gu) || []).length;
  return {added: c['+'], removed: c['-']};
}

// Paragraph by paragraph (a blank line parts them), for the side-by-side view: the
// paragraphs matched as a longest common subsequence, a run of removed ones facing a run
// of added ones paired as changed (with their word diff). Rows [{op, a, b, parts}]: op
// '=' (a === b), '~' (changed: parts is the word diff, or null when too different),
// '-' (only in a), '+' (only in b). null when the paragraphs differ too much.
export const paragraphs = (s) => s.split(/\n[ \t]*\n+/).map((p) => p.trim()).filter(Boolean);

export function diffParagraphs(a, b, max = 2000) {
  const ops = myers(paragraphs(a), paragraphs(b), max);
  if (!ops) return null;
  const rows = [];
  let gone = [], come = [];
  const flush = () => {
    const n = Math.max(gone.length, come.length);
    for (let i = 0; i < n; i++) {
      const x = gone[i], y = come[i];
      if (x !== undefined && y !== undefined) rows.push({op: '~', a: x, b: y, parts: diffWords(x, y, max)});
      else if (x !== undefined) rows.push({op: '-', a: x});
      else rows.push({op: '+', b: y});
    }
    gone = []; come = [];
  };
  for (const [op, t] of ops) {
    if (op === '-') gone.push(t);
    else if (op === '+') come.push(t);
    else { flush(); rows.push({op: '=', a: t, b: t}); }
  }
  flush();
  return rows;
}

'use strict';
// The document line rules (js/58_lines.js, NOTATION.md §25) under Node. The cases in
// testdata/lines/cases.json are shared with the Go engine test (lines_test.go), so goja and
// Node are held to one answer; computeOps is also checked against the literal table walk
// of §25 (refComputeOps below), the oracle of its bit-parallel table.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const crypto = require('node:crypto');
const { load } = require('./load.js');

const W = load();
const D = W.doc;
const file = path.join(__dirname, '..', '58_lines.js');
const cases = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'testdata', 'lines', 'cases.json'), 'utf8'));

function caseText(t) {
  if (typeof t === 'string') return t;
  const ls = [];
  for (let i = 0; i < t.gen.n; i++) ls.push(Object.prototype.hasOwnProperty.call(t.gen.at, String(i)) ? t.gen.at[i] : t.gen.prefix + i);
  return ls.join('\n');
}

function errorCode(fn) {
  try {
    fn();
  } catch (e) {
    return e.werkbaumCode || 'internal: ' + e.message;
  }
  return null;
}

// plain copies a value out of the scripts' realm (vm context), for deepStrictEqual.
function plain(x) {
  return JSON.parse(JSON.stringify(x));
}

// wire drops the meaningless fields (count of an insert, lines of a delete).
function wire(ops) {
  return plain(ops).map((o) => (o.op === 'insert' ? { op: o.op, index: o.index, lines: o.lines }
    : o.op === 'delete' ? { op: o.op, index: o.index, count: o.count } : { op: o.op, index: o.index, count: o.count, lines: o.lines }));
}

// refComputeOps is §25's diff written literally: a full LCS table, cell by cell.
function refComputeOps(from, to) {
  const a = D.lines(from);
  const b = D.lines(to);
  let p = 0;
  const max = Math.min(a.length, b.length);
  while (p < max && a[p] === b[p]) p++;
  let s = 0;
  while (s < max - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  const A = a.slice(p, a.length - s);
  const B = b.slice(p, b.length - s);
  const n = A.length;
  const m = B.length;
  if (!n && !m) return [];
  if (!n) return [{ op: 'insert', index: p, lines: B }];
  if (!m) return [{ op: 'delete', index: p, count: n }];
  if (n * m > 1000000) return [{ op: 'replace', index: p, count: n, lines: B }];
  const lcs = [];
  for (let i = 0; i <= n; i++) lcs.push(new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i][j] = A[i] === B[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const ops = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && A[i] === B[j]) { i++; j++; continue; }
    const start = i;
    const ins = [];
    while ((i < n || j < m) && !(i < n && j < m && A[i] === B[j])) {
      if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) ins.push(B[j++]);
      else i++;
    }
    const removed = i - start;
    if (removed && ins.length) ops.push({ op: 'replace', index: p + start, count: removed, lines: ins });
    else if (removed) ops.push({ op: 'delete', index: p + start, count: removed });
    else ops.push({ op: 'insert', index: p + start, lines: ins });
  }
  return ops;
}

// rng is a small seeded generator (mulberry32), so failures repeat.
function rng(seed) {
  return function () {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomText(r, n, words) {
  const breaks = ['\n', '\n', '\n', '\r\n', '\r'];
  const k = Math.floor(r() * (n + 1));
  let s = '';
  for (let i = 0; i < k; i++) {
    if (i) s += breaks[Math.floor(r() * breaks.length)];
    s += words[Math.floor(r() * words.length)];
  }
  return r() < 0.3 ? s + '\n' : s;
}

test('shared normalize cases: lines and checksum', () => {
  assert.ok(cases.normalize.length >= 5);
  for (const c of cases.normalize) {
    assert.strictEqual(D.normalize(c.text), c.normalized, c.name);
    assert.deepStrictEqual(plain(D.lines(c.text)), c.lines, c.name);
    assert.strictEqual(D.lines(c.text).join('\n'), D.normalize(c.text), c.name + ': join is the inverse');
    const sum = 'sha256:' + crypto.createHash('sha256').update(D.normalize(c.text), 'utf8').digest('hex');
    assert.strictEqual(sum, c.checksum, c.name + ': checksum of the normalised text');
  }
});

test('shared apply cases: strict apply, errors name the op', () => {
  assert.ok(cases.apply.length >= 20);
  for (const c of cases.apply) {
    if (c.error) {
      assert.strictEqual(errorCode(() => D.applyOps(c.base, c.ops)), c.error, c.name);
      assert.throws(() => D.applyOps(c.base, c.ops), /ops\[\d+\]/, c.name + ': message names the op');
      continue;
    }
    assert.strictEqual(D.applyOps(c.base, c.ops), c.want, c.name);
  }
});

test('shared diff cases: exact ops, and apply(from, diff) is normalize(to)', () => {
  for (const c of cases.diff) {
    const from = caseText(c.from);
    const to = caseText(c.to);
    const ops = D.computeOps(from, to);
    if (c.wantSummary) {
      assert.deepStrictEqual(plain(ops).map((o) => ({ op: o.op, index: o.index, count: o.count, lines: o.lines.length })), c.wantSummary, c.name);
    } else {
      assert.deepStrictEqual(wire(ops), wire(c.want), c.name);
    }
    assert.deepStrictEqual(wire(ops), wire(refComputeOps(from, to)), c.name + ': same as the literal table walk');
    assert.strictEqual(D.applyOps(from, ops), D.normalize(to), c.name + ': round trip');
  }
});

test('shared rebase and conflict cases', () => {
  for (const c of cases.rebase) {
    const r = D.rebase(c.ops, c.since);
    if (c.conflict) {
      assert.strictEqual(r.ok, false, c.name);
      assert.strictEqual(D.conflicts(c.ops, c.since), true, c.name);
    } else {
      assert.strictEqual(r.ok, true, c.name);
      assert.deepStrictEqual(wire(r.ops), wire(c.want), c.name);
      assert.strictEqual(D.conflicts(c.ops, c.since), false, c.name);
    }
  }
  for (const c of cases.conflict) {
    assert.strictEqual(D.conflicts(c.a, c.b), c.want, c.name);
    assert.strictEqual(D.conflicts(c.b, c.a), c.want, c.name + ' (swapped)');
  }
});

test('computeOps equals the literal table walk on random pairs', () => {
  const r = rng(18);
  const words = ['- a', '- b', '- [x] c @jörg', '- @Müller', '', 'd'];
  for (let k = 0; k < 600; k++) {
    const n = k < 500 ? 14 : 90; // a few with more than 32 lines per side (several words)
    const a = randomText(r, n, words);
    const b = k % 4 === 0 ? a.replace('- b', '- B') + randomText(r, 3, words) : randomText(r, n, words);
    const ops = D.computeOps(a, b);
    assert.deepStrictEqual(wire(ops), wire(refComputeOps(a, b)), JSON.stringify([a, b]));
    assert.strictEqual(D.applyOps(a, ops), D.normalize(b), JSON.stringify([a, b]));
  }
});

test('computeOps equals the literal table walk just below the cut-off', () => {
  const r = rng(25);
  const words = ['x', 'y', 'z', 'w', 'v'];
  for (let k = 0; k < 3; k++) {
    const a = randomText(r, 1200, words).replace(/^/, 'P\n') + '\nS';
    const b = randomText(r, 800, words).replace(/^/, 'P\n') + '\nS';
    assert.deepStrictEqual(wire(D.computeOps(a, b)), wire(refComputeOps(a, b)));
  }
});

test('the file runs on its own, as a browser page loads it', () => {
  const ctx = vm.createContext({});
  vm.runInContext(fs.readFileSync(file, 'utf8'), ctx, { filename: '58_lines.js' });
  assert.strictEqual(ctx.Werkbaum.doc.applyOps('a\r\nb', [{ op: 'insert', index: 1, lines: ['@jörg'] }]), 'a\n@jörg\nb');
  const src = fs.readFileSync(file, 'utf8').replace(/\/\/.*$/gm, '');
  assert.doesNotMatch(src, /\\p\{/, 'no Unicode property escapes (goja)');
  assert.doesNotMatch(src, /\brequire\(|\bprocess\.|\bwindow\.|\bdocument\./, 'no host APIs');
});

test('edit.applyOps shares the apply walk and keeps its messages', () => {
  assert.throws(() => W.edit.applyOps('a\nb', [{ op: 'delete', index: 1, count: 5 }]), /^Error: op 1: range 1…6 is outside the text \(2 lines, indices 0…1\)$/);
  assert.throws(() => D.applyOps('a\nb', [{ op: 'delete', index: 1, count: 5 }]), /^Error: ops\[0\]: range 1…6 is outside the text/);
  assert.strictEqual(W.edit.applyOps('a\r\nb\r\n', [{ op: 'insert', index: 1, lines: ['x'] }]), 'a\r\nx\r\nb\r\n');
});

'use strict';
// The exported vocabulary (25_vocabulary.js) under Node: it equals NOTATION.md's tables
// (§9 statuses, §10 sizes, §3 gates), the parser and the edit verbs read every word of it
// the way it says, and the Go side (internal/werkbaum/vocabulary_test.go) holds goja's
// answer and the generated copy for talk to the same value.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { load, sharedDir } = require('./load.js');

const W = load();
// vocab is vocab() as this realm's plain values (the scripts run in their own vm
// context, whose arrays deepStrictEqual would tell apart from ours).
const vocab = () => JSON.parse(JSON.stringify(W.vocabulary()));

// notation returns NOTATION.md's text, or a skip message on a fresh clone without ../shared.
function notation() {
  const file = path.join(sharedDir(), 'werkbaum', 'NOTATION.md');
  if (fs.existsSync(file)) return { text: fs.readFileSync(file, 'utf8'), skip: false };
  if (process.env.TALK_SHARED_DIR) throw new Error('TALK_SHARED_DIR=' + process.env.TALK_SHARED_DIR + ' has no ' + file);
  return { text: null, skip: 'needs NOTATION.md: ' + file + ' not found (a fresh clone has no ../shared); set TALK_SHARED_DIR' };
}
const doc = notation();

// section returns the text of "## N. …" up to the next "## ".
function section(text, n) {
  const start = text.indexOf('\n## ' + n + '.');
  assert.ok(start >= 0, 'NOTATION.md has no section ' + n);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? text.length : end);
}

// statusTable reads §9: per row the box codes, the German key, the rank and the three flags,
// in table order; the English keys come from the paragraph below the table, in the same order.
function statusTable(text) {
  const s = section(text, 9);
  const rows = [];
  for (const line of s.split('\n')) {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (cells.length !== 6 || !cells[0].startsWith('`[')) continue;
    const codes = [...cells[0].matchAll(/`\[(.)\]`/g)].map((m) => m[1]);
    const yes = (c) => c === 'yes';
    rows.push({
      german: /^`([^`]+)`/.exec(cells[1])[1], codes, rank: Number(cells[2]),
      realized: yes(cells[3]), done: yes(cells[4]), started: yes(cells[5])
    });
  }
  const para = /English keys — ([^(]+)\(neutral/.exec(s.replace(/\s+/g, ' '));
  assert.ok(para, '§9 names the English keys');
  const english = [...para[1].matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  assert.strictEqual(english.length, rows.length, '§9: one English key per table row');
  rows.forEach((r, i) => { r.key = english[i]; });
  return rows;
}

test('the statuses equal NOTATION.md §9: English key, German key, box codes, rank, flags', { skip: doc.skip }, () => {
  const want = statusTable(doc.text);
  assert.strictEqual(want.length, 8);
  const got = vocab().statuses.map((s) => ({
    german: s.german, codes: s.codes, rank: s.rank, realized: s.realized, done: s.done, started: s.started, key: s.key
  }));
  assert.deepStrictEqual(got, want);
  for (const s of vocab().statuses) assert.strictEqual(s.code, s.codes[0], s.key + ': the canonical code comes first');
  // "Canonical codes (`status.code`) are `? ␠ ~ / x ^ - !`".
  const canon = /Canonical codes \(`status.code`\) are `([^`]+)`/.exec(section(doc.text, 9));
  assert.ok(canon, '§9 lists the canonical codes');
  const codes = canon[1].split(' ').map((c) => (c === '␠' ? ' ' : c)).sort();
  assert.deepStrictEqual(vocab().statuses.map((s) => s.code).sort(), codes);
});

test('the sizes equal NOTATION.md §10, the gates §3', { skip: doc.skip }, () => {
  const scale = /Ordinal scale `([^`]+)`/.exec(section(doc.text, 10));
  assert.ok(scale, '§10 states the ordinal scale');
  assert.deepStrictEqual(vocab().sizes, scale[1].split(' < '));
  const row = /\| 2 \| gate character: (.*) — /.exec(section(doc.text, 3));
  assert.ok(row, '§2 names the gate characters');
  const gates = row[1].split(', ').map((g) => {
    const m = /^`(\\?.)` (and|or|xor|optional)/.exec(g);
    assert.ok(m, 'gate entry ' + g);
    const code = m[1].replace('\\', '');
    return m[2] === 'optional' ? { code, type: 'and', optional: true } : { code, type: m[2], optional: false };
  });
  assert.deepStrictEqual(vocab().gates, gates);
});

test('the parser reads each gate character as the vocabulary says', () => {
  for (const g of vocab().gates) {
    const d = W._parseFresh('- [ ] Root #r\n  ' + g.code + ' [ ] Child of @jörg #c\n  - [ ] Sibling @Müller\n');
    const c = d.roots[0].children[0];
    assert.strictEqual(c.gate, g.code, g.code);
    assert.strictEqual(c.type, g.type, g.code);
    assert.strictEqual(!!c.optional, g.optional, g.code);
  }
});

test('the parser reads each box code as the status the vocabulary gives it', () => {
  for (const s of vocab().statuses) {
    for (const code of s.codes) {
      const n = W._parseFresh('- [' + code + '] Aufgabe von @Müller #t\n').roots[0];
      assert.ok(n.status, JSON.stringify(code));
      assert.strictEqual(n.status.key, s.key, JSON.stringify(code));
      assert.strictEqual(n.status.name, s.german, JSON.stringify(code));
      assert.strictEqual(n.status.rank, s.rank, JSON.stringify(code));
    }
  }
});

test('setStatus accepts every key, German key, box code and neutral word of the vocabulary', () => {
  const text = '- [ ] Root #r\n  - [?] Task of @jörg #t\n';
  const v = vocab();
  for (const s of v.statuses) {
    for (const word of [s.key, s.german].concat(s.codes)) {
      const out = W.edit.apply(text, 'setStatus', { id: 't', status: word });
      const node = W._parseFresh(out).roots[0].children[0];
      assert.strictEqual(node.status && node.status.key, s.key, JSON.stringify(word));
      assert.strictEqual(node.status.rank, s.rank, JSON.stringify(word));
    }
  }
  for (const word of v.neutral) {
    const out = W.edit.apply(text, 'setStatus', { id: 't', status: word });
    assert.strictEqual(W._parseFresh(out).roots[0].children[0].status, null, word);
  }
  for (const size of v.sizes) {
    const out = W.edit.apply(text, 'setSize', { id: 't', size });
    assert.strictEqual(W._parseFresh(out).roots[0].children[0].size, size);
  }
});

test('a bad status or size names the vocabulary in its message', () => {
  const v = vocab();
  const bad = JSON.parse(W.call('apply', JSON.stringify({ text: '- [ ] A #a\n', verb: 'setStatus', args: { id: 'a', status: 'finished' } })));
  assert.strictEqual(bad.error.code, 'badStatus');
  for (const s of v.statuses) assert.ok(bad.error.message.includes(s.key), s.key + ' in ' + bad.error.message);
  assert.ok(bad.error.message.includes(v.neutral[0]));
  const badSize = JSON.parse(W.call('apply', JSON.stringify({ text: '- [ ] A #a\n', verb: 'setSize', args: { id: 'a', size: 'XXXL' } })));
  assert.strictEqual(badSize.error.code, 'badSize');
  for (const s of v.sizes) assert.ok(badSize.error.message.includes(s), s + ' in ' + badSize.error.message);
});

test('vocabulary() hands out a fresh object each call', () => {
  const a = W.vocabulary();
  a.sizes.push('XXXL');
  a.statuses[0].key = 'changed';
  assert.deepStrictEqual(vocab().sizes, ['XS', 'S', 'M', 'L', 'XL', 'XXL']);
  assert.strictEqual(vocab().statuses[0].key, 'idea');
});

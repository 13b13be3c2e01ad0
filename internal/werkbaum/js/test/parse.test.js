'use strict';
// Parser details that the data-driven cases do not reach: the node-line prefix scanner
// against the §3 regexp, the shape W2's edit verbs rely on, and the letter classes.
const test = require('node:test');
const assert = require('node:assert');
const { load } = require('./load.js');
const { rng } = require('./gen.js');

const W = load();
const plain = (x) => JSON.parse(JSON.stringify(x));

// The reference regexp of NOTATION.md §3 (with its lookaheads; Node only).
const NODE_RE = /^([ \t]*)([-|+]|=(?=[ \t]))?\s*(?:([><])(?=[ \t])\s*)?(?:\[([^\]])\]\s*)?(?:([><])(?=[ \t])\s*)?([\s\S]*)$/;

test('the prefix scanner equals the §3 regexp on generated lines', () => {
  const r = rng(42);
  const parts = [' ', '  ', '\t', '-', '+', '|', '=', '= ', '=\t', '>', '<', '> ', '< ', '[', ']', '[x]', '[ ]', '[]', '[ab]',
    'x', 'Task', '\u00a0', '\u3000', '\v', '#', '(M)', '[\u00e4]', '[>]'];
  for (let i = 0; i < 30000; i++) {
    let s = '';
    const n = Math.floor(r() * 7);
    for (let k = 0; k < n; k++) s += parts[Math.floor(r() * parts.length)];
    const m = NODE_RE.exec(s);
    const got = W._nodePrefix(s);
    const want = {
      indent: m[1],
      gate: m[2] || '',
      fold: m[3] || m[5] || null,
      box: m[4] === undefined ? null : m[4],
      rest: m[6]
    };
    assert.deepStrictEqual(plain(got), want, JSON.stringify(s));
  }
});

test('the parsed shape: positions, extents and description blocks', () => {
  const text = ['Root #r \\', '  cont', '  - A #a', '    " short', '    - B', '  - C', '---', '#a', '  long', '', '#zz', '  x'].join('\n');
  const d = W.parse(text);
  assert.strictEqual(d.separatorLine, 7);
  assert.deepStrictEqual(plain(d.all.map((n) => [n.line, n.lastLine, n.lastTreeLine, n.parent, n.index, n.indent, n.depth])), [
    [1, 2, 6, -1, 0, '', 0],
    [3, 3, 5, 0, 1, '  ', 1],
    [5, 5, 5, 1, 2, '    ', 2],
    [6, 6, 6, 0, 3, '  ', 1]
  ]);
  assert.deepStrictEqual(plain(d.all[0].cont), [2]);
  assert.deepStrictEqual(plain(d.all[1].shortDescLines), [4]);
  assert.deepStrictEqual(plain(d.all[1].descLines), [4, 8, 9, 10]);
  assert.deepStrictEqual(plain(d.descBlocks), [
    { line: 8, id: 'a', node: 1, lines: [8, 9, 10] },
    { line: 11, id: 'zz', node: -1, lines: [11, 12] }
  ]);
  assert.strictEqual(d.byId.a, d.all[1]);
  assert.ok(Object.isFrozen(d.all[2].children), 'empty lists are the shared frozen list');
});

test('letter classes work without Unicode property escapes', () => {
  const d = W.parse('- x @jörg @Müller &über #ñandú :#日本,#Ωmega @x😀y');
  const n = d.all[0];
  assert.deepStrictEqual(plain(n.tags), ['jörg', 'Müller', 'x']);
  assert.deepStrictEqual(plain(n.marks), ['über']);
  assert.strictEqual(n.id, 'ñandú');
  assert.deepStrictEqual(plain(n.deps), ['日本', 'Ωmega']);
  for (const f of Object.keys(W)) assert.ok(!/\\p\{/.test(String(W[f])), 'no \\p{ in ' + f);
});

test('size extraction equals the reference regexp (last free-standing match)', () => {
  const SIZE_RE = /(^|\s)\((XXL|XS|XL|S|M|L)\)/gi;
  const r = rng(7);
  const parts = ['(', ')', 'S', 's', 'XL', 'xxl', 'xS', 'M', ' ', '\u00a0', '\t', 'x', '(L)', ' (S)', '\u017f', '((', '(M)(S)', 'Backend'];
  for (let i = 0; i < 20000; i++) {
    let s = '';
    const n = 1 + Math.floor(r() * 8);
    for (let k = 0; k < n; k++) s += parts[Math.floor(r() * parts.length)];
    let size = null;
    let rest = s;
    let last = null;
    let m;
    SIZE_RE.lastIndex = 0;
    while ((m = SIZE_RE.exec(s)) !== null) last = m;
    if (last) {
      size = last[2].toUpperCase();
      rest = s.slice(0, last.index) + last[1] + s.slice(last.index + last[0].length);
    }
    const label = rest.replace(/\s+/g, ' ').trim();
    const d = W.parse('- ' + s);
    if (label === '') {
      assert.strictEqual(d.all.length, 0, JSON.stringify(s));
      continue;
    }
    assert.strictEqual(d.all[0].size, size, JSON.stringify(s));
    assert.strictEqual(d.all[0].label, label, JSON.stringify(s));
  }
});

'use strict';
// The parser reads common lines with one regexp (FAST_RE in 10_parse.js) and everything
// else with the general token extraction. Both paths must give the same document: these
// tests parse every example, every case plan and many generated lines both ways.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { load, sharedDir } = require('./load.js');
const { rng, bigPlan, randomPlan } = require('./gen.js');

const W = load();

function both(text) {
  W._fastParse(false);
  let slow;
  try {
    slow = JSON.stringify(W._parseFresh(text));
  } finally {
    W._fastParse(true);
  }
  return { fast: JSON.stringify(W._parseFresh(text)), slow };
}

function assertSame(text, what) {
  const r = both(text);
  if (r.fast !== r.slow) assert.strictEqual(r.fast, r.slow, what + ': ' + JSON.stringify(text).slice(0, 400));
}

test('fast and general path agree on the shared examples and the case plans', () => {
  const dir = path.join(sharedDir(), 'werkbaum', 'examples');
  let n = 0;
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.werkbaum'))) {
    assertSame(fs.readFileSync(path.join(dir, f), 'utf8'), f);
    n++;
  }
  const cases = path.join(__dirname, '..', '..', 'testdata', 'cases');
  for (const f of fs.readdirSync(cases).filter((f) => f.endsWith('.json'))) {
    const data = JSON.parse(fs.readFileSync(path.join(cases, f), 'utf8'));
    for (const c of Array.isArray(data) ? data : []) {
      if (Array.isArray(c.lines)) {
        assertSame(c.lines.join('\n'), f + ' ' + c.name);
        n++;
      }
    }
  }
  assert.ok(n > 50, 'too few plans compared: ' + n);
});

test('fast and general path agree on generated plans', () => {
  assertSame(bigPlan(500, 3), 'bigPlan');
  for (let seed = 1; seed <= 40; seed++) assertSame(randomPlan(seed, 60), 'randomPlan ' + seed);
});

test('fast and general path agree on generated lines full of near-tokens', () => {
  const r = rng(7);
  const parts = [' ', '  ', '\t', '-', '+', '|', '=', '= ', '[x]', '[ ]', '[X]', '[k]', '[]', '[ab]', '>', '< ', '"', '" ',
    'Task', 'a:', ':', ':b', 'x/y', 'http://h.x/p', '#id', '#id:', '#a.b-c_d', '#ü', '(M)', '(XS)', '(xl)', '(m)', '(Q)',
    '@bo', '@bo,', '@jörg', '&k', '&taiga.x', ':#a', ':#a,#b', ':#a,', '!!!', '!', '%%', '%% c', '%', '\\', '\u00a0',
    '\u3000', '\u2028', 'é', '😀', '---', ')', '(', ',', '#', '@', '&', '\v', 'US-1', '#US-12', '#T-3:'];
  for (let k = 0; k < 3000; k++) {
    const lines = [];
    const count = 1 + Math.floor(r() * 6);
    for (let j = 0; j < count; j++) {
      let s = '';
      const n = Math.floor(r() * 9);
      for (let q = 0; q < n; q++) s += parts[Math.floor(r() * parts.length)];
      lines.push(s);
    }
    assertSame(lines.join('\n'), 'generated');
  }
});

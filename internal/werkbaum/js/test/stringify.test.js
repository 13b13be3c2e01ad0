'use strict';
// Werkbaum.callPieces writes its answer in pieces the host can stop between (90_api.js):
// joined, they must be the bytes of JSON.stringify, on the shared examples' analyses and on large generated plans.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { load, examples } = require('./load.js');
const { bigPlan, richPlan, chainPlan } = require('./gen.js');

const W = load();

const shared = examples();

test('the pieces of a shared example\'s answers join to the bytes of JSON.stringify', { skip: shared.skip }, () => {
  for (const f of fs.readdirSync(shared.dir).filter((f) => f.endsWith('.werkbaum'))) {
    const text = fs.readFileSync(path.join(shared.dir, f), 'utf8');
    for (const v of [W.analyze(text), W.inspect(text, {}), W.inspectParts(text, {})]) {
      assert.strictEqual(W._pieces(v).join(''), JSON.stringify(v), f);
    }
  }
});

test('the pieces of an answer join to the bytes of JSON.stringify', () => {
  const texts = [];
  texts.push(bigPlan(3000, 7), richPlan(5, 900), chainPlan(3, 6, 4));
  let chunked = 0;
  for (const text of texts) {
    for (const v of [W.analyze(text), W.inspect(text, {}), W.inspectParts(text, {})]) {
      assert.strictEqual(W._pieces(v).join(''), JSON.stringify(v));
      if (JSON.stringify(v).length > 100000) chunked++;
    }
  }
  // Odd values: holes, undefined, functions, toJSON, nested long arrays, null prototypes.
  const odd = Object.create(null);
  odd.a = new Array(600);
  odd.a[3] = { x: undefined, f() {}, y: [1, undefined, () => 1] };
  odd.b = undefined;
  odd.c = { toJSON() { return 'T'; } };
  odd.d = Array.from({ length: 700 }, (_, i) => (i % 3 ? [i, 'ü' + i] : { i: i, nested: new Array(300).fill(i) }));
  odd.e = new Date(0);
  odd['k"ey\u2028'] = 'é\n';
  for (const v of [odd, [odd, odd], 'x', 5, null, {}, { u: undefined }, new Array(1000).fill(null), { big: new Array(257).fill(1) }]) {
    assert.strictEqual(W._pieces(v).join(''), JSON.stringify(v));
  }
  assert.ok(chunked >= 3, 'answers long enough to be written in slices: ' + chunked);
});

'use strict';
// The exact search must return the reference enumeration's optimum and tie-break.
const test = require('node:test');
const assert = require('node:assert');
const { load } = require('./load.js');
const { randomPlan, coupledPlan, coupledRandomPlan, chainPlan } = require('./gen.js');

const W = load();
// plain copies values out of the vm realm so deepStrictEqual compares them by content.
const plain = (x) => JSON.parse(JSON.stringify(x));

function same(text) {
  const m = W._model(W.parse(text), {});
  const fast = W._cheapPath(m);
  const ref = W._naivePath(m);
  assert.strictEqual(fast.exact, ref.exact, 'exact');
  assert.deepStrictEqual(plain(fast.choice), plain(ref.choice), 'choice');
  assert.strictEqual(fast.cost, ref.cost, 'cost');
  assert.deepStrictEqual(Array.from(fast.inSet), Array.from(ref.inSet), 'needed');
  assert.deepStrictEqual(Array.from(fast.station), Array.from(ref.station), 'stations');
  if (fast.decomposedCost !== undefined) assert.strictEqual(fast.decomposedCost, fast.cost, 'component sum');
  return fast.P.coupled.length;
}

test('exact search equals the naive enumeration on generated plans', () => {
  let withCoupled = 0;
  let groups = 0;
  for (let seed = 1; seed <= 1500; seed++) {
    const text = randomPlan(seed, 8 + (seed % 40));
    let n;
    try {
      n = same(text);
    } catch (e) {
      e.message += '\nseed ' + seed + '\n' + text;
      throw e;
    }
    if (n > 0) withCoupled++;
    groups += n;
  }
  // The generator must actually exercise coupled groups, or the test proves nothing.
  assert.ok(withCoupled > 300, 'plans with coupled groups: ' + withCoupled);
  assert.ok(groups > 1000, 'coupled groups: ' + groups);
});

test('plans of coupled components: optimum and tie-break equal the reference', () => {
  let big = 0;
  for (let seed = 1; seed <= 800; seed++) {
    const text = coupledRandomPlan(seed);
    try {
      if (same(text) >= 3) big++;
    } catch (e) {
      e.message += '\nseed ' + seed + '\n' + text;
      throw e;
    }
  }
  assert.ok(big > 300, 'plans with at least three coupled groups: ' + big);
});

test('groups that activate backwards (issue 33): optimum and tie-break equal the reference', () => {
  let big = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const text = chainPlan(seed, 2 + (seed % 7), seed % 4);
    try {
      if (same(text) >= 4) big++;
    } catch (e) {
      e.message += '\nseed ' + seed + '\n' + text;
      throw e;
    }
  }
  assert.ok(big > 120, 'plans with at least four coupled groups: ' + big);
  // Few sizes: many assignments cost the same, so the tie-break in the reference order
  // (first group slowest) decides, also when the search takes the groups in another order.
  const narrow = [['S'], ['S', 'M'], ['XS', 'S'], ['S', 'M', 'L']];
  for (let seed = 1; seed <= 3000; seed++) {
    const text = chainPlan(seed, 2 + (seed % 4), seed % 2, narrow[seed % 4]);
    try {
      same(text);
    } catch (e) {
      e.message += '\nseed ' + seed + ' (ties)\n' + text;
      throw e;
    }
  }
});

test('fully coupled groups: optimum and tie-break equal the reference', () => {
  for (let g = 1; g <= 10; g++) same(coupledPlan(g, 2));
});

test('the worked examples of §27 (exact search picks B; A wins when DB is paid anyway)', () => {
  const a = W.analyze('Ship (XS)\n  | A (XS) :#big\n  | B (S)\n  + #big: Big (L)\n');
  assert.deepStrictEqual(plain(a.path.needed), [1, 3]);
  assert.strictEqual(a.path.cost, 2);
  const b = W.analyze('Ship (XS)\n  - Base (XS) :#db\n  - Pick (XS)\n    | A (S) :#db\n    | B (M)\n  + Pool (XS)\n    - #db: DB (L)\n');
  assert.deepStrictEqual(plain(b.path.needed), [1, 2, 3, 4, 7]);
  assert.deepStrictEqual(plain(b.path.stations), [2, 4, 7]);
  assert.strictEqual(b.path.cost, 7);
});

test('more than 20,000 assignments fall back to the greedy path with cheapApprox', () => {
  const text = coupledPlan(15, 0); // 2^15 = 32,768 assignments
  const a = W.analyze(text);
  assert.strictEqual(a.path.exact, false);
  assert.deepStrictEqual(plain(a.warnings.map((w) => w.type)), ['cheapApprox']);
  assert.strictEqual(a.warnings[0].line, undefined);
  same(text);
  const e = W.analyze(coupledPlan(14, 0));
  assert.strictEqual(e.path.exact, true);
});

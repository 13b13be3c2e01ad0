'use strict';
// The model passes (20_model.js, 30_path.js, 35_loads.js, 40_warnings.js) were rewritten for
// speed in goja: two fused passes writing per-node columns instead of many small passes with
// per-node lists. ref/*.js.ref are the previous straightforward implementations (commit
// 8023e89, NOTATION.md §8–§23 rule by rule; not .js so that the test runner does not run them).
// This test runs both on the shared examples, the notation cases and thousands of generated
// plans (with and without showDiscarded) and requires identical results: every model column,
// the needed set, choice, cost and stations, the loads (key order included), mixedGate and
// the final warning order with texts.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { load, order, examples } = require('./load.js');
const gen = require('./gen.js');

const W = load();
const R = loadRef();

// loadRef loads the scripts before 20_model.js (in the load order) from ../ and then the
// reference passes.
function loadRef() {
  const context = vm.createContext({});
  const dir = path.join(__dirname, '..');
  const all = order();
  const base = all.slice(0, all.indexOf('20_model.js'));
  for (const f of base) vm.runInContext(fs.readFileSync(path.join(dir, f), 'utf8'), context, { filename: f });
  for (const f of ['20_model.js', '30_path.js', '35_loads.js', '40_warnings.js']) {
    const file = path.join(__dirname, 'ref', f + '.ref');
    vm.runInContext(fs.readFileSync(file, 'utf8'), context, { filename: file });
  }
  return context.Werkbaum;
}

// view: equiv_view.js, shared with the Go test that runs the same comparison in goja.
const view = require('./equiv_view.js');

function same(text, label) {
  for (const show of [false, true]) {
    const a = view(W, text, show);
    const b = view(R, text, show);
    const where = label + (show ? ' (showDiscarded)' : '') + '\n' + text;
    assert.deepStrictEqual(a.model, b.model, 'model: ' + where);
    assert.deepStrictEqual(a.path, b.path, 'path: ' + where);
    assert.strictEqual(a.loads, b.loads, 'loads: ' + where);
    assert.strictEqual(a.mixed, b.mixed, 'mixedGate: ' + where);
    assert.strictEqual(a.warnings, b.warnings, 'warnings: ' + where);
  }
}

const shared = examples();

test('the rewritten passes equal the reference on the shared examples', { skip: shared.skip }, () => {
  const dir = shared.dir;
  const plans = fs.readdirSync(dir).filter((f) => f.endsWith('.werkbaum'));
  assert.ok(plans.length >= 6);
  for (const f of plans) same(fs.readFileSync(path.join(dir, f), 'utf8'), f);
});

test('the rewritten passes equal the reference on the notation cases', () => {
  const dir = path.join(__dirname, '..', '..', 'testdata', 'cases');
  let n = 0;
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.json'))) {
    for (const c of JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'))) {
      if (!Array.isArray(c.lines)) continue;
      same(c.lines.join('\n') + '\n', f + ': ' + c.name);
      n++;
    }
  }
  assert.ok(n > 50, 'cases: ' + n);
});

test('the rewritten passes equal the reference on generated plans', () => {
  const seen = { fold: 0, focus: 0, taiga: 0, ticket: 0, dropped: 0, mixed: 0, coupled: 0, overload: 0 };
  for (let seed = 1; seed <= 1500; seed++) {
    const text = gen.richPlan(seed, 6 + (seed % 45));
    same(text, 'richPlan ' + seed);
    const a = view(W, text, false);
    if (a.model.collapsed.some((x) => x)) seen.fold++;
    if (/!!!/.test(text)) seen.focus++;
    if (a.model.taiga.some((x) => x !== null)) seen.taiga++;
    if (a.model.ticket.some((x) => x !== null)) seen.ticket++;
    if (a.model.dropped) seen.dropped++;
    if (a.mixed !== '[]') seen.mixed++;
    if (a.path.coupled) seen.coupled++;
    if (a.loads.indexOf('"overloadedAssignee":{') >= 0) seen.overload++;
  }
  // The generator must reach every feature, or the comparison proves little.
  for (const k of Object.keys(seen)) assert.ok(seen[k] > 50, k + ': ' + seen[k]);
  for (let seed = 1; seed <= 400; seed++) same(gen.randomPlan(seed, 8 + (seed % 40)), 'randomPlan ' + seed);
  for (let seed = 1; seed <= 200; seed++) same(gen.coupledRandomPlan(seed), 'coupledRandomPlan ' + seed);
  for (let g = 1; g <= 6; g++) same(gen.coupledPlan(g, 2), 'coupledPlan ' + g);
  same(gen.coupledPlan(15, 0), 'coupledPlan 15 (greedy)');
  same(gen.bigPlan(400, 7), 'bigPlan 400');
});

test('the final warning order equals the reference for lists far out of order', () => {
  const r = gen.rng(99);
  for (let round = 0; round < 300; round++) {
    const n = Math.floor(r() * 60);
    const list = [];
    for (let i = 0; i < n; i++) {
      const line = round % 3 === 0 ? 1 + Math.floor(r() * 5) : 1 + Math.floor(r() * 200);
      list.push({ type: 'descStray', line: line, tag: i });
    }
    const mixed = [{ type: 'mixedGate', line: 3, label: 'x', tag: 'm' }];
    const approx = r() < 0.5 ? [{ type: 'cheapApprox', tag: 'a' }] : [];
    const over = r() < 0.5 ? [{ type: 'assigneeOverload', tag: 'o' }] : [];
    const got = JSON.stringify(W._finalWarnings(list, approx, over, mixed).map((w) => w.tag));
    const want = JSON.stringify(R._finalWarnings(list, approx, over, mixed).map((w) => w.tag));
    assert.strictEqual(got, want, 'round ' + round);
  }
});

'use strict';
// Agreement with the upstream editor: every plan in ../shared/werkbaum/examples/ is
// analysed and compared with its *.expected.json (NOTATION.md §28): every warning (type,
// line and the other fields), every in-view node's effective status and assumed size (and
// the other per-node fields), the needed set, the stations in order, the cost and the
// assignee loads. Any difference fails.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { load, examples } = require('./load.js');

const W = load();
const { dir, skip } = examples();
const plans = skip ? [] : fs.readdirSync(dir).filter((f) => f.endsWith('.werkbaum')).sort();

const stripText = (ws) => ws.map((w) => {
  const o = Object.assign({}, w);
  delete o.text;
  return o;
});

test('the shared examples are there', { skip }, () => assert.ok(plans.length >= 6, 'plans: ' + plans.length));

for (const f of plans) {
  test('example ' + f, () => {
    const exp = JSON.parse(fs.readFileSync(path.join(dir, f.replace(/\.werkbaum$/, '.expected.json')), 'utf8'));
    const got = JSON.parse(JSON.stringify(W.analyze(fs.readFileSync(path.join(dir, f), 'utf8'), { file: f, checksum: exp.checksum })));
    assert.strictEqual(got.physicalLines, exp.physicalLines, 'physicalLines');
    assert.deepStrictEqual(got.view, exp.view, 'view');
    assert.deepStrictEqual(stripText(got.warnings), exp.warnings, 'warnings');
    assert.deepStrictEqual(stripText(got.parseWarnings), exp.parseWarnings, 'parseWarnings');
    assert.deepStrictEqual(stripText(got.mixedGateWarnings), exp.mixedGateWarnings, 'mixedGateWarnings');
    assert.strictEqual(got.nodes.length, exp.nodes.length, 'node count');
    for (let i = 0; i < exp.nodes.length; i++) {
      const e = exp.nodes[i];
      const g = got.nodes[i];
      for (const k of Object.keys(e)) {
        assert.deepStrictEqual(g[k], e[k], 'node on line ' + e.line + ': ' + k);
      }
    }
    const p = exp.path;
    assert.strictEqual(got.path.exact, p.exact, 'exact');
    assert.deepStrictEqual(got.path.needed, p.needed, 'needed');
    assert.deepStrictEqual(got.path.stations, p.stations, 'stations');
    assert.strictEqual(got.path.cost, p.cost, 'cost');
    assert.deepStrictEqual(Object.keys(got.path.assigneeLoads), Object.keys(p.assigneeLoads), 'load order');
    for (const k of Object.keys(p.assigneeLoads)) {
      assert.ok(Math.abs(got.path.assigneeLoads[k] - p.assigneeLoads[k]) < 1e-9, 'load of ' + k);
    }
    assert.strictEqual(got.path.unassignedLoad, p.unassignedLoad, 'unassignedLoad');
    assert.deepStrictEqual(got.path.assigneeStations, p.assigneeStations, 'assigneeStations');
    assert.strictEqual(got.path.totalStations, p.totalStations, 'totalStations');
    assert.deepStrictEqual(got.path.overloadedAssignee, p.overloadedAssignee, 'overloadedAssignee');
    assert.deepStrictEqual(got.initiallyCollapsed, exp.initiallyCollapsed, 'initiallyCollapsed');
    assert.deepStrictEqual(got.focusLines, exp.focusLines, 'focusLines');
    assert.strictEqual(got.checksum, exp.checksum, 'checksum echoed');
  });
}

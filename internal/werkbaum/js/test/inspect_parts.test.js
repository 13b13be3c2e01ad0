'use strict';
// Werkbaum.inspectParts is inspect for a host that writes the node records itself (the Go
// engine, view.go). Its JSON must be inspect's view with an empty node list, and [lo, hi)
// must be exactly the nodes inspect lists. (The Go test TestHostRecordsEqualTheScriptsRecords
// checks the records the host writes from the parts.)
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { load, examples } = require('./load.js');
const { bigPlan, randomPlan } = require('./gen.js');

const W = load();

test('inspectParts is inspect without the records, and lists the same nodes', () => {
  const texts = [bigPlan(200, 4), '', '%% comment only\n'];
  for (let seed = 1; seed <= 10; seed++) texts.push(randomPlan(seed, 40));
  // The upstream examples join when they are there (examples()); the generated plans
  // alone already give well over 100 views.
  const { dir } = examples();
  if (dir) for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.werkbaum'))) texts.push(fs.readFileSync(path.join(dir, f), 'utf8'));
  let views = 0;
  for (const text of texts) {
    const d = W.parse(text);
    const ids = [null].concat(d.all.filter((n) => n.id !== null).slice(0, 3).map((n) => n.id));
    for (const id of ids) {
      for (const include of [null, ['tree'], ['warnings', 'path']]) {
        const opts = { id: id, include: include };
        const want = W.inspect(text, opts);
        const parts = W.inspectParts(text, opts);
        const lines = want.nodes ? want.nodes.map((n) => n.line) : null;
        if (want.nodes) want.nodes = [];
        assert.strictEqual(parts.json, JSON.stringify(want));
        assert.strictEqual(parts.tree, !!want.nodes);
        if (lines) assert.deepStrictEqual(parts.all.slice(parts.lo, parts.hi).map((n) => n.line), lines);
        views++;
      }
    }
  }
  assert.ok(views > 100, views + ' views');
});

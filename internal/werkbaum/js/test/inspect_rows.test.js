'use strict';
// Werkbaum.inspectRows is the inspect view with node rows instead of node records (the Go
// host turns rows into records). Rows zipped with the column names must give exactly the
// records of Werkbaum.inspect, keys in the same order.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { load, sharedDir } = require('./load.js');
const { bigPlan, randomPlan } = require('./gen.js');

const W = load();

function zip(view) {
  if (!view.nodes) return view;
  const out = {};
  for (const k of Object.keys(view)) out[k] = view[k];
  out.nodes = view.nodes.map((row) => {
    assert.strictEqual(row.length, W._inspectRowFields.length);
    const o = {};
    W._inspectRowFields.forEach((f, i) => { o[f] = row[i]; });
    return o;
  });
  return out;
}

test('inspectRows zipped with the column names equals inspect', () => {
  const texts = [bigPlan(200, 4)];
  for (let seed = 1; seed <= 10; seed++) texts.push(randomPlan(seed, 40));
  const dir = path.join(sharedDir(), 'werkbaum', 'examples');
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.werkbaum'))) texts.push(fs.readFileSync(path.join(dir, f), 'utf8'));
  for (const text of texts) {
    const d = W.parse(text);
    const ids = [null].concat(d.all.filter((n) => n.id !== null).slice(0, 3).map((n) => n.id));
    for (const id of ids) {
      for (const include of [null, ['tree'], ['warnings', 'path']]) {
        const opts = { id: id, include: include };
        assert.strictEqual(JSON.stringify(zip(W.inspectRows(text, opts))), JSON.stringify(W.inspect(text, opts)));
      }
    }
  }
});

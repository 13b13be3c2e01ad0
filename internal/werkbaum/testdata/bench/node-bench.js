'use strict';
// The engine's benchmarks under Node, for comparison with goja (docs/bench-werkbaum.md):
//   node internal/werkbaum/testdata/bench/node-bench.js
// Loads the notation exactly as the Go engine does (js/test/load.js) and times inspect on
// the same texts as bench_test.go: examples/werkbaum.werkbaum, gen.js bigPlan(2000, 7) and
// coupledPlan(14), plus a small plan. Prints median and mean per call.
const path = require('node:path');
const fs = require('node:fs');
const crypto = require('node:crypto');
const { load, sharedDir } = require('../../js/test/load.js');
const { bigPlan, coupledPlan } = require('../../js/test/gen.js');

const W = load();
// Every call does the full work, like the Go benchmarks (CacheEntries: -1): no memo.
W._setMemoSize(0);
const small = '[~] Shop #shop (XL)\n  - [x] Discovery #disc (M)\n  - [ ] Checkout #co (L) @tom\n    - [/] Cart #cart (M)\n';
const plans = {
  werkbaum: fs.readFileSync(path.join(sharedDir(), 'werkbaum', 'examples', 'werkbaum.werkbaum'), 'utf8'),
  generated2000: bigPlan(2000, 7),
  coupled14: coupledPlan(14),
  small: small
};

function time(fn, minMs) {
  for (let i = 0; i < 5; i++) fn(); // warm-up (JIT)
  const xs = [];
  const end = Date.now() + minMs;
  while (Date.now() < end || xs.length < 20) {
    const t = process.hrtime.bigint();
    fn();
    xs.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  xs.sort((a, b) => a - b);
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return { runs: xs.length, median: xs[xs.length >> 1], mean: mean };
}

for (const [name, text] of Object.entries(plans)) {
  const sum = 'sha256:' + crypto.createHash('sha256').update(text).digest('hex');
  const r = time(() => W.call('inspect', JSON.stringify({ text: text })), 1500);
  console.log(`inspect ${name.padEnd(14)} ${String(r.runs).padStart(6)} runs  median ${r.median.toFixed(3)} ms  mean ${r.mean.toFixed(3)} ms  ${sum}`);
}
const w = plans.werkbaum;
const s = time(() => W.edit.setStatus(w, 'wb', 'done'), 1500);
console.log(`setStatus werkbaum       ${String(s.runs).padStart(6)} runs  median ${s.median.toFixed(3)} ms  mean ${s.mean.toFixed(3)} ms`);

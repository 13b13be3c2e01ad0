'use strict';
// The engine's benchmarks under Node, for comparison with goja (docs/bench-werkbaum.md):
//   node internal/werkbaum/testdata/bench/node-bench.js
// Loads the notation exactly as the Go engine does (js/test/load.js) and times inspect on
// the same texts as bench_test.go: examples/werkbaum.werkbaum, gen.js bigPlan(2000, 7) and
// coupledPlan(14), plus a small plan. Prints median and mean per call.
//   node internal/werkbaum/testdata/bench/node-bench.js PLAN...
// times inspect (no memo) on the given plan files instead, e.g. package gen's benchmark plans
// (go run ./internal/werkbaum/cmd/werkbaum-gen 10000 > /tmp/p10000.werkbaum), the texts of
// BenchmarkSize/inspect: median of 7 calls after 2 warm-up calls, and the cost per node.
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

// node node-bench.js --phases PLAN... times the phases of BenchmarkPhase (bench_phase_test.go)
// that the exact search's plans exercise, on the same prepared values: path (W._cheapPath on
// the model) and records (W.inspect, the whole analysis with the script's own records);
// median of 21 calls after 10 warm-up calls. Compare with
//   go test -run '^$' -bench 'Phase/coupled14w(20|5)/(path|records)$' ./internal/werkbaum
// on werkbaum-gen -shape coupled [-width 5] 14 (issue 33).
if (process.argv[2] === '--phases') {
  for (const f of process.argv.slice(3)) {
    const text = fs.readFileSync(f, 'utf8');
    const m = W._model(W.parse(text), {});
    for (const [phase, fn] of [['path', () => W._cheapPath(m)], ['records', () => W.inspect(text, {})]]) {
      for (let i = 0; i < 10; i++) fn(); // warm-up (JIT)
      const xs = [];
      for (let i = 0; i < 21; i++) {
        const t = process.hrtime.bigint();
        fn();
        xs.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      xs.sort((a, b) => a - b);
      console.log(`${phase.padEnd(8)} ${path.basename(f).padEnd(20)} median ${xs[10].toFixed(2)} ms  (min ${xs[0].toFixed(2)}, max ${xs[20].toFixed(2)})`);
    }
  }
  process.exit(0);
}

// node node-bench.js --serve is the Node side of BenchmarkNodeRatio (bench_ratio_test.go):
// it reads one JSON request a line from stdin, {op, text}, runs the op once on the text and
// answers one JSON line, {wallMs, cpuMs} (hrtime and process.cpuUsage around the call, so the
// pipe is not counted). op "inspect" is the engine's inspect as a host calls it (W.call, the
// records written by the script, JSON.stringify); op "records" is W.inspect, the whole
// analysis with the script's own records, BenchmarkPhase's "records"; op "path" is
// W._cheapPath on the text's model (made before the timing), BenchmarkPhase's "path"; ops
// "compute" (W._compute: the analysis without the node records), "parse" (W.parse) and
// "model" (W._model on the text's document, parsed before the timing) are the phases inside
// "records", BenchmarkPhase's phases of those names. The memo is off, as above, so every
// call does the full work.
// node node-bench.js --first reads one plan from stdin and answers the same JSON line for the
// first inspect of this fresh process (scripts loaded, nothing compiled by the JIT yet): the
// Node side of BenchmarkNodeRatio's "first".
if (process.argv[2] === '--first') {
  const text = fs.readFileSync(0, 'utf8');
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  W.call('inspect', JSON.stringify({ text: text }));
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  const c = process.cpuUsage(c0);
  process.stdout.write(JSON.stringify({ wallMs: wall, cpuMs: (c.user + c.system) / 1000 }) + '\n');
  return;
}
if (process.argv[2] === '--serve') {
  const readline = require('node:readline');
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  rl.on('line', (line) => {
    const req = JSON.parse(line);
    // ops "model" and "path": what the phase starts from (the document, the model) is made
    // untimed, the phase alone is timed.
    const doc = req.op === 'model' || req.op === 'path' ? W.parse(req.text) : null;
    const model = req.op === 'path' ? W._model(doc, {}) : null;
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    if (req.op === 'inspect') W.call('inspect', JSON.stringify({ text: req.text }));
    else if (req.op === 'records') W.inspect(req.text, {});
    else if (req.op === 'compute') W._compute(req.text, {});
    else if (req.op === 'parse') W.parse(req.text);
    else if (req.op === 'model') W._model(doc, {});
    else if (req.op === 'path') W._cheapPath(model);
    else throw new Error('unknown op ' + req.op);
    const wall = Number(process.hrtime.bigint() - t0) / 1e6;
    const c = process.cpuUsage(c0);
    process.stdout.write(JSON.stringify({ wallMs: wall, cpuMs: (c.user + c.system) / 1000 }) + '\n');
  });
  return;
}

const files = process.argv.slice(2);
if (files.length) {
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8');
    const nodes = W.parse(text).all.length;
    for (let i = 0; i < 2; i++) W.call('inspect', JSON.stringify({ text: text }));
    const xs = [];
    for (let i = 0; i < 7; i++) {
      const t = process.hrtime.bigint();
      W.call('inspect', JSON.stringify({ text: text }));
      xs.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    xs.sort((a, b) => a - b);
    const med = xs[xs.length >> 1];
    console.log(`inspect ${path.basename(f).padEnd(20)} ${String(nodes).padStart(6)} nodes  median ${med.toFixed(1)} ms  ` +
      `${(med * 1e6 / nodes).toFixed(0)} ns/node  (min ${xs[0].toFixed(1)}, max ${xs[xs.length - 1].toFixed(1)})`);
  }
  process.exit(0);
}

for (const [name, text] of Object.entries(plans)) {
  const sum = 'sha256:' + crypto.createHash('sha256').update(text).digest('hex');
  const r = time(() => W.call('inspect', JSON.stringify({ text: text })), 1500);
  console.log(`inspect ${name.padEnd(14)} ${String(r.runs).padStart(6)} runs  median ${r.median.toFixed(3)} ms  mean ${r.mean.toFixed(3)} ms  ${sum}`);
}
const w = plans.werkbaum;
const s = time(() => W.edit.setStatus(w, 'wb', 'done'), 1500);
console.log(`setStatus werkbaum       ${String(s.runs).padStart(6)} runs  median ${s.median.toFixed(3)} ms  mean ${s.mean.toFixed(3)} ms`);

// Concurrent writers with the official TypeScript SDK v1 over Streamable HTTP: N clients
// start from the same read and each adds its own node; whoever loses the race gets a
// conflict and redoes the write on the base the conflict names, with a new request id,
// until it is applied. All N must be applied, each node must be in the file exactly
// once, and the journal must know every attempt (applied once per writer, conflict for
// the others).
//
//   node writers.mjs --plan KEY --path FILE [--writers 20]

import { readFileSync } from 'node:fs';
import { Checks, assert, assertEqual, call, connect, errorPayload, ok, parseArgs } from './lib.mjs';

const args = parseArgs();
const { plan, path } = args;
const n = Number(args.writers ?? 20);
const maxAttempts = 4 * n; // each conflict means another writer got through, so n suffice
const checks = new Checks(`${n} v1 writers`);

const lineOf = (i) => `- [ ] #w${i}: Writer ${i} of Jörg (XS)`;

const clients = await checks.run(`${n} clients connect`, () =>
  Promise.all(Array.from({ length: n }, (_, i) => connect({ sdk: 'v1', transport: 'http', era: '2025', name: `writer-${i}` }))));
if (!clients) {
  checks.done();
  process.exit();
}

const start = ok(await call(clients[0], 'werkbaum_read', { plan }), 'werkbaum_read');

/** One writer: redo on the conflict's base until applied; returns its attempts. */
async function writer(i) {
  const c = clients[i];
  let base = start.base;
  const attempts = [];
  for (let k = 0; k < maxAttempts; k++) {
    const requestId = `writer-${i}-try-${k}`;
    const res = await call(c, 'werkbaum_add_node', { plan, base, request_id: requestId, parent: 'root', line: lineOf(i) });
    if (!res.isError) {
      const w = ok(res, `writer ${i} attempt ${k}`);
      attempts.push({ requestId, state: 'applied', revision: w.revision });
      return attempts;
    }
    const p = errorPayload(res, `writer ${i} attempt ${k}`);
    assert(p.conflict === true, `writer ${i} attempt ${k}: an error that is no conflict: ${JSON.stringify(p).slice(0, 300)}`);
    attempts.push({ requestId, state: 'conflict' });
    base = p.base;
  }
  throw new Error(`writer ${i} was not applied in ${maxAttempts} attempts`);
}

const outcomes = await Promise.allSettled(clients.map((_, i) => writer(i)));
const done = outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value);

await checks.run(`all ${n} writers applied`, () => {
  const died = outcomes.map((o, i) => [i, o]).filter(([, o]) => o.status === 'rejected');
  assert(died.length === 0, `${died.length} of ${n} writers died; the first: writer ${died[0]?.[0]}: ${died[0]?.[1].reason?.message}`);
});

await checks.run('each node is in the file exactly once', () => {
  const text = readFileSync(path, 'utf8');
  for (let i = 0; i < n; i++) {
    const count = text.split('\n').filter((l) => l.trim() === lineOf(i)).length;
    assertEqual(count, 1, `lines of writer ${i}`);
  }
});

await checks.run('revisions are distinct and consecutive', () => {
  const revisions = done.map((a) => a.at(-1).revision).sort((x, y) => x - y);
  assertEqual(revisions.length, n, 'applied writes');
  revisions.forEach((r, k) => assertEqual(r, start.base.revision + 1 + k, `revision ${k}`));
});

await checks.run('operation_get knows every attempt', async () => {
  for (const attempts of done) {
    for (const a of attempts) {
      const op = ok(await call(clients[0], 'operation_get', { plan, request_id: a.requestId }), `operation_get ${a.requestId}`);
      assertEqual(op.state, a.state, `state of ${a.requestId}`);
    }
  }
});

console.log(`attempts per writer: ${outcomes.map((o) => (o.status === 'fulfilled' ? o.value.length : 'died')).join(' ')}`);
await Promise.all(clients.map((c) => c.close()));
checks.done();

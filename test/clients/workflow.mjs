// The whole plan-write workflow with one official TypeScript client, as an agent in a host
// would run it: read → write → same-id retry (the recorded result) → stale-base conflict →
// redo on the new base → guard refusal → unknown node id → operation_get in each state
// (applied, unknown, conflict, rejected). Every answer is checked against talkd's contract
// for tool results (shared/mcp/PROTOCOL.md and issue 14): success results carry
// structuredContent matching the declared outputSchema (the SDK validates it), error
// results carry none and put a JSON object in content[0].text.
//
//   node workflow.mjs --sdk v1|v2 --transport http|stdio --era 2025|2026 --plan KEY --path FILE
//
// The plan file must start as workflowPlan in test/ts_clients_test.go.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  Checks, assert, rev2026, assertEqual, assertErrorShape, assertUnchanged, call, connect, errorPayload, fileState, ok, parseArgs,
} from './lib.mjs';

const args = parseArgs();
const { sdk, transport, era, plan, path } = args;
const label = `${sdk} ${transport} ${era}`;
const agent = `ts-${sdk}-${transport}-${era}-Jörg`;
const prefix = `wf-${sdk}-${transport}-${era}-Müller`; // non-ASCII request ids too
const checks = new Checks(label);

const sha = (text) => createHash('sha256').update(text, 'utf8').digest('hex');
const fileText = () => readFileSync(path, 'utf8');
const setStatus = (base, requestId, id, status, extra = {}) =>
  call(client, 'werkbaum_set_status', { plan, base, request_id: requestId, id, status, ...extra });

const tools = ['plans_list', 'werkbaum_read', 'werkbaum_inspect', 'werkbaum_write', 'werkbaum_apply_ops', 'werkbaum_set_status',
  'werkbaum_add_node', 'werkbaum_move_node', 'werkbaum_set_size', 'werkbaum_remove_node', 'operation_get'];

const client = await checks.run('connect', async () => {
  const c = await connect({ sdk, transport, era, name: agent });
  assertEqual(c.getServerVersion()?.name, 'talkd', 'serverInfo.name');
  if (sdk === 'v2') {
    // The era asked for is the era spoken (v1 has no accessor; it always asks 2025-11-25).
    assertEqual(c.getNegotiatedProtocolVersion(), era === '2026' ? rev2026 : '2025-11-25', 'negotiated revision');
  }
  return c;
});
if (!client) {
  checks.done();
  process.exit();
}

// The write tools leave their output schema out of tools/list (issue 30: seven copies of
// one small schema were a fifth of the list); the reads declare theirs, and the SDK
// validates every structured answer of a tool that declares one.
const writes = new Set(tools.filter((n) => n.startsWith('werkbaum_') && n !== 'werkbaum_read' && n !== 'werkbaum_inspect'));
await checks.run('tools/list declares the read tools with an output schema, the writes without', async () => {
  const { tools: listed } = await client.listTools(undefined, { timeout: 10_000 });
  const byName = new Map(listed.map((t) => [t.name, t]));
  for (const name of tools) {
    const t = byName.get(name);
    assert(t, `tool ${name} is missing`);
    if (writes.has(name)) assert(t.outputSchema === undefined, `${name} declares an outputSchema`);
    else assert(t.outputSchema?.type === 'object', `${name} has no object outputSchema`);
    assert(t.inputSchema?.type === 'object', `${name} has no object inputSchema`);
  }
});

const initial = fileText();
const r1 = await checks.run('read', async () => {
  const r = ok(await call(client, 'werkbaum_read', { plan }), 'werkbaum_read');
  assertEqual(r.text, initial, 'read text');
  assertEqual(r.base.checksum, sha(initial), 'read checksum');
  assert(Number.isInteger(r.base.revision) && r.base.revision >= 1, `read revision ${r.base.revision}`);
  return r;
});
let base = r1?.base ?? { revision: 1, checksum: sha(initial) };

const writeID = `${prefix}-write`;
const w1 = await checks.run('write', async () => {
  const w = ok(await setStatus(base, writeID, 'a', 'done'), 'werkbaum_set_status');
  const now = fileText();
  assertEqual(now, initial.replace('[ ] #a:', '[x] #a:'), 'the file after the write');
  assertEqual(w.changed, true, 'changed');
  assertEqual(w.revision, base.revision + 1, 'revision');
  assertEqual(w.base, { revision: base.revision + 1, checksum: sha(now) }, 'new base');
  assert(w.replayed !== true, 'a first write is no replay');
  return w;
});
const afterWrite = fileState(path);

await checks.run('same-id retry answers the recorded result', async () => {
  await new Promise((r) => setTimeout(r, 20)); // a rewrite now would show in the mtime
  const again = ok(await setStatus(base, writeID, 'a', 'done'), 'the retried werkbaum_set_status');
  assertEqual(again.replayed, true, 'replayed');
  assertEqual(again.base, w1?.base, 'replayed base');
  assertEqual(again.revision, w1?.revision, 'replayed revision');
  assertEqual(again.changed, true, 'replayed changed');
  assertUnchanged(path, afterWrite, 'a retried request');
});

const staleID = `${prefix}-stale`;
const conflict = await checks.run('stale base is a conflict with the current text and base', async () => {
  const res = await setStatus(base, staleID, 'b', 'done');
  const p = errorPayload(res, 'the stale write');
  assertEqual(p.conflict, true, 'conflict');
  assertEqual(p.base, w1?.base, 'the conflict base');
  assertEqual(p.text, afterWrite.text, 'the conflict text');
  assertUnchanged(path, afterWrite, 'a stale write');
  return p;
});

// Redo on the base the conflict named (what an agent does); if that check failed, on a
// fresh read, so the later checks still say something.
base = conflict?.base ?? ok(await call(client, 'werkbaum_read', { plan }), 'werkbaum_read').base;
const redoID = `${prefix}-redo`;
const w2 = await checks.run('redo on the new base', async () => {
  const w = ok(await setStatus(base, redoID, 'b', 'done'), 'the redone werkbaum_set_status');
  const now = fileText();
  assertEqual(now, afterWrite.text.replace('[ ] #b:', '[x] #b:'), 'the file after the redo');
  assertEqual(w.revision, base.revision + 1, 'redo revision');
  assertEqual(w.base.checksum, sha(now), 'redo checksum');
  return w;
});
base = w2?.base ?? ok(await call(client, 'werkbaum_read', { plan }), 'werkbaum_read').base;
const afterRedo = fileState(path);

const prodID = `${prefix}-prod`;
await checks.run('guard refusal (a node newly in production needs allowProd)', async () => {
  const p = errorPayload(await setStatus(base, prodID, 'b', 'prod'), 'the [^] write');
  assertErrorShape(p, 'the [^] refusal', 'allowProd');
  assertUnchanged(path, afterRedo, 'a refused write');
});

const ghostID = `${prefix}-ghost`;
await checks.run('unknown node id', async () => {
  const p = errorPayload(await setStatus(base, ghostID, 'nope', 'done'), 'a write to #nope');
  assertErrorShape(p, 'the unknown node', 'nope');
  assertUnchanged(path, afterRedo, 'a write to an unknown node');
});

const operation = async (requestId) =>
  ok(await call(client, 'operation_get', { plan, request_id: requestId }), `operation_get ${requestId}`);

await checks.run('operation_get: applied, with tool, author, at, revision and result', async () => {
  const op = await operation(writeID);
  assertEqual(op.request_id, writeID, 'request_id');
  assertEqual(op.state, 'applied', 'state');
  assertEqual(op.tool, 'werkbaum_set_status', 'tool');
  assertEqual(op.revision, w1?.revision, 'revision');
  assert(typeof op.at === 'string' && !Number.isNaN(Date.parse(op.at)), `at ${JSON.stringify(op.at)}`);
  assert(op.author && typeof op.author === 'object', `author ${JSON.stringify(op.author)}`);
  // A 2025-era HTTP client names itself only in initialize, which talkd (no sessions)
  // does not remember; the bridge and the 2026 era carry the name on every request.
  const wantAgent = transport === 'http' && era === '2025' ? undefined : agent;
  assertEqual(op.author.agent || undefined, wantAgent, 'author.agent');
  assert(op.result && typeof op.result === 'object', `result ${JSON.stringify(op.result)}`);
  assertEqual(op.result.base, w1?.base, 'the recorded result base');
});
await checks.run('operation_get: unknown', async () => {
  const op = await operation(`${prefix}-never-sent`);
  assertEqual(op.state, 'unknown', 'state');
});
await checks.run('operation_get: conflict', async () => {
  const op = await operation(staleID);
  assertEqual(op.state, 'conflict', 'state');
});
await checks.run('operation_get: rejected (the guard refusal and the unknown node)', async () => {
  for (const id of [prodID, ghostID]) {
    const op = await operation(id);
    assertEqual(op.state, 'rejected', `state of ${id}`);
  }
});

await client.close();
checks.done();

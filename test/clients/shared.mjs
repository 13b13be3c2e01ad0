// Shared mode (bearer tokens per client) with one official TypeScript client: a writer's
// token reads and writes; a read-only token reads, and its write is an error result naming
// the missing grant that leaves the file alone; a wrong token fails within 2 s — over HTTP
// the SDK sees the 401, through `talk mcp` the bridge answers the request with its id —
// and never hangs until the SDK's own 60 s timeout.
//
//   node shared.mjs --sdk v1|v2 --transport http|stdio --era 2025|2026 --plan KEY --path FILE
//
// Environment: TALK_URL, TALK_BIN, TOK_WRITER, TOK_READER (see lib.mjs).

import { spawn } from 'node:child_process';
import {
  Checks, rev2026, assert, assertEqual, assertErrorShape, assertUnchanged, call, connect, env, errorPayload, fileState, ok, parseArgs,
} from './lib.mjs';

/** Sends one line to a fresh `talk mcp` and returns its first answer (within 2 s). */
function bridgeAnswer(msg, token) {
  return new Promise((resolve, reject) => {
    const child = spawn(env('TALK_BIN'), ['mcp', '--url', env('TALK_URL')], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TALK_TOKEN: token }, stdio: ['pipe', 'pipe', 'ignore'],
    });
    const timer = setTimeout(() => { child.kill(); reject(new Error('the bridge gave no answer within 2 s')); }, 2_000);
    let out = '';
    child.stdout.on('data', (b) => {
      out += b;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      child.stdin.end();
      try { resolve(JSON.parse(out.slice(0, nl))); } catch (err) { reject(err); }
    });
    child.on('error', reject);
    child.stdin.write(JSON.stringify(msg) + '\n');
  });
}

const { sdk, transport, era, plan, path } = parseArgs();
const label = `shared ${sdk} ${transport} ${era}`;
const node = `${sdk}${transport}${era}`; // a node id of its own, so the runs do not collide
const checks = new Checks(label);

await checks.run('a writer token reads and writes', async () => {
  const c = await connect({ sdk, transport, era, name: `writer-${node}-Jörg`, token: env('TOK_WRITER') });
  try {
    const r = ok(await call(c, 'werkbaum_read', { plan }), 'werkbaum_read');
    assertEqual(r.text, fileState(path).text, 'read text');
    const line = `- [ ] #${node}: Added by ${label} (XS)`;
    const w = ok(await call(c, 'werkbaum_add_node', { plan, base: r.base, request_id: `shared-${node}`, parent: 'root', line }), 'werkbaum_add_node');
    assertEqual(w.changed, true, 'changed');
    assert(fileState(path).text.includes(`  ${line}\n`), `the file lacks the added line ${JSON.stringify(line)}`);
  } finally {
    await c.close();
  }
});

await checks.run('a read-only token reads; its write is refused and changes nothing', async () => {
  const c = await connect({ sdk, transport, era, name: `reader-${node}`, token: env('TOK_READER') });
  try {
    const r = ok(await call(c, 'werkbaum_read', { plan }), 'werkbaum_read');
    const before = fileState(path);
    const res = await call(c, 'werkbaum_set_status', { plan, base: r.base, request_id: `shared-ro-${node}`, id: 'a', status: 'done' });
    assertErrorShape(errorPayload(res, 'a write with a read-only token'), 'the read-only refusal', `no write grant for plan "${plan}"`);
    assertUnchanged(path, before, 'a refused write');
  } finally {
    await c.close();
  }
});

await checks.run('a wrong token fails within 2 s', async () => {
  const start = Date.now();
  let c;
  const attempt = (async () => {
    // connect sends initialize (2025 era) or server/discover (2026 over stdio); a pinned
    // 2026 client over HTTP sends nothing before its first request, which is part of it.
    c = await connect({ sdk, transport, era, name: `stranger-${node}`, token: 'wrong-' + 'x'.repeat(34) });
    await c.listTools(undefined, { timeout: 10_000 });
  })();
  const outcome = await Promise.race([
    attempt.then(() => ({ ok: true }), (err) => ({ err })),
    new Promise((r) => setTimeout(() => r({ hang: true }), 5_000)),
  ]);
  const took = Date.now() - start;
  try {
    assert(!outcome.hang, `no answer after ${took} ms: the client hangs`);
    assert(!outcome.ok, 'a wrong token was accepted');
    assert(took < 2_000, `the refusal took ${took} ms, want under 2 s`);
    const msg = String(outcome.err?.message ?? outcome.err);
    if (transport === 'http') {
      assert(/401|[Uu]nauthori[sz]ed|bearer token is not valid/.test(msg), `the error does not name the cause: ${msg}`);
    } else {
      const want = 'talkd refused the token';
      if (sdk === 'v2' && era === '2026') {
        // The v2 client pinned to 2026 probes with server/discover on a sibling process whose
        // stderr it drops, and reports only its own "negotiation failed": ask the bridge
        // the same question directly to see that its answer names the cause.
        assertEqual(outcome.err?.code, 'ERA_NEGOTIATION_FAILED', `the SDK's error code (${msg})`);
        const answer = await bridgeAnswer({
          jsonrpc: '2.0', id: 'discover-Jörg', method: 'server/discover',
          params: { _meta: { 'io.modelcontextprotocol/protocolVersion': rev2026, 'io.modelcontextprotocol/clientCapabilities': {} } },
        }, 'wrong-' + 'x'.repeat(34));
        assertEqual(answer.id, 'discover-Jörg', 'the id of the bridge\'s answer');
        assert(String(answer.error?.message).includes(want), `the bridge's answer does not name the cause: ${JSON.stringify(answer)}`);
      } else {
        assert(msg.includes(want), `the error does not name the cause: ${msg}`);
      }
    }
  } finally {
    await c?.close().catch(() => {});
  }
});

checks.done();

// Shared helpers of the TypeScript client scripts: connecting the official MCP clients to
// talkd (over Streamable HTTP or through `talk mcp` on stdio, in a given protocol era),
// calling tools, reading the answers as the server's contract defines them, and a small
// check runner that runs every check, prints one line each and exits non-zero if any
// failed — so one broken path does not hide the verdict on the others.
//
// Environment (set by test/ts_clients_test.go):
//   TALK_URL    the daemon's base URL, e.g. http://127.0.0.1:PORT
//   TALK_BIN    the path of the talk binary (for the stdio transport)
//   TALK_TOKEN  the bearer token, if any (shared mode)

import { readFileSync, statSync } from 'node:fs';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HTTPV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HTTPV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';

/** The longest wait for one answer: far below the SDKs' 60 s, so a hang fails fast. */
export const callTimeoutMs = 10_000;

/** The 2026-era revision the v2 client can pin; the 2025 era is the clients' default. */
export const rev2026 = '2026-07-28';

/** Parses --key value arguments into an object. */
export function parseArgs(argv = process.argv.slice(2)) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith('--') || i + 1 >= argv.length) {
      throw new Error(`arguments must be --key value pairs, got ${JSON.stringify(argv.slice(i))}`);
    }
    out[argv[i].slice(2)] = argv[i + 1];
  }
  return out;
}

export function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

/**
 * Connects one client. sdk: "v1" | "v2"; transport: "http" | "stdio"; era: "2025" | "2026"
 * (2026 only with v2). token overrides $TALK_TOKEN ("" = none).
 */
export async function connect({ sdk, transport, era, name, token = process.env.TALK_TOKEN ?? '', timeout = callTimeoutMs }) {
  if (era === '2026' && sdk !== 'v2') throw new Error(`the ${sdk} client has no 2026 era`);
  const url = env('TALK_URL');
  const info = { name, version: '1.0.0' };
  const client = sdk === 'v1'
    ? new ClientV1(info, { capabilities: {} })
    : new ClientV2(info, { capabilities: {}, versionNegotiation: { mode: era === '2026' ? { pin: rev2026 } : 'legacy' } });
  let t;
  if (transport === 'http') {
    const headers = token ? { Authorization: `Bearer ${token}` } : {};
    const HTTP = sdk === 'v1' ? HTTPV1 : HTTPV2;
    t = new HTTP(new URL('/mcp', url), { requestInit: { headers } });
  } else if (transport === 'stdio') {
    const Stdio = sdk === 'v1' ? StdioV1 : StdioV2;
    const childEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TALK_URL: url };
    if (token) childEnv.TALK_TOKEN = token;
    // The bridge's log goes to this script's stderr, which the Go test shows on failure.
    t = new Stdio({ command: env('TALK_BIN'), args: ['mcp', '--url', url, '--timeout', '20s'], env: childEnv, stderr: 'inherit' });
  } else {
    throw new Error(`unknown transport ${transport}`);
  }
  client.talkSdk = sdk;
  await client.connect(t, { timeout });
  return client;
}

/** Calls a tool with the short timeout; protocol errors throw, tool errors return. */
export function call(client, name, args) {
  const params = { name, arguments: args };
  // v1 takes (params, resultSchema, options); v2 dropped the schema argument.
  return client.talkSdk === 'v1'
    ? client.callTool(params, undefined, { timeout: callTimeoutMs })
    : client.callTool(params, { timeout: callTimeoutMs });
}

/** The structured answer of a successful call; throws naming the tool otherwise. */
export function ok(res, what) {
  if (res.isError) throw new Error(`${what} failed: ${res.content?.[0]?.text}`);
  if (res.structuredContent === undefined || res.structuredContent === null) {
    throw new Error(`${what}: the success result has no structuredContent`);
  }
  const text = res.content?.[0]?.text;
  if (typeof text !== 'string' || text === '') throw new Error(`${what}: no text copy in content[0]`);
  return res.structuredContent;
}

/**
 * The payload of an error result as the contract defines it: isError, no
 * structuredContent, and content[0].text a JSON object.
 */
export function errorPayload(res, what) {
  if (!res.isError) throw new Error(`${what}: want an error result, got ${JSON.stringify(res).slice(0, 300)}`);
  if (res.structuredContent !== undefined) {
    throw new Error(`${what}: an error result must carry no structuredContent, got ${JSON.stringify(res.structuredContent).slice(0, 200)}`);
  }
  const text = res.content?.[0]?.text;
  let payload;
  try {
    payload = JSON.parse(text);
  } catch {
    throw new Error(`${what}: content[0].text of an error result is not JSON: ${JSON.stringify(text).slice(0, 200)}`);
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    throw new Error(`${what}: content[0].text is not a JSON object: ${text.slice(0, 200)}`);
  }
  return payload;
}

/** Asserts a {"error": code, "message": …} payload whose message contains every want. */
export function assertErrorShape(p, what, ...wants) {
  if (typeof p.error !== 'string' || p.error === '') throw new Error(`${what}: "error" is not a code: ${JSON.stringify(p)}`);
  if (typeof p.message !== 'string' || p.message === '') throw new Error(`${what}: no "message": ${JSON.stringify(p)}`);
  for (const w of wants) {
    if (!p.message.includes(w)) throw new Error(`${what}: message ${JSON.stringify(p.message)} does not say ${JSON.stringify(w)}`);
  }
}

export function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

export function assertEqual(got, want, what) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
}

/** A file's bytes and modification time, to prove a call left it alone. */
export function fileState(path) {
  return { text: readFileSync(path, 'utf8'), mtimeMs: statSync(path).mtimeMs };
}

export function assertUnchanged(path, before, what) {
  const now = fileState(path);
  if (now.text !== before.text || now.mtimeMs !== before.mtimeMs) {
    throw new Error(`${what} touched the plan file (text equal ${now.text === before.text}, mtime ${before.mtimeMs} → ${now.mtimeMs})`);
  }
}

/** Runs checks in order; each gets a name, a pass/fail line, and never stops the rest. */
export class Checks {
  constructor(label) {
    this.label = label;
    this.failed = [];
    this.passed = 0;
  }

  async run(name, fn) {
    const start = Date.now();
    try {
      const v = await fn();
      this.passed++;
      console.log(`ok   [${this.label}] ${name} (${Date.now() - start} ms)`);
      return v;
    } catch (err) {
      this.failed.push(name);
      console.log(`FAIL [${this.label}] ${name} (${Date.now() - start} ms): ${err?.message ?? err}`);
      return undefined;
    }
  }

  /** Prints the totals and sets the exit code. */
  done() {
    console.log(`[${this.label}] ${this.passed} passed, ${this.failed.length} failed${this.failed.length ? ': ' + this.failed.join('; ') : ''}`);
    process.exitCode = this.failed.length ? 1 : 0;
  }
}

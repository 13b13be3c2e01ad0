// What a content-only host's model is handed (issue 30, ../shared/mcp/HOSTS.md): Vercel's
// AI SDK (@ai-sdk/mcp, its toModelOutput) and OpenAI's Agents SDK (@openai/agents, without
// useStructuredContent) pass the model only the text of an answer. A scripted model that
// reads nothing else runs read → write → replay → stale write (conflict) → redo on the
// base the conflict names → operation_get → inspect. Prints one JSON line per step
// ({step, tool, chars}) and exits 1 on the first failure.
//   node hosts.mjs --lib aisdk|openai --url URL --plan KEY --a ID --b ID
import { createMCPClient } from '@ai-sdk/mcp';
import { MCPServerStreamableHttp, mcpToFunctionTool } from '@openai/agents';

const arg = (name) => { const i = process.argv.indexOf(`--${name}`); return i > 0 ? process.argv[i + 1] : undefined; };
const [lib, url, plan, a, b] = ['lib', 'url', 'plan', 'a', 'b'].map(arg);

// call(tool, args) → the text the library hands its model.
let call, close;
if (lib === 'aisdk') {
  const client = await createMCPClient({ transport: { type: 'http', url } });
  const tools = await client.tools();
  call = async (name, args) => {
    const t = tools[name];
    const output = await t.execute(args, { toolCallId: name, messages: [] });
    const seen = await t.toModelOutput({ toolCallId: name, input: args, output });
    if (seen.type !== 'content') throw new Error(`${name}: the model output is ${seen.type}, not content`);
    return seen.value.map((p) => p.text ?? '').join('');
  };
  close = () => client.close();
} else if (lib === 'openai') {
  const server = new MCPServerStreamableHttp({ url, name: 'talk' });
  await server.connect();
  const tools = new Map((await server.listTools()).map((t) => [t.name, mcpToFunctionTool(t, server, false)]));
  call = async (name, args) => {
    const out = await tools.get(name).invoke(undefined, JSON.stringify(args));
    return typeof out === 'string' ? out : Array.isArray(out) ? out.map((p) => p.text ?? '').join('') : out.text ?? JSON.stringify(out);
  };
  close = () => server.close();
} else {
  console.error('--lib aisdk|openai');
  process.exit(2);
}

const baseRe = /\\?"revision\\?":\s*(\d+),\s*\\?"checksum\\?":\s*\\?"([0-9a-f]{64})/;
const baseOf = (text) => {
  const m = baseRe.exec(text);
  if (!m) throw new Error(`no base in what the model was handed: ${text.slice(0, 300)}`);
  return { revision: Number(m[1]), checksum: m[2] };
};
const write = (base, rid, id) => ['werkbaum_set_status', { plan, base, request_id: `${lib}-${rid}`, id, status: 'done' }];

const seen = [];
const step = async (tool, args, check) => {
  const text = await call(tool, args);
  seen.push(text);
  console.log(JSON.stringify({ step: seen.length - 1, tool, chars: [...text].length }));
  if (check && !check(text)) throw new Error(`${tool}: unexpected answer: ${text.slice(0, 400)}`);
  return text;
};
try {
  const read = await step('werkbaum_read', { plan });
  const first = baseOf(read);
  await step(...write(first, '1', a), (t) => t.startsWith('applied'));
  await step(...write(first, '1', a), (t) => t.startsWith('already applied'));
  const conflict = await step(...write(first, '2', b), (t) => t.includes('"conflict"'));
  await step(...write(baseOf(conflict), '3', b), (t) => t.startsWith('applied'));
  await step('operation_get', { plan, request_id: `${lib}-2` }, (t) => t.startsWith('conflict'));
  await step('werkbaum_inspect', { plan }, (t) => t.includes(`#${a} `) || t.includes('more: '));
  await close();
} catch (e) {
  console.error(`FAIL [${lib} ${plan}]: ${e.message}`);
  process.exit(1);
}

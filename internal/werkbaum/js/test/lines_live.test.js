'use strict';
// The live client (test/live/live.js) under Node against a small in-test document server
// that speaks DOCUMENTS.md over real HTTP on 127.0.0.1: shadow copy, PATCH with
// (clientId, seq) and checksum, server-side rebase and opsSinceBase, 409, 422 and reload,
// the long-poll feed and its fromVersion rule, and a PATCH repeated after a dropped answer.
const test = require('node:test');
const assert = require('node:assert');
const http = require('node:http');
const crypto = require('node:crypto');
const path = require('node:path');
const { load } = require('./load.js');

const W = load();
const D = W.doc;
const TalkLive = require(path.join(__dirname, '..', '..', '..', '..', 'test', 'live', 'live.js'));

const ID = '0b5e3c1e-8f4a-4d2a-9c1b-2f6f0e7a9d10';
const BASE = '/api/v1/documents/' + ID;

function sha(text) {
  return 'sha256:' + crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

function plain(x) {
  return JSON.parse(JSON.stringify(x));
}

// docServer is a small document server: versions are kept whole (history[v] is the text
// at v), opsSinceBase is the diff from the submitted base to now, as the contract says.
async function docServer(initial) {
  const s = {
    history: { 1: initial },
    current: 1,
    meta: { 1: { changeType: 'CREATED' } },
    answers: new Map(), // clientId/seq -> [status, body]
    patches: [], // the request bodies, in arrival order
    holdFeed: false, // keep feed answers back until release() (a feed that is late)
    held: [],
    staleFeed: null, // a fabricated feed answer to send once
    dropNext: false, // apply the next PATCH, then drop the connection without an answer
    waiters: []
  };
  s.content = () => s.history[s.current];
  s.release = () => {
    s.holdFeed = false;
    const h = s.held;
    s.held = [];
    for (const f of h) f();
  };
  s.write = (text, displayName, clientId) => {
    s.current++;
    s.history[s.current] = D.normalize(text);
    s.meta[s.current] = { changeType: 'UPDATED', displayName, clientId };
    const ws = s.waiters;
    s.waiters = [];
    for (const w of ws) w();
    return s.current;
  };
  s.edit = (lineIndex, line, displayName) => {
    const ls = D.lines(s.content());
    ls[lineIndex] = line;
    return s.write(ls.join('\n'), displayName || 'Agent', 'mcp-agent');
  };
  function send(res, status, body) {
    res.writeHead(status, { 'Content-Type': status >= 400 && status !== 409 ? 'application/problem+json' : 'application/json' });
    res.end(body === undefined ? '' : JSON.stringify(body));
  }
  function events(from) {
    const out = [];
    for (let v = from + 1; v <= s.current; v++) out.push({ version: v, ...s.meta[v] });
    return out;
  }
  function patch(body) {
    const key = body.clientId + '/' + body.seq;
    if (s.answers.has(key)) return s.answers.get(key);
    let answer;
    try {
      D.validateOps(body.ops);
    } catch (e) {
      return [400, { status: 400, title: 'Bad Request', detail: e.message }];
    }
    const base = s.history[body.baseVersion];
    if (base === undefined) answer = [422, { status: 422, title: 'base version is no longer available' }];
    else if (sha(base) !== body.checksum) answer = [422, { status: 422, title: 'checksum mismatch' }];
    else {
      const since = D.computeOps(base, s.content());
      const r = D.rebase(body.ops, since);
      if (!r.ok) answer = [409, { currentVersion: s.current, opsSinceBase: since }];
      else {
        try {
          const next = D.applyOps(s.content(), r.ops);
          const v = s.write(next, body.displayName, body.clientId);
          answer = [200, { version: v, opsSinceBase: since }];
        } catch (e) {
          answer = [422, { status: 422, title: e.message }];
        }
      }
    }
    s.answers.set(key, answer);
    return answer;
  }
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => { raw += c; });
    req.on('end', () => {
      const u = new URL(req.url, 'http://x');
      if (req.method === 'GET' && u.pathname === BASE) {
        return send(res, 200, { id: ID, title: 'plan', content: s.content(), version: s.current });
      }
      if (req.method === 'PATCH' && u.pathname === BASE + '/content') {
        const body = JSON.parse(raw);
        s.patches.push(body);
        const [status, answer] = patch(body);
        if (s.dropNext) {
          s.dropNext = false;
          return req.socket.destroy();
        }
        return send(res, status, answer);
      }
      if (req.method === 'GET' && u.pathname === BASE + '/changes') {
        const since = +u.searchParams.get('since');
        if (s.staleFeed) {
          const f = s.staleFeed;
          s.staleFeed = null;
          return send(res, 200, f);
        }
        const answer = () => {
          if (s.current <= since) return false;
          const f = { currentVersion: s.current, events: events(since) };
          if (since > 0 && s.history[since] !== undefined) {
            f.fromVersion = since;
            f.ops = D.computeOps(s.history[since], s.content());
          } else f.content = s.content();
          if (s.holdFeed) s.held.push(() => { if (!res.writableEnded) send(res, 200, f); });
          else send(res, 200, f);
          return true;
        };
        if (answer()) return;
        const timer = setTimeout(() => { if (!res.writableEnded) send(res, 204); }, Math.min(+u.searchParams.get('wait') || 25, 2) * 1000);
        const wake = () => {
          if (res.writableEnded) return;
          if (answer()) clearTimeout(timer);
          else s.waiters.push(wake);
        };
        s.waiters.push(wake);
        return;
      }
      send(res, 404, { status: 404, title: 'Not Found' });
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  s.url = 'http://127.0.0.1:' + server.address().port + BASE;
  s.close = () => new Promise((r) => { server.closeAllConnections(); server.close(r); });
  return s;
}

const PLAN = '- [ ] Backend #be @jörg\n- [ ] Frontend #fe @Müller\n- [ ] Docs #docs\n';

async function withClient(fn, name) {
  const srv = await docServer(PLAN);
  const c = TalkLive.create({ doc: D, displayName: name || 'Page', wait: 1 });
  try {
    await fn(srv, c);
  } finally {
    c.close();
    await srv.close();
  }
}

test('live: an edit goes out as a PATCH against the shadow with checksum and (clientId, seq)', () => withClient(async (srv, c) => {
  await c.open(srv.url + '/?x=1#frag');
  assert.strictEqual(c.text(), PLAN);
  await c.edit(1, '- [x] Frontend #fe @Müller');
  assert.strictEqual(srv.content(), '- [ ] Backend #be @jörg\n- [x] Frontend #fe @Müller\n- [ ] Docs #docs\n');
  assert.strictEqual(srv.patches.length, 1);
  const p = srv.patches[0];
  assert.strictEqual(p.baseVersion, 1);
  assert.strictEqual(p.checksum, sha(PLAN));
  assert.strictEqual(p.seq, 1);
  assert.match(p.clientId, /^live-[0-9a-f]{16}$/);
  assert.strictEqual(p.displayName, 'Page');
  assert.deepStrictEqual(plain(p.ops), [{ op: 'replace', index: 1, count: 1, lines: ['- [x] Frontend #fe @Müller'] }]);
  assert.strictEqual(c.state().version, 2);
  assert.strictEqual(c.state().shadow, srv.content());
  await c.edit(2, '- [~] Docs #docs');
  assert.strictEqual(srv.patches[1].seq, 2);
  assert.strictEqual(srv.patches[1].baseVersion, 2);
}));

test('live: a foreign write the page has not seen is rebased by the server; the shadow follows opsSinceBase', () => withClient(async (srv, c) => {
  await c.open(srv.url);
  srv.holdFeed = true;
  srv.edit(0, '- [x] Backend #be @jörg', 'Agent');
  await c.edit(2, '- [x] Docs #docs');
  const want = '- [x] Backend #be @jörg\n- [ ] Frontend #fe @Müller\n- [x] Docs #docs\n';
  assert.strictEqual(srv.content(), want);
  assert.strictEqual(c.text(), want);
  assert.strictEqual(c.state().shadow, want);
  assert.strictEqual(c.state().version, 3);
  assert.strictEqual(c.state().patches[0].status, 200);
  // The agent's version reached the page through opsSinceBase; the late feed answer
  // for it is skipped as not newer, but still names the writer.
  srv.release();
  await c.until(() => c.events().some((e) => e.displayName === 'Agent' && e.version === 2), 5000);
  // The next PATCH's checksum matches the server's text: the shadow is exact.
  await c.edit(1, '- [!] Frontend #fe @Müller');
  assert.strictEqual(c.state().patches[1].status, 200);
  assert.strictEqual(srv.patches[1].checksum, sha(want));
}));

test('live: two inserts at one index come out in the server order', () => withClient(async (srv, c) => {
  await c.open(srv.url);
  srv.holdFeed = true;
  const ls = D.lines(PLAN);
  ls.splice(1, 0, '- [ ] Agent line');
  srv.write(ls.join('\n'), 'Agent', 'mcp-agent');
  await c.insert(1, '- [ ] Page line');
  assert.strictEqual(c.text(), srv.content());
  assert.deepStrictEqual(plain(D.lines(srv.content()).slice(1, 3)), ['- [ ] Agent line', '- [ ] Page line']);
}));

test('live: overlapping writes give a 409; the page takes the other writer\'s line and stays in sync', () => withClient(async (srv, c) => {
  await c.open(srv.url);
  srv.holdFeed = true;
  srv.edit(1, '- [x] Frontend #fe @Müller', 'Agent');
  await c.edit(1, '- [!] Frontend #fe @Müller');
  assert.strictEqual(c.state().patches[0].status, 409);
  assert.strictEqual(c.state().conflicts, 1);
  assert.strictEqual(c.text(), srv.content());
  assert.strictEqual(c.state().pending, false);
  assert.strictEqual(srv.content(), '- [ ] Backend #be @jörg\n- [x] Frontend #fe @Müller\n- [ ] Docs #docs\n');
  assert.strictEqual(srv.patches.length, 1, 'nothing left to send after the conflict');
}));

test('live: the feed brings other writers\' changes with their display name', () => withClient(async (srv, c) => {
  await c.open(srv.url);
  srv.edit(2, '- [x] Docs #docs', 'Claude');
  await c.until(() => c.text().indexOf('- [x] Docs') >= 0, 5000);
  assert.strictEqual(c.state().version, 2);
  assert.ok(c.events().some((e) => e.displayName === 'Claude' && e.version === 2), JSON.stringify(c.events()));
  srv.edit(0, '- [x] Backend #be @jörg', 'Claude');
  await c.until(() => c.state().version === 3, 5000);
  assert.strictEqual(c.text(), srv.content());
}));

test('live: a feed answer not from the shadow version, or not newer, is skipped', () => withClient(async (srv, c) => {
  srv.staleFeed = { fromVersion: 7, currentVersion: 9, ops: [{ op: 'delete', index: 0, count: 1 }], events: [] };
  await c.open(srv.url);
  await c.until(() => c.state().log.some((l) => /from version 7 skipped/.test(l)), 5000);
  assert.strictEqual(c.text(), PLAN);
  assert.strictEqual(c.state().version, 1);
  srv.staleFeed = { currentVersion: 1, content: 'nothing\n', events: [] };
  await c.until(() => c.state().log.some((l) => /version 1 skipped: not newer/.test(l)), 5000);
  assert.strictEqual(c.text(), PLAN);
  // A real change still arrives afterwards.
  srv.edit(0, '- [x] Backend #be @jörg', 'Agent');
  await c.until(() => c.state().version === 2, 5000);
  assert.strictEqual(c.text(), srv.content());
}));

test('live: a compacted base gives a 422; the page reloads and its change still lands', () => withClient(async (srv, c) => {
  await c.open(srv.url);
  srv.holdFeed = true;
  srv.edit(0, '- [x] Backend #be @jörg', 'Agent');
  delete srv.history[1]; // compacted
  await c.edit(2, '- [x] Docs #docs');
  const st = c.state();
  assert.deepStrictEqual(st.patches.map((p) => p.status), [422, 200]);
  assert.strictEqual(srv.content(), '- [x] Backend #be @jörg\n- [ ] Frontend #fe @Müller\n- [x] Docs #docs\n');
  assert.strictEqual(c.text(), srv.content());
}));

test('live: a PATCH whose answer was lost is sent again with the same seq and applied once', () => withClient(async (srv, c) => {
  await c.open(srv.url);
  srv.dropNext = true;
  await c.edit(0, '- [x] Backend #be @jörg');
  assert.strictEqual(srv.patches.length, 2);
  assert.strictEqual(srv.patches[0].seq, srv.patches[1].seq);
  assert.strictEqual(srv.current, 2, 'applied once');
  assert.strictEqual(c.text(), srv.content());
  assert.strictEqual(c.state().version, 2);
}));

test('live: document links are unwrapped as DOCUMENTS.md says', () => {
  const u = 'https://h.example/api/v1/documents/' + ID;
  assert.strictEqual(TalkLive.documentURL(u + '/?a=1#b'), u);
  assert.strictEqual(TalkLive.documentURL('https://editor.example/?live=' + encodeURIComponent(u)), u);
  assert.throws(() => TalkLive.documentURL('ftp://x/documents/1'), /not an http/);
});

'use strict';
// The write path's shortcuts, each held to its plain path on generated edits:
// * a host's one-row edits (60_edit.js replaceRow; the Go engine's edit.go spliceHost and
//   spliceRow, mirrored here) give the text the script builds itself;
// * the guard's status-edit count of nodes newly in production (70_guard.js newlyProd)
//   equals the plain count over both documents;
// * the path of a status edit taken from the old analysis (30_path.js pathAfterEdit)
//   equals the full search and finish, and the analysis the plain one (edit_chain.js).
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { load, examples } = require('./load.js');
const { rng, randomPlan, richPlan, bigPlan, coupledRandomPlan, chainPlan } = require('./gen.js');
const editChainSame = require('./edit_chain.js');

const W = load();
const plain = (x) => JSON.parse(JSON.stringify(x));

// spliceRow is the Go host's spliceRow: rows split at LF after one leading BOM.
function spliceRow(text, row, content) {
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (let k = 0; k < row; k++) {
    const nl = text.indexOf('\n', start);
    assert.ok(nl >= 0, 'row ' + row + ' is past the text');
    start = nl + 1;
  }
  let end = text.indexOf('\n', start);
  if (end < 0) end = text.length;
  return text.slice(0, start) + content + text.slice(end);
}

const STATUSES = ['done', 'progress', 'planned', 'idea', 'highrisk', 'skeleton', 'discarded', 'prod', 'prod', null];
const SIZES = ['XS', 'S', 'M', 'L', 'XL', 'XXL', null];

// plans are the texts the tests edit: the shared examples, generated plans, and plans
// whose nodes share labels without ids (the production count goes by label then), with a
// BOM, CRLF, astral characters and no final line break.
function plans() {
  const out = [];
  const shared = examples();
  if (!shared.skip) {
    for (const f of fs.readdirSync(shared.dir).filter((f) => f.endsWith('.werkbaum'))) {
      out.push([f, fs.readFileSync(path.join(shared.dir, f), 'utf8')]);
    }
  }
  out.push(['bigPlan', bigPlan(300, 5)]);
  for (let seed = 1; seed <= 30; seed++) out.push(['randomPlan ' + seed, randomPlan(seed, 50)]);
  for (let seed = 1; seed <= 30; seed++) out.push(['richPlan ' + seed, richPlan(seed, 10 + (seed % 40))]);
  out.push(['same labels', '- [^] x\n- [ ] x\n  - [ ] y\n  - [^] y\n- [ ] x\n- [ ] y #y1\n- [^] y #y1\n']);
  out.push(['bom', '\ufeff- [ ] A #a (S)\n  - [x] A1 (M) @jörg\n- [?] B #b\n']);
  out.push(['no final break', '- [ ] A #a (S)\n  - [x] Müller (M)\n- [?] B 😀 #b']);
  out.push(['astral', '- [ ] 𝒜 #a\n  - [ ] 😀 child (S) @zoë\n  - [^] 😀 child (S)\n']);
  out.push(['crlf', '\ufeff- [ ] A #a (S)\r\n  - [x] A1 (M)\r\n- [?] B #b\r\n']);
  out.push(['cr', '- [ ] A #a\r  - [ ] A1\r- [ ] B\r']);
  return out;
}

// hostOf is a host as the Go engine makes it (edit.go spliceHost) for text.
function hostOf(text, used) {
  return {
    owns: (t) => t === text && text.indexOf('\r') < 0,
    splice: (row, content) => {
      used.n++;
      return spliceRow(text, row, content);
    }
  };
}

test('a host\'s one-row edits give the text the script builds', () => {
  const counts = { hosted: 0, plain: 0, unchanged: 0 };
  for (const [what, text] of plans()) {
    const doc = W._parseFresh(text);
    const r = rng(text.length);
    for (let k = 0; k < 40 && doc.all.length; k++) {
      const n = doc.all[Math.floor(r() * doc.all.length)];
      const size = r() < 0.3;
      const verb = size ? 'setSize' : 'setStatus';
      const args = size ? { id: 'line:' + n.line, size: SIZES[Math.floor(r() * SIZES.length)] }
        : { id: 'line:' + n.line, status: STATUSES[Math.floor(r() * STATUSES.length)] };
      let want;
      try {
        want = W.edit.apply(text, verb, args);
      } catch (e) {
        assert.ok(e.werkbaumCode, what + ': ' + e.message);
        assert.throws(() => W.edit.apply(text, verb, args, hostOf(text, { n: 0 })), { message: e.message });
        continue;
      }
      const used = { n: 0 };
      assert.strictEqual(W.edit.apply(text, verb, args, hostOf(text, used)), want, what + ': ' + verb + ' of line ' + n.line);
      if (want === text) counts.unchanged++;
      else if (used.n) counts.hosted++;
      else counts.plain++;
    }
  }
  // A host is asked only about its own text: the verbs that rewrite more build it here.
  const t = '- [ ] A #a\n- [ ] B #b\n';
  const used = { n: 0 };
  assert.strictEqual(W.edit.apply(t, 'addNode', { line: '- C' }, hostOf(t, used)), '- [ ] A #a\n- [ ] B #b\n- C\n');
  assert.strictEqual(used.n, 0);
  assert.ok(counts.hosted > 1000 && counts.plain > 20 && counts.unchanged > 50, JSON.stringify(counts));
});

test('the guard\'s count of nodes newly in production equals the plain count on status edits', () => {
  const counts = { fast: 0, newlyProd: 0, notTheEdited: 0 };
  try {
    for (const [what, text] of plans()) {
      const doc = W._parseFresh(text);
      const r = rng(text.length + 1);
      for (let k = 0; k < 40 && doc.all.length; k++) {
        const n = doc.all[Math.floor(r() * doc.all.length)];
        let out;
        try {
          out = W.edit.setStatus(text, 'line:' + n.line, STATUSES[Math.floor(r() * STATUSES.length)]);
        } catch (e) {
          continue;
        }
        const origin = W._boxEditOrigin(W.parse(out));
        if (origin !== null && origin.from === W.parse(text)) counts.fast++;
        W._guardBoxEdit(true);
        const fast = plain(W.guard(text, out, {}));
        W._guardBoxEdit(false);
        const full = plain(W.guard(text, out, {}));
        assert.deepStrictEqual(fast, full, what + ': status edit of line ' + n.line);
        if (full.refused && full.refused.switch === 'allowProd') {
          counts.newlyProd++;
          if (full.refused.lines[0] !== n.line) counts.notTheEdited++;
        }
      }
    }
  } finally {
    W._guardBoxEdit(true);
  }
  assert.ok(counts.fast > 1000 && counts.newlyProd > 100 && counts.notTheEdited > 0, JSON.stringify(counts));
});

// named gives a plan's assignees non-ASCII names (the loads are keyed by them).
function named(text) {
  return text.replace(/@bo\b/g, '@jörg').replace(/@cy\b/g, '@Müller');
}

test('the model and path of a status edit taken from the old ones equal the full ones', () => {
  const counts = { fast: 0, full: 0, analyses: 0, models: 0, relinked: 0, hidden: 0 };
  const run = (what, text, seed, edits) => {
    const got = editChainSame(W, text, seed, edits);
    assert.deepStrictEqual(got.differ, [], what);
    counts.fast += got.fast;
    counts.full += got.full;
    for (const k of ['analyses', 'models', 'relinked', 'hidden']) counts[k] += got[k];
  };
  for (const [what, text] of plans()) run(what, named(text), text.length, 40);
  for (let seed = 1; seed <= 40; seed++) run('coupledRandomPlan ' + seed, named(coupledRandomPlan(seed)), seed, 30);
  for (let seed = 1; seed <= 10; seed++) run('chainPlan ' + seed, chainPlan(seed, 4 + (seed % 6), 2), seed, 30);
  run('bigPlan', named(bigPlan(2000, 9)), 9, 60);
  // Just too many assignments (§20 step 7: the local choices); edits that take options
  // out of pools or couplings make the search exact, or approximate again.
  for (const [k, seed] of [[19, 1], [19, 3], [20, 1], [20, 3]]) run('chainPlan ' + k + ' seed ' + seed, chainPlan(seed, k, 1), seed, 80);
  assert.ok(counts.fast > 1000 && counts.full > 300 && counts.analyses > 300, JSON.stringify(counts));
  assert.ok(counts.models > 2000 && counts.relinked > 300 && counts.hidden > 100, JSON.stringify(counts));
});

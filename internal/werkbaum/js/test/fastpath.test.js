'use strict';
// The parser reads common lines with one regexp (FAST_RE in 10_parse.js) and everything
// else with the general token extraction. Both paths must give the same document: these
// tests parse every example, every case plan and many generated lines both ways.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { load, examples } = require('./load.js');
const { rng, bigPlan, randomPlan, richPlan, coupledRandomPlan } = require('./gen.js');

const W = load();
const view = require('./equiv_view.js');

function both(text) {
  W._fastParse(false);
  let slow;
  try {
    slow = JSON.stringify(W._parseFresh(text));
  } finally {
    W._fastParse(true);
  }
  return { fast: JSON.stringify(W._parseFresh(text)), slow };
}

function assertSame(text, what) {
  const r = both(text);
  if (r.fast !== r.slow) assert.strictEqual(r.fast, r.slow, what + ': ' + JSON.stringify(text).slice(0, 400));
}

const shared = examples();
test('fast and general path agree on the shared examples', { skip: shared.skip }, () => {
  let n = 0;
  for (const f of fs.readdirSync(shared.dir).filter((f) => f.endsWith('.werkbaum'))) {
    assertSame(fs.readFileSync(path.join(shared.dir, f), 'utf8'), f);
    n++;
  }
  assert.ok(n >= 6, 'too few examples compared: ' + n);
});

test('fast and general path agree on the case plans', () => {
  let n = 0;
  const cases = path.join(__dirname, '..', '..', 'testdata', 'cases');
  for (const f of fs.readdirSync(cases).filter((f) => f.endsWith('.json'))) {
    const data = JSON.parse(fs.readFileSync(path.join(cases, f), 'utf8'));
    for (const c of Array.isArray(data) ? data : []) {
      if (Array.isArray(c.lines)) {
        assertSame(c.lines.join('\n'), f + ' ' + c.name);
        n++;
      }
    }
  }
  assert.ok(n > 50, 'too few plans compared: ' + n);
});

test('fast and general path agree on generated plans', () => {
  assertSame(bigPlan(500, 3), 'bigPlan');
  for (let seed = 1; seed <= 40; seed++) assertSame(randomPlan(seed, 60), 'randomPlan ' + seed);
});

test('fast and general path agree on generated lines full of near-tokens', () => {
  const r = rng(7);
  const parts = [' ', '  ', '\t', '-', '+', '|', '=', '= ', '[x]', '[ ]', '[X]', '[k]', '[]', '[ab]', '>', '< ', '"', '" ',
    'Task', 'a:', ':', ':b', 'x/y', 'http://h.x/p', '#id', '#id:', '#a.b-c_d', '#ü', '(M)', '(XS)', '(xl)', '(m)', '(Q)',
    '@bo', '@bo,', '@jörg', '&k', '&taiga.x', ':#a', ':#a,#b', ':#a,', '!!!', '!', '%%', '%% c', '%', '\\', '\u00a0',
    '\u3000', '\u2028', 'é', '😀', '---', ')', '(', ',', '#', '@', '&', '\v', 'US-1', '#US-12', '#T-3:',
    ' @jörg', ' @Müller', ' #prüf', ' &qualität', ' :#Łódź', 'e\u0301', '\ud835\udc00', '\u00a0', 'ß', '中文', '\ud800', '\udc00'];
  for (let k = 0; k < 3000; k++) {
    const lines = [];
    const count = 1 + Math.floor(r() * 6);
    for (let j = 0; j < count; j++) {
      let s = '';
      const n = Math.floor(r() * 9);
      for (let q = 0; q < n; q++) s += parts[Math.floor(r() * parts.length)];
      lines.push(s);
    }
    assertSame(lines.join('\n'), 'generated');
  }
});

test('fold marks before and after the box read alike on both paths', () => {
  // The fast path reads fold marks since issue 33 (they took the general path before); the
  // first mark counts when there are two, and a mark needs a blank after it.
  const lines = ['- [x] > Review split Test #t15 @jörg', '> [ ] < Straße @Müller (M)', '- < [x] > Größe klären',
    '- > > Ä', '= < [x] label', '  | > [~] > Größe @Łukasz &ops', '->[x] a', '- [x]> a #id (XL)', '- >\tTab',
    '- >', '>label', '- [x] >label', '< a', '  + > #g1: Part :#db', '- [!] <  two  blanks', '- > [x]'];
  for (const line of lines) assertSame('[ ] Root\n  ' + line + '\n', line);
  assertSame(lines.join('\n'), 'all fold lines');
});

test('URLs in the tail read alike on both paths', () => {
  // The fast path reads a URL among the tail tokens since issue 33; whatever the URL holds
  // ((M), &k, @x, #y) is the URL's, only the first URL counts, and `%%` or `\\` end it.
  const lines = ['- [ ] Rechnung fix @ann https://example.org/t/4?a=1&b=(M)', '- Export (S) HTTPS://ex.org/(XL)@x#y',
    '- a https://x https://y', '- a https://x%%c', '- a https://x%20y', '- a https://x\\', '  more', '- a https://x (M) @jörg',
    '- a http://', '- a https://x&k @Müller :#a,#b', '- a Http://x #id (XL) &k', '- a https://x  (M)  %% note',
    '- [x] > b https://x :#a', '- a https://x\u00a0y', '- a ftp://x', '- a https://x"q"'];
  for (const line of lines) assertSame('[ ] Root #a\n  ' + line + '\n', line);
  assertSame(lines.join('\n'), 'all URL lines');
});

test('a second #token in the tail stays in the label on both paths, and counts as a ticket ref', () => {
  // The fast path keeps a second free-standing #token in the label since issue 33 (the
  // line took the general path before); the label then may hold a ticket ref (#US-…), which
  // the model finds only when the node is not marked as having a plain label.
  const lines = ['- X #t6 #US-545 (M)', '- X #a @bo #b: &k #US-2', '- #lead: X #US-7', '- X #a #b:', '- X (M) #a #a',
    '- Größe #prüf1 #US-3 @jörg :#a', '- [x] > Straße #t1 #T-9 #US-1 @Müller', '- X :#a #a #b %% c'];
  const all = lines.join('\n') + '\n';
  for (const line of lines) assertSame('[ ] Root #a\n  ' + line + '\n', line);
  assertSame(all, 'all lines with a second #token');
  const views = [];
  for (const fast of [true, false]) {
    W._fastParse(fast);
    try {
      W._clearMemo();
      views.push(JSON.stringify(W.inspect('[ ] Root #a\n' + all, {})));
    } finally {
      W._fastParse(true);
    }
  }
  assert.strictEqual(views[0], views[1]);
  assert.ok(views[0].includes('"ticketRef":"US-545"'), 'the label\'s ticket ref is found');
});

test('labels with astral characters and lone surrogates: the fast path reads them, like the general one', () => {
  // FAST_RE runs under the `u` flag, where a class takes an astral character whole: the
  // label's classes must accept it as they accepted its two halves, and a lone half (not
  // valid UTF-16, so goja cannot convert the line to UTF-8) must read the same too.
  const lines = ['- [ ] Ship 🚀 now (S) @jörg', '  | [x] Lone \ud800 half (M) &k', '  | [~] Other \udc00 half @Müller :#x',
    '  " note with 😀 and \ud83d', '- [ ] 😀 (XS)', '- [?] 𝐀 #id1 @𝐀x'];
  const text = lines.join('\n');
  assertSame(text, 'astral labels');
  const doc = W._parseFresh(text);
  assert.deepStrictEqual(Array.from(doc.all, (n) => n.label), ['Ship 🚀 now', 'Lone \ud800 half', 'Other \udc00 half', '😀', '𝐀']);
  // _plainLabel is set by the fast path's shapes only: it read these lines.
  assert.deepStrictEqual(Array.from(doc.all, (n) => n._plainLabel), [true, true, true, true, false]);
  assert.strictEqual(doc.all[2].desc, 'note with 😀 and \ud83d');
});

test('nodes that share a shape read like nodes that own their fields, across parses', () => {
  // More distinct shapes (indentation, gate, box, size, tag) than the table keeps, so it
  // starts afresh during the parse; every document is parsed again after the others.
  const boxes = ['', '[ ] ', '[x] ', '[X] ', '[k] ', '[~] '];
  const gates = ['', '- ', '| ', '+ ', '= '];
  const sizes = ['', ' (S)', ' (XL)'];
  const docs = [];
  for (let d = 0; d < 3; d++) {
    const lines = ['Root (XXL)'];
    for (let k = 0; k < W._shapeTableSize + 400; k++) {
      lines.push('  '.repeat(1 + (k % 41)) + gates[k % 5] + boxes[(k + d) % 6] + 'Item ' + k + sizes[k % 3] + (k % 7 ? ' @p' + (k % 97) : '') +
        (k % 11 ? '' : ' &mark' + k) + (k % 13 ? '' : ' :#i' + (k - 1)) + (k % 4 ? '' : ' #i' + k));
    }
    docs.push(lines.join('\n'));
  }
  const first = docs.map((t) => both(t));
  for (let d = 0; d < docs.length; d++) {
    assert.strictEqual(first[d].fast, first[d].slow, 'document ' + d);
    assert.strictEqual(both(docs[d]).fast, first[d].fast, 'document ' + d + ' parsed again');
  }
  const doc = W._parseFresh(docs[0]);
  const combos = new Set(docs[0].split('\n').slice(1).map((l) => l.replace(/Item \d+/, '').replace(/ [&:#].*$/, '')));
  assert.ok(combos.size > W._shapeTableSize, combos.size + ' combinations, more than the shape table holds');
  const k9 = doc.all[10]; // "  = [X] Item 9 @p9": gate, box and tag come from its shape
  assert.strictEqual(k9.label, 'Item 9');
  assert.strictEqual(k9.gate, '=');
  assert.strictEqual(k9.type, 'xor');
  assert.strictEqual(k9.status.key, 'done');
  assert.strictEqual(k9.box, 'X');
  assert.strictEqual(k9.indent, '  '.repeat(10));
  assert.strictEqual(k9.size, null);
  assert.deepStrictEqual(Array.from(k9.tags), ['p9']);
  let unknown = 0;
  for (let k = 0; k < W._shapeTableSize + 400; k++) if (k % 6 === 4) unknown++;
  assert.strictEqual(doc.warnings.filter((w) => w.type === 'unknownStatus').length, unknown);
});

test('tail tokens after a shape change the node, never the shape', () => {
  const doc = W._parseFresh('- [x] A (S) @bo\n- [x] B (S) @bo @cy &k :#a #b\n- [x] C (S) @bo\n- [x] D (S) @bo (M)');
  const tags = Array.from(doc.all, (n) => Array.from(n.tags).join(','));
  assert.deepStrictEqual(tags, ['bo', 'bo,cy', 'bo', 'bo']);
  assert.deepStrictEqual(Array.from(doc.all[1].marks), ['k']);
  assert.deepStrictEqual(Array.from(doc.all[1].deps), ['a']);
  assert.strictEqual(doc.all[1].id, 'b');
  // Two sizes: only the last counts and the first stays in the label (general path).
  assert.strictEqual(doc.all[3].size, 'M');
  assert.strictEqual(doc.all[3].label, 'D (S)');
  assert.strictEqual(doc.all[2].size, 'S');
});

test('a size read from the tail counts in the size conflict rule', () => {
  // "(S)" comes after the tag, so the tail reads it: the node's shape has no size.
  const doc = W._parseFresh('A (XS)\n  - B @bo (S)\n  - C @bo (S)');
  assert.strictEqual(doc.all[1].size, 'S');
  assert.deepStrictEqual(Array.from(doc.warnings, (w) => w.type), ['sizeConflict']);
});

test('shapes outlive a parse and go with the memo', () => {
  const text = '- [x] A (S) @bo';
  const proto = (t) => Object.getPrototypeOf(W._parseFresh(t).all[0]);
  const first = proto(text);
  assert.strictEqual(proto(text), first, 'the next parse reuses the shape');
  W._clearMemo(); // what the host's idle trim calls
  assert.notStrictEqual(proto(text), first, 'after the trim the shape is made again');
});

test('prefixes without a shape count towards the table bound', () => {
  const text = '- [x] A (S) @bo';
  const proto = (t) => Object.getPrototypeOf(W._parseFresh(t).all[0]);
  const first = proto(text);
  // More distinct prefixes (box characters) than the table holds, on lines with two ids:
  // the regexp matches, the line takes the general path, and no shape is made for it.
  const lines = [];
  for (let k = 0; k < W._shapeTableSize + 50; k++) lines.push('[' + String.fromCharCode(0x100 + k) + '] #a' + k + ' X #b' + k);
  W._parseFresh(lines.join('\n'));
  assert.notStrictEqual(proto(text), first, 'the table started afresh');
});

test('a parse with more combinations than the table holds keeps its shapes to the end', () => {
  // More distinct prefixes than the table holds between two lines of one combination: the
  // table fills up during the parse but does not start afresh there (it used to, and a real
  // plan with thousands of combinations then made a new shape for nearly every line).
  const n = W._shapeTableSize + 50;
  const lines = ['- [x] A (S) @bo'];
  for (let k = 0; k < n; k++) lines.push('[' + String.fromCharCode(0x100 + k) + '] X' + k);
  lines.push('- [x] Z (S) @bo');
  const text = lines.join('\n');
  const doc = W._parseFresh(text);
  const first = doc.all[0];
  const last = doc.all[doc.all.length - 1];
  assert.strictEqual(Object.getPrototypeOf(last), Object.getPrototypeOf(first), 'one shape for both ends');
  const own = (node) => Object.prototype.hasOwnProperty.call(node, '_sizeMin');
  assert.strictEqual(own(first), false, 'the first combination is shaped');
  assert.strictEqual(own(doc.all[n - 10]), true, 'a combination beyond the bound owns its fields');
  assert.strictEqual(doc.all[n - 10].box, String.fromCharCode(0x100 + n - 11));
  assertSame(text, 'beyond the shape table');
});

// The parse of a status edit (parseBoxEdit in 10_parse.js) makes the edited text's
// document from the old one. It must equal the full parse of the new text in every field
// of every node (children as indices), the internal ones the model reads included, in
// every warning, id and root.
function canonical(d) {
  const rep = (k, v) => (k === 'children' ? Array.from(v, (c) => c.index) : v);
  const parts = [JSON.stringify(d.lines), JSON.stringify(d.warnings), JSON.stringify(d.descBlocks), String(d.separatorLine),
    JSON.stringify(Array.from(d.roots, (r) => r.index))];
  const ids = [];
  for (const id in d.byId) ids.push(id); // for-in: a status edit's map is layered (byIdWith)
  for (const id of ids.sort()) parts.push(id + '=' + d.byId[id].index);
  for (const n of d.all) parts.push(JSON.stringify(n, rep) + ' ' + n._sizeMin + ' ' + n._plainLabel + ' ' + n._box);
  return parts.join('\n');
}

function boxEdits(text, what, seed, counts) {
  const doc = W._parseFresh(text);
  const r = rng(seed);
  const statuses = ['done', 'progress', 'planned', 'idea', 'highrisk', 'blocked', 'discarded', 'review', null];
  const types = (d) => Array.from(d.warnings, (w) => w.type + ':' + w.line).sort().join();
  for (let k = 0; k < 30 && doc.all.length; k++) {
    const n = doc.all[Math.floor(r() * doc.all.length)];
    let out;
    try {
      out = W.edit.setStatus(text, 'line:' + n.line, statuses[Math.floor(r() * statuses.length)]);
    } catch (e) {
      counts.refused++; // a verb's refusal (e.g. a node line split by a continuation)
      continue;
    }
    if (out === text) continue;
    const patched = W._parseBoxEditFresh(text, out, n.index);
    const full = W._parseFresh(out);
    // The document setStatus made of its result (told its new line when the text has no
    // CR: parseBoxEdit's newLine) is the one W.parse remembers.
    const made = W.parse(out);
    if (made !== full) {
      counts.viaEdit++;
      const m = canonical(made);
      const f = canonical(full);
      if (m !== f) assert.strictEqual(m, f, what + ': the verb\'s parse of the status edit of line ' + n.line);
    }
    if (patched === null) {
      counts.full++;
      continue;
    }
    counts.patched++;
    if (types(doc) !== types(full)) counts.warningsChanged++;
    const a = canonical(patched);
    const b = canonical(full);
    if (a !== b) assert.strictEqual(a, b, what + ': status edit of line ' + n.line);
    // The model of the edit from the old model (modelBoxEdit) equals the full model.
    const inc = W._modelBoxEdit(W._model(doc, {}), patched, n.index);
    if (inc === null) {
      counts.fullModel++;
      continue;
    }
    counts.incModel++;
    assert.deepStrictEqual(view(W, out, false, inc), view(W, out, false, W._model(full, {})),
      what + ': model of the status edit of line ' + n.line);
  }
}

test('the parse of a status edit equals the full parse of the edited text', () => {
  const counts = { patched: 0, full: 0, refused: 0, warningsChanged: 0, incModel: 0, fullModel: 0, viaEdit: 0 };
  const shared = examples();
  if (!shared.skip) {
    for (const f of fs.readdirSync(shared.dir).filter((f) => f.endsWith('.werkbaum'))) {
      boxEdits(fs.readFileSync(path.join(shared.dir, f), 'utf8'), f, 3, counts);
    }
  }
  const cases = path.join(__dirname, '..', '..', 'testdata', 'cases');
  for (const f of fs.readdirSync(cases).filter((f) => f.endsWith('.json'))) {
    const data = JSON.parse(fs.readFileSync(path.join(cases, f), 'utf8'));
    for (const c of Array.isArray(data) ? data : []) {
      if (Array.isArray(c.lines)) boxEdits(c.lines.join('\n'), f + ' ' + c.name, 5, counts);
    }
  }
  boxEdits(bigPlan(500, 3), 'bigPlan', 7, counts);
  for (let seed = 1; seed <= 40; seed++) boxEdits(randomPlan(seed, 60), 'randomPlan ' + seed, seed, counts);
  // Every input the model reads (discarded roots, optional started nodes, dependencies,
  // coupled choice groups): what the model of an edit takes from the old model.
  for (let seed = 1; seed <= 60; seed++) boxEdits(richPlan(seed, 10 + (seed % 50)), 'richPlan ' + seed, seed, counts);
  for (let seed = 1; seed <= 30; seed++) boxEdits(coupledRandomPlan(seed), 'coupledRandomPlan ' + seed, seed, counts);
  // Status changes that flip xor and size conflicts and drop an unknown box's warning.
  boxEdits('= [x] A #a (S)\n  - [ ] A1 (M)\n  - [q] A2 (L)\n= [/] B #b\n= [X] C\n', 'xor', 11, counts);
  boxEdits('[ ] Root (S)\n  - [ ] a (M)\n  - [ ] b (M)\n  | [ ] c (XS)\n  | [-] d (L)\n---\n#a\n  text\n', 'sizes', 13, counts);
  boxEdits('- [?] top #t :#missing\n  = [x] x1\n  = [/] x2\n  = [ ] x3\n  + [!] opt (S)\n- [ ] t2 (L) @jörg &mark\n  - [~] Müller (XL)\n  - [k] y (XL)\n',
    'mixed', 17, counts);
  // Line endings and a byte order mark: the rows keep theirs, the document is the same.
  boxEdits('\ufeff- [ ] A #a (S)\r\n  - [x] A1 (M)\r\n- [?] B #b\r\n', 'crlf', 19, counts);
  boxEdits('- [ ] A #a\r  - [ ] A1\r- [ ] B\r', 'cr', 23, counts);
  assert.ok(counts.patched > 500 && counts.viaEdit > 500, JSON.stringify(counts));
  assert.ok(counts.warningsChanged > 20, 'too few edits changed the warnings: ' + JSON.stringify(counts));
  assert.ok(counts.incModel > 400, 'too few edits took the model from the old one: ' + JSON.stringify(counts));
});

test('a status edit that is not one box of one line is parsed in full', () => {
  const text = '- [ ] A #a\n- [ ] B #b\n';
  const doc = W._parseFresh(text);
  // Another line changed too, a label changed, a line added: not a box edit.
  assert.strictEqual(W._parseBoxEditFresh(text, '- [x] A #a\n- [x] B #b\n', 0), null);
  assert.strictEqual(W._parseBoxEditFresh(text, '- [x] A2 #a\n- [ ] B #b\n', 0), null);
  assert.strictEqual(W._parseBoxEditFresh(text, '- [x] A #a\n- [ ] B #b\n- C\n', 0), null);
  // An unknown box is no status edit either.
  assert.strictEqual(W._parseBoxEditFresh(text, '- [q] A #a\n- [ ] B #b\n', 0), null);
  const old = W.parse(text);
  const ok = W.parseBoxEdit(text, '- [x] A #a\n- [ ] B #b\n', 0);
  assert.strictEqual(ok.all[0].status.key, 'done');
  assert.strictEqual(old.all[0].status.key, 'planned', 'the old document is not changed');
  assert.strictEqual(ok.all[1], old.all[1], 'an untouched node is shared');
  assert.strictEqual(W.parse('- [x] A #a\n- [ ] B #b\n'), ok, 'the edited document is memoised');
  assert.strictEqual(doc.all.length, 2);
});

test('the analysis of a status edit starts from the old analysis and equals the full one', () => {
  const text = richPlan(7, 40);
  const before = W._compute(text, {});
  const n = before.doc.all.find((x) => x.children.length && x.status === null && !x.optional);
  assert.ok(n, 'the plan has a parent without a box');
  const out = W.edit.setStatus(text, 'line:' + n.line, 'done');
  const after = W._compute(out, {});
  assert.strictEqual(after.m.inView, before.m.inView, 'the edit\'s model shares the old model\'s view');
  assert.strictEqual(after.m.all[n.index].status.key, 'done');
  const fromOld = JSON.stringify(W.analyze(out, {}));
  W._boxEditModel(false);
  W._clearMemo();
  try {
    const full = W._compute(out, {});
    assert.notStrictEqual(full.m.inView, before.m.inView);
    assert.strictEqual(JSON.stringify(W.analyze(out, {})), fromOld);
  } finally {
    W._boxEditModel(true);
  }
});

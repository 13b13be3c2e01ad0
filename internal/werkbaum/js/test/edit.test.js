'use strict';
// Edit verbs under Node. The cases in testdata/edit/cases.json are shared with the Go engine
// test (edit_test.go), so both engines are held to the same expected texts.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { load } = require('./load.js');
const { randomPlan } = require('./gen.js');

const W = load();
const cases = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'testdata', 'edit', 'cases.json'), 'utf8'));

// rawLines splits text into physical lines WITH their line endings (byte-exact pieces).
function rawLines(text) {
  const out = [];
  const re = /[^\r\n]*(?:\r\n|\r|\n)/g;
  let m;
  let end = 0;
  while ((m = re.exec(text)) !== null && m[0] !== '') {
    out.push(m[0]);
    end = re.lastIndex;
  }
  out.push(text.slice(end));
  return out;
}

// assertUntouched checks that every old line outside `owns` (1-based) survives byte for
// byte, ending included, and in order, in the new text.
function assertUntouched(before, after, owns, name) {
  const own = new Set(owns);
  const olds = rawLines(before);
  const news = rawLines(after);
  let j = 0;
  for (let i = 0; i < olds.length; i++) {
    if (own.has(i + 1)) continue;
    while (j < news.length && news[j] !== olds[i]) j++;
    assert.ok(j < news.length, `${name}: untouched line ${i + 1} ${JSON.stringify(olds[i])} changed or moved out of order`);
    j++;
  }
}

function errorCode(fn) {
  try {
    fn();
  } catch (e) {
    return e.werkbaumCode || 'internal: ' + e.message;
  }
  return null;
}

test('shared edit cases: exact output, untouched lines byte-identical', () => {
  assert.ok(cases.length >= 60, 'cases loaded');
  for (const c of cases) {
    if (c.error) {
      assert.strictEqual(errorCode(() => W.edit.apply(c.text, c.verb, c.args)), c.error, c.name);
      continue;
    }
    const out = W.edit.apply(c.text, c.verb, c.args);
    assert.strictEqual(out, c.want, c.name);
    assertUntouched(c.text, out, c.owns, c.name);
    // Whether the text ends with a line break is kept by the node verbs.
    if (c.verb !== 'applyOps' && c.verb !== 'write') {
      assert.strictEqual(/[\r\n]$/.test(out), /[\r\n]$/.test(c.text), c.name + ': final newline');
    }
  }
});

test('the entry point reports verb errors as {error: {code, message}}', () => {
  const res = JSON.parse(W.call('apply', JSON.stringify({ text: '- A #a\n', verb: 'setStatus', args: { id: 'b', status: 'x' } })));
  assert.strictEqual(res.error.code, 'unknownId');
  assert.match(res.error.message, /"b"/);
  const ok = JSON.parse(W.call('apply', JSON.stringify({ text: '- A #a\n', verb: 'setStatus', args: { id: 'a', status: 'x' } })));
  assert.strictEqual(ok.text, '- [x] A #a\n');
  assert.strictEqual(JSON.parse(W.call('nope', '{}')).error.code, 'unknownMethod');
  assert.strictEqual(JSON.parse(W.call('apply', '{bad')).error.code, 'badArgument');
  assert.strictEqual(JSON.parse(W.call('inspect', JSON.stringify({ text: '- A #a\n', id: 'zz' }))).error.code, 'unknownId');
});

test('line writers of NOTATION.md §27', () => {
  const box = W.edit.setStatusBox;
  assert.strictEqual(box('  - Task', '~'), '  - [~] Task');
  assert.strictEqual(box('Root', '^'), '[^] Root');
  assert.strictEqual(box('  = > [ ] Alt', '/'), '  = > [/] Alt');
  assert.strictEqual(box('  - [x] > Task', null), '  - > Task');
  assert.strictEqual(W.edit.appendToken('  - [ ] Task (S)   %% note', '#US-5'), '  - [ ] Task (S) #US-5   %% note');
  assert.strictEqual(W.edit.appendToken('- Long \\', '(M)'), '- Long (M) \\');
});

test('every status spelling sets the same box', () => {
  const t = 'Plan\n  - Task #t\n';
  const spell = { idea: '?', planned: ' ', highrisk: '!', progress: '~', skeleton: '/', done: 'x', prod: '^', discarded: '-' };
  for (const [key, code] of Object.entries(spell)) {
    const want = 'Plan\n  - [' + code + '] Task #t\n';
    assert.strictEqual(W.edit.setStatus(t, 't', key), want, key);
    assert.strictEqual(W.edit.setStatus(t, 't', code), want, code);
    assert.strictEqual(W.parse(want).all[1].status.key, key);
  }
  assert.strictEqual(W.edit.setStatus(t, 't', 'fertig'), 'Plan\n  - [x] Task #t\n');
  assert.strictEqual(W.edit.setStatus(t, 't', 'X'), 'Plan\n  - [x] Task #t\n');
});

// Property test on generated plans: every verb on every node re-parses, keeps the node
// count it promises and leaves the lines it does not own byte-identical.
test('verbs on generated plans keep untouched lines and re-parse', () => {
  let runs = 0;
  for (let seed = 1; seed <= 60; seed++) {
    let text = randomPlan(seed, 12 + (seed % 20));
    if (seed % 3 === 0) text = text.replace(/\n/g, '\r\n');
    const doc = W.parse(text);
    const n = doc.all.length;
    for (let k = 0; k < n; k += 3) {
      const node = doc.all[k];
      const ref = node.id !== null && doc.byId[node.id] === node ? node.id : 'line:' + node.line;
      const endOf = (x) => {
        while (x.children.length) x = x.children[x.children.length - 1];
        return x.index;
      };
      const sub = endOf(node) - node.index + 1;
      // setStatus owns the node line only.
      let out = W.edit.setStatus(text, ref, 'progress');
      assertUntouched(text, out, [node.line], 'setStatus ' + seed);
      assert.strictEqual(W.parse(out).all[k].status.key, 'progress');
      // setSize owns the node's physical lines.
      out = W.edit.setSize(text, ref, 'XL');
      assertUntouched(text, out, [node.line].concat(node.cont), 'setSize ' + seed);
      assert.strictEqual(W.parse(out).all[k].size, 'XL');
      // addNode inserts one line.
      out = W.edit.addNode(text, ref, '- [ ] New child (S)');
      assertUntouched(text, out, [], 'addNode ' + seed);
      assert.strictEqual(W.parse(out).all.length, n + 1);
      // removeNode drops the subtree's lines (and description blocks).
      const owned = [];
      for (let l = node.line; l <= node.lastTreeLine; l++) owned.push(l);
      out = W.edit.removeNode(text, ref, false);
      assertUntouched(text, out, owned, 'removeNode ' + seed);
      assert.strictEqual(W.parse(out).all.length, n - sub);
      // moveNode to the roots keeps every other line.
      out = W.edit.moveNode(text, ref, null);
      assertUntouched(text, out, owned, 'moveNode ' + seed);
      const moved = W.parse(out);
      assert.strictEqual(moved.all.length, n);
      assert.ok(moved.roots.some((r) => r.label === node.label), 'moved node is a root');
      // moveNode under another node (before or after it in the text).
      const target = doc.all[(k * 7 + 3) % n];
      if (target.index < node.index || target.index > endOf(node)) {
        const tref = target.id !== null && doc.byId[target.id] === target ? target.id : 'line:' + target.line;
        let res = null;
        try {
          res = W.edit.moveNode(text, ref, tref);
        } catch (e) {
          assert.strictEqual(e.werkbaumCode, 'unsupportedLine', 'moveNode under ' + tref + ': ' + e.message);
        }
        if (res !== null) {
          assertUntouched(text, res, owned, 'moveNode under ' + seed);
          const after = W.parse(res);
          assert.strictEqual(after.all.length, n);
          const count = node.lastTreeLine - node.line + 1;
          const want = target.line > node.lastTreeLine ? target.line - count : target.line;
          const m = after.all.find((x) => x.label === node.label && x.parent >= 0 && after.all[x.parent].line === want);
          assert.ok(m, 'moved under ' + tref + ' (seed ' + seed + ')');
        }
      }
      runs++;
    }
  }
  assert.ok(runs > 100, 'enough nodes exercised: ' + runs);
});

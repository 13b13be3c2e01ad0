'use strict';
// Guards under Node. The cases in testdata/edit/guard.json are shared with the Go engine
// test (guard_test.go).
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { load } = require('./load.js');

const W = load();
const cases = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'testdata', 'edit', 'guard.json'), 'utf8'));
const plain = (x) => JSON.parse(JSON.stringify(x));

test('shared guard cases', () => {
  assert.ok(cases.length >= 20);
  for (const c of cases) {
    const r = plain(W.guard(c.old, c.new, { allowWarnings: !!c.allowWarnings, allowProd: !!c.allowProd }));
    assert.strictEqual(r.ok, c.ok, c.name + ': ok');
    assert.deepStrictEqual(r.added.map((w) => w.type), c.added, c.name + ': added');
    assert.deepStrictEqual(r.removed.map((w) => w.type), c.removed, c.name + ': removed');
    if (c.ok) {
      assert.strictEqual(r.refused, undefined, c.name + ': not refused');
    } else {
      assert.strictEqual(r.refused.switch, c.switch, c.name + ': switch');
      assert.ok(r.refused.reason.includes(c.switch), c.name + ': the reason names the switch');
      if (c.switch === 'allowWarnings') {
        assert.ok(r.refused.warnings.length > 0, c.name + ': refusal names the warnings');
      }
    }
    if (c.addedLines) assert.deepStrictEqual(r.added.map((w) => w.line), c.addedLines, c.name + ': added lines');
    if (c.prodLines) assert.deepStrictEqual(r.refused.lines, c.prodLines, c.name + ': prod lines');
    // The full list is the new text's editor list.
    assert.deepStrictEqual(r.warnings, plain(W.warnings(c.new)), c.name + ': warnings');
  }
});

test('every added warning carries an English text with its line', () => {
  const r = plain(W.guard('P\n  - a\n', 'P\n  - a\n  | b\n  - a2 #x\n  - a3 #x\n', { allowWarnings: true }));
  assert.strictEqual(r.ok, true);
  assert.deepStrictEqual(r.added.map((w) => w.type), ['mixedGate', 'duplicateId']);
  for (const w of r.added) assert.match(w.text, /^Line \d+: /);
});

test('a warning on an edited node counts as removed and added', () => {
  // The sizeConflict is anchored by the node's label: renaming the node changes identity.
  const old = 'P (XS)\n  - a (S)\n';
  const r = plain(W.guard(old, 'Q (XS)\n  - a (S)\n', {}));
  assert.deepStrictEqual(r.added.map((w) => w.type), ['sizeConflict']);
  assert.deepStrictEqual(r.removed.map((w) => w.type), ['sizeConflict']);
  assert.strictEqual(r.ok, true);
});

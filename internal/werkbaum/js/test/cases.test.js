'use strict';
// Runs the data-driven notation cases of ../../testdata/cases/*.json under Node. The same
// files run through the Go engine (notation_test.go), so both engines are held to one
// expectation. Format (README.md beside the cases): each file holds a list of cases
//   {name, text | lines (joined with "\n", or "\r\n" when crlf is true), opts?,
//    expect?: partial analyze result (nodes keyed by line), inspect?: [{opts, expect | error}]}.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { load } = require('./load.js');

const W = load();
const dir = path.join(__dirname, '..', '..', 'testdata', 'cases');

// match compares got with a partial expectation and returns the differences: objects are
// compared key by key (extra keys in got are ignored), arrays element by element with equal
// length, numbers with a tolerance of 1e-9, everything else strictly.
function match(got, exp, where, out) {
  if (exp === null || typeof exp !== 'object') {
    if (typeof exp === 'number' && typeof got === 'number') {
      if (Math.abs(got - exp) > 1e-9) out.push(where + ': got ' + got + ', want ' + exp);
    } else if (got !== exp) {
      out.push(where + ': got ' + JSON.stringify(got) + ', want ' + JSON.stringify(exp));
    }
    return out;
  }
  if (Array.isArray(exp)) {
    if (!Array.isArray(got)) return out.push(where + ': got ' + JSON.stringify(got) + ', want a list'), out;
    if (got.length !== exp.length) {
      out.push(where + ': got ' + got.length + ' entries ' + JSON.stringify(got) + ', want ' + exp.length + ' ' + JSON.stringify(exp));
      return out;
    }
    for (let i = 0; i < exp.length; i++) match(got[i], exp[i], where + '[' + i + ']', out);
    return out;
  }
  if (got === null || typeof got !== 'object') return out.push(where + ': got ' + JSON.stringify(got) + ', want an object'), out;
  for (const k of Object.keys(exp)) match(got[k], exp[k], where + '.' + k, out);
  return out;
}

function textOf(c) {
  if (c.text !== undefined) return c.text;
  return c.lines.join(c.crlf ? '\r\n' : '\n');
}

// checkAnalysis applies an expectation to an analyze result; nodes are keyed by line.
function checkAnalysis(got, exp) {
  const out = [];
  for (const k of Object.keys(exp)) {
    if (k === 'nodes' && Array.isArray(exp.nodes)) {
      match(got.nodes, exp.nodes, 'nodes', out);
    } else if (k === 'nodes') {
      for (const line of Object.keys(exp.nodes)) {
        const n = got.nodes.find((x) => x.line === +line);
        if (!n) out.push('nodes: no node on line ' + line);
        else match(n, exp.nodes[line], 'node ' + line, out);
      }
    } else if (k === 'labels') {
      match(got.nodes.map((n) => n.label), exp.labels, 'labels', out);
    } else {
      match(got[k], exp[k], k, out);
    }
  }
  return out;
}

const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
test('case files exist', () => assert.ok(files.length >= 10, 'case files: ' + files.length));
for (const f of files) {
  const cases = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  for (const c of cases) {
    test(f + ': ' + c.name, () => {
      const text = textOf(c);
      assert.ok(c.expect || c.inspect, 'case without expectations');
      if (c.expect) {
        const got = JSON.parse(JSON.stringify(W.analyze(text, c.opts || {})));
        const diffs = checkAnalysis(got, c.expect);
        assert.deepStrictEqual(diffs, []);
      }
      for (const ins of c.inspect || []) {
        if (ins.error) {
          assert.throws(() => W.inspect(text, ins.opts || {}), (e) => e.message.indexOf(ins.error) === 0);
          continue;
        }
        const got = JSON.parse(JSON.stringify(W.inspect(text, ins.opts || {})));
        const diffs = [];
        for (const k of Object.keys(ins.expect)) {
          if (k === 'nodes' && !Array.isArray(ins.expect.nodes)) {
            for (const line of Object.keys(ins.expect.nodes)) {
              const n = (got.nodes || []).find((x) => x.line === +line);
              if (!n) diffs.push('inspect nodes: no node on line ' + line);
              else match(n, ins.expect.nodes[line], 'inspect node ' + line, diffs);
            }
          } else if (k === 'absent') {
            for (const key of ins.expect.absent) if (key in got) diffs.push('inspect: key ' + key + ' present');
          } else if (k === 'nodeLines') {
            match((got.nodes || []).map((n) => n.line), ins.expect.nodeLines, 'inspect nodeLines', diffs);
          } else {
            match(got[k], ins.expect[k], 'inspect ' + k, diffs);
          }
        }
        assert.deepStrictEqual(diffs, []);
      }
    });
  }
}

module.exports = { match };

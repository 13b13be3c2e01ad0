'use strict';
// Loads the notation scripts exactly as the Go engine does: the files of ../order.json (the
// one load order, also read by engine.go), in that order, in one fresh global scope. Tests
// get the resulting Werkbaum namespace. Like the engine, it refuses a ../*.js file the
// list does not name and a listed file that is missing.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

const dir = path.join(__dirname, '..');

// order returns the script file names in load order, checked against ../*.js.
function order() {
  const list = JSON.parse(fs.readFileSync(path.join(dir, 'order.json'), 'utf8')).order;
  const present = new Set(fs.readdirSync(dir).filter((f) => f.endsWith('.js')));
  const seen = new Set();
  for (const f of list) {
    if (!present.has(f) || seen.has(f)) throw new Error('order.json lists ' + JSON.stringify(f) + ', which is not a script in ' + dir + ' or is listed twice');
    seen.add(f);
  }
  const unlisted = [...present].filter((f) => !seen.has(f)).sort();
  if (unlisted.length) throw new Error(unlisted.join(', ') + ' not listed in order.json; add each where it must run');
  return list;
}

function load() {
  const context = vm.createContext({});
  for (const f of order()) {
    vm.runInContext(fs.readFileSync(path.join(dir, f), 'utf8'), context, { filename: f });
  }
  return context.Werkbaum;
}

// sharedDir finds ../shared beside the repository (or $TALK_SHARED_DIR).
function sharedDir() {
  if (process.env.TALK_SHARED_DIR) return process.env.TALK_SHARED_DIR;
  let d = __dirname;
  while (!fs.existsSync(path.join(d, 'go.mod'))) {
    const up = path.dirname(d);
    if (up === d) throw new Error('go.mod not found above ' + __dirname);
    d = up;
  }
  return path.join(path.dirname(d), 'shared');
}

// examples is the one place the Node tests learn where the upstream examples are:
// {dir, skip: false}, or — on a fresh clone without ../shared — {dir: null, skip: message}
// for node:test's skip option, the message naming the missing folder and TALK_SHARED_DIR.
// With TALK_SHARED_DIR set (CI) a missing folder is an error: the examples were asked for.
function examples() {
  const dir = path.join(sharedDir(), 'werkbaum', 'examples');
  if (fs.existsSync(dir) && fs.statSync(dir).isDirectory()) return { dir, skip: false };
  if (process.env.TALK_SHARED_DIR) {
    throw new Error('TALK_SHARED_DIR=' + process.env.TALK_SHARED_DIR + ' has no werkbaum/examples folder (' + dir + ')');
  }
  return {
    dir: null,
    skip: 'needs the upstream examples: ' + dir + ' not found (a fresh clone has no ../shared); ' +
      'set TALK_SHARED_DIR to the folder that holds werkbaum/examples'
  };
}

module.exports = { load, order, sharedDir, examples };

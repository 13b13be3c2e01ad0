'use strict';
// Loads the notation scripts exactly as the Go engine does: every ../*.js file, in lexical
// filename order, in one fresh global scope. Tests get the resulting Werkbaum namespace.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

const dir = path.join(__dirname, '..');

function load() {
  const context = vm.createContext({});
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.js')).sort();
  for (const f of files) {
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

module.exports = { load, sharedDir };

// The single entry point a host calls: Werkbaum.call(method, argsJSON, …texts) → JSON string.
//
// Hosts (the Go engine, tests) pass a method name and its arguments as a JSON string and
// always get a JSON string back. Failures never throw across the boundary: they come back
// as {"error": {"code", "message"}}, where code "internal" marks a bug in these scripts and
// every other code (see Werkbaum.inputError) marks the caller's mistake — an unknown id, a
// bad status, malformed ops. Methods:
//   analyze  {text, checksum?, file?, showDiscarded?} → §28 analysis object
//   inspect  {text, id?, include?}                    → MCP inspect view
//   warnings {text}                                   → [warning]
//   parse    {text}                                   → parsed roots (debugging aid)
//   apply    {text, verb, args}                       → {text}  (verbs of 60_edit.js)
//   guard    {old, new, allowWarnings?, allowProd?}   → guard verdict (70_guard.js)
//   edit     {text, verb, args, allowWarnings?, allowProd?, host?}
//                                                     → {text, guard, oldKnown} (apply, then
//                                                       guard; oldKnown: the old text's
//                                                       analysis was in the memo)
// Werkbaum.callParts(argsJSON, "text", text) is inspect for the Go host, which writes the node
// records itself: it returns inspectParts' object (55_inspect.js), not JSON. Werkbaum.callValue
// is call returning the answer itself (the Go host's apply).
(function (W) {
  'use strict';

  var INCLUDE = ['tree', 'warnings', 'path'];

  var methods = {
    analyze: function (a) {
      return W.analyze(str(a, 'text'), {
        checksum: a.checksum, file: a.file, showDiscarded: !!a.showDiscarded
      });
    },
    inspect: function (a) {
      return inspectWith(a, W.inspect);
    },
    warnings: function (a) { return W.warnings(str(a, 'text')); },
    parse: function (a) {
      var d = W._parseFresh(str(a, 'text'));
      return { roots: d.roots, warnings: d.warnings, separatorLine: d.separatorLine, descBlocks: d.descBlocks };
    },
    apply: function (a) {
      return { text: W.edit.apply(str(a, 'text'), str(a, 'verb'), a.args || {}) };
    },
    guard: function (a) {
      return guarded(str(a, 'old'), str(a, 'new'), a);
    },
    // edit is apply and then guard of the old text against the new one in one call: the
    // write path's (Go: Engine.Edit). The new text does not cross to the host and back
    // between the two; a.host (optional, passed by the host as a value of its own) builds
    // one-row edits of the host's text (60_edit.js replaceRow).
    edit: function (a) {
      var text = str(a, 'text');
      var known = W._analysisKnown(text);
      var out = W.edit.apply(text, str(a, 'verb'), a.args || {}, a.host);
      return { text: out, guard: guarded(text, out, a), oldKnown: known };
    }
  };

  // guarded is the guards' verdict on a write from old to neu; one they let through
  // replaces its plan's text (the host writes it), which the memos' trim is told.
  function guarded(old, neu, a) {
    var verdict = W.guard(old, neu, guardOpts(a));
    if (verdict.ok) W._supersede(old, neu);
    return verdict;
  }

  function guardOpts(a) {
    return { allowWarnings: !!a.allowWarnings, allowProd: !!a.allowProd };
  }

  // inspectWith checks the arguments of inspect/inspectParts and runs fn (W.inspect or
  // W.inspectParts).
  function inspectWith(a, fn) {
    var text = str(a, 'text');
    var id = a.id || null;
    if (id !== null) {
      if (typeof id !== 'string') throw W.inputError('badArgument', 'argument "id" must be a string');
      if (id.charAt(0) === '#') id = id.slice(1);
    }
    if (a.include !== undefined && a.include !== null) {
      if (!Array.isArray(a.include)) throw W.inputError('badArgument', 'include must be a list');
      for (var i = 0; i < a.include.length; i++) {
        if (INCLUDE.indexOf(a.include[i]) < 0) {
          throw W.inputError('badArgument', 'include may contain only "tree", "warnings" and "path", not ' +
            JSON.stringify(a.include[i]));
        }
      }
    }
    try {
      return fn(text, { id: id, include: a.include || null });
    } catch (e) {
      // 55_inspect.js reports an unknown subtree id as a plain Error.
      if (e && !e.werkbaumCode && /^unknown id: /.test(e.message)) {
        throw W.inputError('unknownId', 'no node has the id "' + id + '"');
      }
      throw e;
    }
  }

  function str(a, key) {
    if (typeof a[key] !== 'string') {
      throw W.inputError('badArgument', 'argument "' + key + '" must be a string');
    }
    return a[key];
  }

  function parseArgs(argsJSON) {
    var args;
    try {
      args = argsJSON ? JSON.parse(argsJSON) : {};
    } catch (e) {
      throw W.inputError('badArgument', 'arguments are not valid JSON: ' + e.message);
    }
    if (args === null || typeof args !== 'object') {
      throw W.inputError('badArgument', 'arguments must be a JSON object');
    }
    return args;
  }

  W.methods = methods;

  // call(method, argsJSON[, name1, text1[, name2, text2]]): hosts may pass plan texts as
  // string arguments of their own (goja parses a large text out of JSON slowly); they become
  // properties of the arguments object and take precedence over the JSON's.
  W.call = function (method, argsJSON, name1, text1, name2, text2) {
    try {
      var out = JSON.stringify(run(method, argsJSON, name1, text1, name2, text2));
      return out === undefined ? 'null' : out;
    } catch (e) {
      return failure(e);
    }
  };

  // pieces writes the JSON of v, byte for byte JSON.stringify's, as a list of strings that a
  // host can stop between: goja's JSON.stringify (and a join of its parts) runs in Go without
  // looking at the interrupt, and an analysis of a large plan (about 30 MB of JSON) overran
  // its deadline by seconds there (issue 33). Long arrays are written in slices of CHUNK
  // members, the answer object and the objects it holds one member at a time, each part by
  // JSON.stringify; the Go host joins the pieces and checks its deadline between them (tests
  // compare the joined pieces with JSON.stringify on the shared examples and generated plans).
  var CHUNK = 256;
  function pieces(v, depth, out) {
    if (v === null || typeof v !== 'object') {
      out.push(JSON.stringify(v));
      return;
    }
    var i;
    if (Array.isArray(v)) {
      if (v.length <= CHUNK) {
        out.push(JSON.stringify(v));
        return;
      }
      out.push('[');
      for (i = 0; i < v.length; i += CHUNK) {
        var part = JSON.stringify(v.slice(i, i + CHUNK));
        out.push(i === 0 ? part.slice(1, -1) : ',' + part.slice(1, -1));
      }
      out.push(']');
      return;
    }
    var proto = Object.getPrototypeOf(v);
    if (depth > 1 || (proto !== Object.prototype && proto !== null) || typeof v.toJSON === 'function') {
      out.push(JSON.stringify(v));
      return;
    }
    var keys = Object.keys(v);
    var sep = '{';
    for (i = 0; i < keys.length; i++) {
      var x = v[keys[i]];
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
      out.push(sep + JSON.stringify(keys[i]) + ':');
      pieces(x, depth + 1, out);
      sep = ',';
    }
    out.push(sep === '{' ? '{}' : '}');
  }
  W._pieces = function (v) {
    var out = [];
    pieces(v, 0, out);
    return out;
  };

  // callPieces is call for the Go host: the answer's JSON as pieces (see pieces), or on
  // failure the JSON error string. An answer that is undefined has no JSON: "null".
  W.callPieces = function (method, argsJSON, name1, text1, name2, text2) {
    try {
      var v = run(method, argsJSON, name1, text1, name2, text2);
      if (v === undefined) return 'null';
      var out = [];
      pieces(v, 0, out);
      return out;
    } catch (e) {
      return failure(e);
    }
  };

  // callValue is call for a host that reads the answer's values itself: it returns the
  // method's answer, not its JSON, or on failure the same JSON error string as call. The Go
  // host takes apply's new text so: the text crosses as one string instead of being
  // escaped into JSON and parsed back out of it (about 10 ms for a 10,000-node plan).
  W.callValue = function (method, argsJSON, name1, text1, name2, text2) {
    try {
      return run(method, argsJSON, name1, text1, name2, text2);
    } catch (e) {
      return failure(e);
    }
  };

  function run(method, argsJSON, name1, text1, name2, text2) {
    if (!Object.prototype.hasOwnProperty.call(methods, method)) {
      throw W.inputError('unknownMethod', 'unknown method "' + method + '"');
    }
    var args = parseArgs(argsJSON);
    if (typeof name1 === 'string') args[name1] = text1;
    if (typeof name2 === 'string') args[name2] = text2;
    return methods[method](args);
  }

  // callParts(argsJSON, name1, text1) runs inspectParts (55_inspect.js) for a host that reads
  // the node data itself: it returns the parts object, or on failure the same JSON error
  // string as call.
  W.callParts = function (argsJSON, name1, text1) {
    try {
      var args = parseArgs(argsJSON);
      if (typeof name1 === 'string') args[name1] = text1;
      return inspectWith(args, W.inspectParts);
    } catch (e) {
      return failure(e);
    }
  };

  // failure turns an exception into the JSON error answer: code "internal" for a bug in
  // these scripts, the input error's code otherwise.
  function failure(e) {
    var code = e && e.werkbaumCode ? e.werkbaumCode : 'internal';
    var msg = e && e.message ? e.message : String(e);
    if (code === 'internal' && e && e.name && e.name !== 'Error') msg = e.name + ': ' + msg;
    return JSON.stringify({ error: { code: code, message: msg } });
  }
})(Werkbaum);

// Documents: the line rules of NOTATION.md §25 — normalise, lines, apply, diff, conflict,
// rebase — as one set of functions for every side of the live document protocol
// (DOCUMENTS.md): the Go host (talkd's document store, its remote-plan client), the
// browser's live client (test/live/live.js) and the Node tests.
//
// Werkbaum.doc.{normalize, lines, applyOps, computeOps, conflicts, rebase, validateOps}.
// Texts are normalised first (CRLF, then lone CR, to LF); a leading byte-order mark is
// text here, unlike in the parser's Werkbaum.normalize (§1): the checksum is over exactly
// the normalised text, and the Go host hashes the same bytes (DocumentChecksum).
//
// This file must run unchanged in goja, Node and a browser page loaded on its own: plain
// ES5 plus Map, no Node/DOM/goja APIs, no \p{…} regexps. It needs nothing from the other
// notation files; when it is loaded alone it creates the Werkbaum namespace itself.
//
// Failures the caller caused throw an Error with werkbaumCode set (the shape
// Werkbaum.inputError makes): "badOps" for a malformed operation list (the 400 of
// DOCUMENTS.md) and "opOutOfRange" for one that does not fit the base text (a 422). The
// message names the operation, e.g. "ops[2]: range 9…9 is outside the text (7 lines,
// indices 0…6)".
//
// The apply core is shared with Werkbaum.edit.applyOps (60_edit.js), which applies the same
// operations to a file's rows while keeping their line endings and the BOM: one rule for
// what an operation list may say, one walk that applies it. The Go host (lines.go) walks
// the apply and the cheap steps of computeOps itself, for speed on every PATCH, and its
// tests hold it to the answers of this file.
var Werkbaum = (typeof Werkbaum === 'object' && Werkbaum) || {};
(function (W) {
  'use strict';

  // The cut-off of §25: above this product of the middles' line counts computeOps gives
  // one replace of the whole middle instead of an LCS table.
  var LCS_LIMIT = 1000000;
  var BREAK_RE = /[\r\n]/;
  var CR_RE = /\r\n?/g;

  function fail(code, message) {
    var e = new Error(message);
    e.werkbaumCode = code;
    return e;
  }

  // normalize turns CRLF, then every lone CR, into LF. Nothing else changes.
  function normalize(text) {
    if (typeof text !== 'string') throw fail('badArgument', 'text must be a string');
    return text.indexOf('\r') < 0 ? text : text.replace(CR_RE, '\n');
  }

  // lines is the line array of a text: a trailing LF gives a final empty line, the empty
  // text is one empty line, and lines(t).join('\n') === normalize(t).
  function lines(text) {
    return normalize(text).split('\n');
  }

  function isInt(v) {
    return typeof v === 'number' && isFinite(v) && Math.floor(v) === v;
  }

  // removedBy is how many base lines an operation takes away (its range's length).
  function removedBy(op) {
    return op.op === 'insert' ? 0 : op.count;
  }

  // checkOp checks the shape of one operation; where names it in messages.
  function checkOp(op, where) {
    if (op === null || typeof op !== 'object') throw fail('badOps', where + ' is not an object');
    if (op.op !== 'insert' && op.op !== 'replace' && op.op !== 'delete') {
      throw fail('badOps', where + ': op must be insert, replace or delete, not ' + JSON.stringify(op.op));
    }
    if (!isInt(op.index) || op.index < 0) throw fail('badOps', where + ': index must be a whole number ≥ 0');
    if (op.op !== 'insert' && (!isInt(op.count) || op.count < 0)) {
      throw fail('badOps', where + ' (' + op.op + '): count must be a whole number ≥ 0');
    }
    if (op.op !== 'delete') {
      if (!Array.isArray(op.lines)) throw fail('badOps', where + ' (' + op.op + '): lines must be a list of strings');
      for (var j = 0; j < op.lines.length; j++) {
        if (typeof op.lines[j] !== 'string') throw fail('badOps', where + ': lines[' + j + '] is not a string');
        if (BREAK_RE.test(op.lines[j])) {
          throw fail('badOps', where + ': lines[' + j + '] contains a line break; give one array entry per line');
        }
      }
    }
  }

  function docWhere(i) {
    return 'ops[' + i + ']';
  }

  // checkList checks a whole list without a base: every op well-formed, sorted by index,
  // none starting inside the range of the one before (two inserts at one index are fine).
  // These are the checks whose failure is a malformed request (HTTP 400). label names
  // the list, where(i) its op i.
  function checkList(ops, label, where) {
    if (!Array.isArray(ops)) throw fail('badOps', label + ' must be a list of {op, index, count, lines}');
    var cursor = 0;
    for (var i = 0; i < ops.length; i++) {
      checkOp(ops[i], where(i));
      if (ops[i].index < cursor) {
        throw fail('badOps', where(i) + ': ops must be sorted by index and must not overlap (index ' +
          ops[i].index + ' < ' + cursor + ')');
      }
      cursor = ops[i].index + removedBy(ops[i]);
    }
  }

  // validateOps is checkList for a list named name (default "ops"): "ops[2]: …".
  function validateOps(ops, name) {
    var label = name || 'ops';
    checkList(ops, label, function (i) { return label + '[' + i + ']'; });
  }

  // applyCore is the strict apply of §25 over any array of rows. First the list itself is
  // checked (every op well-formed, sorted, not overlapping: a malformed list is reported
  // as such even when an earlier op also misses the base), then it walks the ops with a
  // cursor: copies base[cursor..index), then wrap(line) for each of the op's lines, and
  // rejects the whole list when an op ends past base.length. where(i) names op i in
  // messages; rangeCode is the code of a list that does not fit the base. It returns the
  // new row array (the base is not changed).
  function applyCore(base, ops, where, wrap, rangeCode) {
    checkList(ops, 'ops', where);
    var rows = [];
    var cursor = 0;
    var i, op, end;
    for (i = 0; i < ops.length; i++) {
      op = ops[i];
      end = op.index + removedBy(op);
      if (end > base.length) {
        throw fail(rangeCode, where(i) + ': range ' + op.index + '…' + end + ' is outside the text (' +
          base.length + ' lines, indices 0…' + (base.length - 1) + ')');
      }
      for (var k = cursor; k < op.index; k++) rows.push(base[k]);
      if (op.op !== 'delete') {
        for (var l = 0; l < op.lines.length; l++) rows.push(wrap(op.lines[l]));
      }
      cursor = end;
    }
    for (var r = cursor; r < base.length; r++) rows.push(base[r]);
    return rows;
  }

  function same(line) {
    return line;
  }

  // applyOps applies ops to the normalised base and returns the new normalised text.
  function applyOps(base, ops) {
    return applyCore(lines(base), ops, docWhere, same, 'opOutOfRange').join('\n');
  }

  // suffixLCS returns lcs(i, j), the length of the longest common subsequence of A[i..]
  // and B[j..] (arrays of line ids), for 0 ≤ i ≤ n, 0 ≤ j ≤ m: the table §25's diff walks.
  // It is not filled cell by cell (a million cells took over a second in goja): the rows
  // come from the bit-parallel LCS of Crochemore et al. over the reversed sequences, 32
  // columns per step. After k lines of reverse(A), bit t of V is 0 exactly where the DP row
  // steps up at column t of reverse(B), so lcs(i, j) is the number of zero bits among the
  // low m−j bits of the row for k = n−i. js/test/lines.test.js checks it against the
  // plain table, cell for cell and through the walk.
  function suffixLCS(A, B) {
    var n = A.length;
    var m = B.length;
    var W = (m + 31) >>> 5;
    var masks = new Map();
    var t, w;
    for (t = 0; t < m; t++) {
      var bid = B[m - 1 - t];
      if (bid < 0) continue;
      var mk = masks.get(bid);
      if (!mk) {
        mk = new Int32Array(W);
        masks.set(bid, mk);
      }
      mk[t >>> 5] |= 1 << (t & 31);
    }
    var rows = new Array(n + 1);
    var cums = new Array(n + 1);
    var V = new Int32Array(W);
    for (w = 0; w < W; w++) V[w] = -1;
    rows[0] = V;
    cums[0] = prefixOnes(V);
    for (var k = 0; k < n; k++) {
      var M = masks.get(A[n - 1 - k]);
      if (!M) { // no match in B: the row does not change (rows are never written again)
        rows[k + 1] = V;
        cums[k + 1] = cums[k];
        continue;
      }
      var NV = new Int32Array(W);
      var carry = 0;
      for (w = 0; w < W; w++) {
        var v = V[w];
        var u = v & M[w];
        var sum = (v >>> 0) + (u >>> 0) + carry;
        carry = sum > 0xffffffff ? 1 : 0;
        NV[w] = (sum | 0) | (v & ~u);
      }
      V = NV;
      rows[k + 1] = V;
      cums[k + 1] = prefixOnes(V);
    }
    return function (i, j) {
      var r = n - i;
      var bits = m - j;
      var word = bits >>> 5;
      var ones = cums[r][word];
      var rest = bits & 31;
      if (rest) ones += popcount(rows[r][word] & ((1 << rest) - 1));
      return bits - ones;
    };
  }

  // prefixOnes returns c with c[w] = number of one bits in V[0..w).
  function prefixOnes(V) {
    var c = new Int32Array(V.length + 1);
    for (var w = 0; w < V.length; w++) c[w + 1] = c[w] + popcount(V[w]);
    return c;
  }

  function popcount(x) {
    x >>>= 0;
    x = x - ((x >>> 1) & 0x55555555);
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    x = (x + (x >>> 4)) & 0x0f0f0f0f;
    return (x * 0x01010101) >>> 24;
  }

  // computeOps is the diff of §25, exactly: strip the common prefix and suffix; one insert
  // or delete when a side's middle is empty; one replace of the whole middle when the
  // middles' line counts multiply to more than 1,000,000; else an LCS table over the middle,
  // walked so that a differing stretch collects insertions while
  // j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]) and otherwise skips a base line; each
  // stretch is one replace, delete or insert. Deterministic, and
  // applyOps(from, computeOps(from, to)) === normalize(to).
  function computeOps(from, to) {
    var a = lines(from);
    var b = lines(to);
    var max = Math.min(a.length, b.length);
    var p = 0;
    while (p < max && a[p] === b[p]) p++;
    var s = 0;
    while (s < max - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
    var n = a.length - p - s;
    var m = b.length - p - s;
    if (n === 0 && m === 0) return [];
    if (n === 0) return [{ op: 'insert', index: p, count: 0, lines: b.slice(p, p + m) }];
    if (m === 0) return [{ op: 'delete', index: p, count: n, lines: [] }];
    if (n * m > LCS_LIMIT) return [{ op: 'replace', index: p, count: n, lines: b.slice(p, p + m) }];

    // Lines become small integers so that the table compares numbers, not strings.
    var ids = new Map();
    var A = new Array(n);
    var B = new Array(m);
    var i, j, id;
    for (i = 0; i < n; i++) {
      id = ids.get(a[p + i]);
      if (id === undefined) {
        id = ids.size;
        ids.set(a[p + i], id);
      }
      A[i] = id;
    }
    for (j = 0; j < m; j++) {
      id = ids.get(b[p + j]);
      B[j] = id === undefined ? -1 : id;
    }
    var lcs = suffixLCS(A, B);
    var ops = [];
    i = 0;
    j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && A[i] === B[j]) {
        i++;
        j++;
        continue;
      }
      var start = i;
      var ins = [];
      while ((i < n || j < m) && !(i < n && j < m && A[i] === B[j])) {
        if (j < m && (i === n || lcs(i, j + 1) >= lcs(i + 1, j))) ins.push(b[p + j++]);
        else i++;
      }
      var removed = i - start;
      if (removed > 0 && ins.length > 0) ops.push({ op: 'replace', index: p + start, count: removed, lines: ins });
      else if (removed > 0) ops.push({ op: 'delete', index: p + start, count: removed, lines: [] });
      else ops.push({ op: 'insert', index: p + start, count: 0, lines: ins });
    }
    return ops;
  }

  // overlaps is the conflict rule of §25 for two ops on one base: replace and delete
  // occupy [index, index+count), an insert is the point between lines at index (an empty
  // range); two ranges conflict when they share a line, a point conflicts only with the
  // interior of a range (start < i < end), and two points never conflict. For empty ranges
  // the one test start1 < end2 && start2 < end1 says all three.
  function overlaps(x, y) {
    var xs = x.index;
    var xe = xs + removedBy(x);
    var ys = y.index;
    var ye = ys + removedBy(y);
    return xs < ye && ys < xe;
  }

  // conflicts tells whether any op of a conflicts with any op of b (both on one base).
  function conflicts(a, b) {
    validateOps(a, 'a');
    validateOps(b, 'b');
    return firstConflict(a, b) !== null;
  }

  // firstConflict returns [i, j] for the first conflicting pair a[i], b[j], or null. Both
  // lists are sorted, so one merge-like walk suffices.
  function firstConflict(a, b) {
    var j = 0;
    for (var i = 0; i < a.length; i++) {
      var as = a[i].index;
      var ae = as + removedBy(a[i]);
      // b ops ending at or before a[i]'s start conflict neither with it nor with a later op
      // of a (ends and starts of a sorted, non-overlapping list never decrease).
      while (j < b.length && b[j].index + removedBy(b[j]) <= as) j++;
      for (var k = j; k < b.length && b[k].index < ae; k++) {
        if (overlaps(a[i], b[k])) return [i, k];
      }
    }
    return null;
  }

  // rebase shifts ops (made on a base) over since (the ops applied to that base meanwhile):
  // each op moves by Σ(inserted − removed) of the since ops that end at or before its index.
  // Any conflict means no rebase: {ok: false, conflict: [i, j]}. Otherwise {ok: true, ops},
  // the ops to apply to applyOps(base, since). Two inserts at one index do not conflict:
  // the rebased one lands after the lines since inserted there (the earlier write first).
  function rebase(ops, since) {
    validateOps(ops, 'ops');
    validateOps(since, 'since');
    var c = firstConflict(ops, since);
    if (c !== null) return { ok: false, conflict: c };
    var out = new Array(ops.length);
    var shift = 0;
    var j = 0;
    for (var i = 0; i < ops.length; i++) {
      var op = ops[i];
      while (j < since.length && since[j].index + removedBy(since[j]) <= op.index) {
        shift += (since[j].op === 'delete' ? 0 : since[j].lines.length) - removedBy(since[j]);
        j++;
      }
      var moved = { op: op.op, index: op.index + shift, count: op.op === 'insert' ? 0 : op.count, lines: op.op === 'delete' ? [] : op.lines };
      out[i] = moved;
    }
    return { ok: true, ops: out };
  }

  W.doc = {
    LCS_LIMIT: LCS_LIMIT,
    normalize: normalize,
    lines: lines,
    applyOps: applyOps,
    computeOps: computeOps,
    conflicts: conflicts,
    rebase: rebase,
    validateOps: validateOps,
    _applyCore: applyCore,
    _fail: fail
  };
})(Werkbaum);

// The Go host's entry point (internal/werkbaum/lines.go):
// Werkbaum.doc._host(method, argsJSON, name1, text1, name2, text2) runs applyOps
// {base, ops} → {text}, computeOps {from, to} → {ops} or rebase {ops, since} →
// {ok, ops|conflict} and returns the result object itself, so that a large text comes
// back as a string without a JSON round trip; a failure comes back as the JSON string
// {"error": {code, message}} of Werkbaum.call (90_api.js).
(function (W) {
  'use strict';
  var D = W.doc;

  var methods = {
    applyOps: function (a) { return { text: D.applyOps(a.base, a.ops) }; },
    computeOps: function (a) { return { ops: D.computeOps(a.from, a.to) }; },
    rebase: function (a) { return D.rebase(a.ops, a.since); }
  };

  D._host = function (method, argsJSON, name1, text1, name2, text2) {
    try {
      if (!Object.prototype.hasOwnProperty.call(methods, method)) {
        throw W.doc._fail('unknownMethod', 'unknown method "' + method + '"');
      }
      var args = argsJSON ? JSON.parse(argsJSON) : {};
      if (typeof name1 === 'string') args[name1] = text1;
      if (typeof name2 === 'string') args[name2] = text2;
      return methods[method](args);
    } catch (e) {
      var code = e && e.werkbaumCode ? e.werkbaumCode : 'internal';
      var msg = e && e.message ? e.message : String(e);
      if (code === 'internal' && e && e.name && e.name !== 'Error') msg = e.name + ': ' + msg;
      return JSON.stringify({ error: { code: code, message: msg } });
    }
  };
})(Werkbaum);

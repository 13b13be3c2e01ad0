// Guards on agent writes (ARCHITECTURE §5 "Guards", RFC 001 via NOTATION.md §23).
//
// Werkbaum.guard(oldText, newText, {allowWarnings, allowProd}) →
//   {ok, refused?: {reason, warnings, switch, lines?}, added, removed, warnings}
//
// * Structural warnings (mixedGate, unknownStatus, descStray, duplicateId) that the new text
//   has and the old text did not → refused with switch "allowWarnings", unless allowed.
// * A node that newly carries [^] (in production) → refused with switch "allowProd" and the
//   lines of those nodes, unless allowed. (Warnings are checked first; a write that trips
//   both is refused for the warnings, and again for [^] if retried with allowWarnings only.)
// * Content warnings never refuse; like every warning they are reported in the delta.
// added/removed are the warning delta; warnings is the new text's full list (editor order).
//
// Warning identity. Inserting or deleting lines shifts line numbers, so warnings are not
// compared by line. A warning's identity is its type, its own naming fields (label, id,
// code, size, tag — not line, firstLine, share, stations, totalStations or text) and an
// anchor: for a warning with a line, the label of the node that starts on that line, or the
// line's trimmed text (comment removed) when no node starts there (descStray). mixedGate is
// anchored by its parent label alone and unknownDesc by its id alone, so editing the first
// child of a mixed group or the text of a description does not make them "new". Identities
// are compared as multisets: if the new text has k more warnings with one identity than the
// old, the last k of them (document order) are added; symmetric for removed.
//
// "Newly carries [^]": nodes are identified by '#id' when they have one, else by label; a
// node is new in production if the new text has more [^] nodes with that identity than the
// old. A prod node whose label is edited (and has no id) therefore counts as new — the
// conservative side.
(function (W) {
  'use strict';

  var STRUCTURAL = { mixedGate: true, unknownStatus: true, descStray: true, duplicateId: true };
  var NAMING = ['label', 'id', 'code', 'size', 'tag'];
  var COMMENT_RE = /%%[\s\S]*$/;

  // analyse returns the parsed document and the editor's warning list of a text.
  function analyse(text) {
    if (W._compute) {
      var r = W._compute(text, {});
      return { doc: r.doc, warnings: r.warnings };
    }
    return { doc: W.parse(text), warnings: W.warnings(text) };
  }

  function identity(w, doc) {
    var key = w.type;
    for (var i = 0; i < NAMING.length; i++) {
      var f = NAMING[i];
      if (w[f] !== undefined && w[f] !== null) key += '\u0000' + f + '=' + w[f];
    }
    if (w.line && w.type !== 'mixedGate' && w.type !== 'unknownDesc') {
      var n = W._nodeAtLine(doc, w.line);
      if (n) key += '\u0000node=' + n.label;
      else key += '\u0000text=' + (doc.lines[w.line - 1] || '').replace(COMMENT_RE, '').trim();
    }
    return key;
  }

  // excess returns the warnings of `list` whose identity occurs more often than in `other`
  // (the last surplus instances of each identity), in list order.
  function excess(list, keys, otherKeys) {
    var budget = Object.create(null);
    for (var i = 0; i < otherKeys.length; i++) budget[otherKeys[i]] = (budget[otherKeys[i]] || 0) + 1;
    var total = Object.create(null);
    for (i = 0; i < keys.length; i++) total[keys[i]] = (total[keys[i]] || 0) + 1;
    var seen = Object.create(null);
    var out = [];
    for (i = 0; i < list.length; i++) {
      var k = keys[i];
      seen[k] = (seen[k] || 0) + 1;
      // The first (total - surplus) instances are matched; later ones are the surplus.
      var matched = Math.min(total[k], budget[k] || 0);
      if (seen[k] > matched) out.push(list[i]);
    }
    return out;
  }

  function prodKey(n) {
    return n.id !== null ? '#' + n.id : 'label:' + n.label;
  }

  function isProd(n) {
    return !!n.status && n.status.code === '^';
  }

  // newlyProd is the list of nodes of newDoc that newly carry [^] (see the top). When newDoc
  // is a status edit of oldDoc (W._boxEditOrigin: every line but one node's is the same,
  // and that node keeps its id and label, so every node keeps its identity and all but
  // that node their status), the counts can differ in that node's identity only, by one,
  // and only when the edit sets [^] on a node that was not in production: the surplus is
  // then the last node in document order with that identity in production. That walks the
  // document only when [^] is set, instead of both documents on every write (a walk of a
  // 10,000-node plan's nodes costs milliseconds in goja: BenchmarkGuardStatusEdit). Tests
  // hold it to the plain count on generated edits (js/test/write_path.test.js, and
  // TestEditEqualsApplyThenGuard in Go).
  var boxEditProdOff = false;
  function newlyProd(oldDoc, newDoc) {
    var origin = boxEditProdOff ? null : W._boxEditOrigin(newDoc);
    if (origin === null || origin.from !== oldDoc) return newlyProdPlain(oldDoc, newDoc);
    var n = newDoc.all[origin.index];
    if (!isProd(n) || isProd(oldDoc.all[origin.index])) return [];
    var k = prodKey(n);
    for (var i = newDoc.all.length - 1; i >= 0; i--) {
      var x = newDoc.all[i];
      if (isProd(x) && prodKey(x) === k) return [x];
    }
    return [n];
  }

  function newlyProdPlain(oldDoc, newDoc) {
    var had = Object.create(null);
    var i;
    for (i = 0; i < oldDoc.all.length; i++) {
      var o = oldDoc.all[i];
      if (isProd(o)) had[prodKey(o)] = (had[prodKey(o)] || 0) + 1;
    }
    var out = [];
    for (i = 0; i < newDoc.all.length; i++) {
      var n = newDoc.all[i];
      if (!isProd(n)) continue;
      var k = prodKey(n);
      if (had[k]) had[k]--;
      else out.push(n);
    }
    return out;
  }

  function guard(oldText, newText, opts) {
    opts = opts || {};
    var before = analyse(oldText);
    var after = analyse(newText);
    var oldKeys = [];
    var newKeys = [];
    var i;
    for (i = 0; i < before.warnings.length; i++) oldKeys.push(identity(before.warnings[i], before.doc));
    for (i = 0; i < after.warnings.length; i++) newKeys.push(identity(after.warnings[i], after.doc));
    var added = excess(after.warnings, newKeys, oldKeys);
    var removed = excess(before.warnings, oldKeys, newKeys);
    var res = { ok: true, added: added, removed: removed, warnings: after.warnings };

    var structural = [];
    for (i = 0; i < added.length; i++) if (STRUCTURAL[added[i].type]) structural.push(added[i]);
    if (structural.length && !opts.allowWarnings) {
      var texts = [];
      for (i = 0; i < structural.length; i++) texts.push(structural[i].text || structural[i].type);
      res.ok = false;
      res.refused = {
        reason: 'the write would add ' + structural.length + ' structural warning' +
          (structural.length === 1 ? '' : 's') + ' (' + texts.join(' ') + '); fix the text, or pass ' +
          'allowWarnings: true to write it anyway',
        warnings: structural,
        switch: 'allowWarnings'
      };
      return res;
    }
    if (!opts.allowProd) {
      var prod = newlyProd(before.doc, after.doc);
      if (prod.length) {
        var names = [];
        var lines = [];
        for (i = 0; i < prod.length; i++) {
          names.push('line ' + prod[i].line + ' "' + prod[i].label + '"');
          lines.push(prod[i].line);
        }
        res.ok = false;
        res.refused = {
          reason: 'the write would mark ' + names.join(', ') + ' as in production [^]; pass ' +
            'allowProd: true if that is intended',
          warnings: [],
          switch: 'allowProd',
          lines: lines
        };
      }
    }
    return res;
  }

  W.guard = guard;
  // _guardBoxEdit(on) switches newlyProd's status-edit path on or off (tests compare the
  // two; on by default).
  W._guardBoxEdit = function (on) {
    boxEditProdOff = !on;
  };
  W._warningIdentity = identity;
})(Werkbaum);

// Edit verbs: text → text, character-exact outside the lines a verb owns.
//
// Werkbaum.edit.{setStatus, setSize, addNode, moveNode, removeNode, applyOps, write} each
// take the plan text and return the new text. Every line a verb does not own stays
// byte-identical, including its line ending (CRLF, CR and LF are kept per line; lines the
// verb creates get the document's most common ending), and the document keeps ending — or
// not ending — with a line break. Werkbaum.edit.apply(text, verb, args) dispatches by name
// (the shape the Go host uses); its optional fourth argument is a host that builds one-row
// edits of its own text (see replaceRow).
//
// A leading byte-order mark (U+FEFF) belongs to the file, not to line 1 (NOTATION.md §1):
// the parser drops it, splitDoc keeps it aside (doc.bom) and joinRows writes it back, so a
// plan that started with one still does after every verb, applyOps and write. A first
// line handed in with a BOM of its own (copied from a raw read) does not double it; write
// with a new text lacking the BOM keeps the file's, and one starting with a BOM adds it.
//
// Nodes are addressed by id (NOTATION.md §14: the FIRST node carrying it; a leading '#' is
// accepted) or by "line:N", the node whose node line starts at physical line N (for nodes
// without an id).
//
// The node verbs check their own result: the new text is parsed again and the verb fails
// (code "unsupportedLine") instead of returning a text whose structure is not the intended
// one — e.g. a node line split by a continuation before its status box.
//
// Failures the caller caused throw Werkbaum.inputError(code, message); the message names
// the problem and reaches agents. Codes: missingId, unknownId, badStatus, badSize, badLine,
// notAChild, moveIntoItself, badOps, badVerb, badArgument, unsupportedLine.
(function (W) {
  'use strict';

  var T = W._text;

  // inputError makes an Error that Werkbaum.call reports as the caller's mistake.
  function inputError(code, message) {
    var e = new Error(message);
    e.werkbaumCode = code;
    return e;
  }
  W.inputError = inputError;

  var BREAK_RE = /[\r\n]/;
  var BLANK_RE = /^\s*$/;
  var LEAD_RE = /^[ \t]*/;
  var TAB_RE = /\t/g;
  var TRAILING_BLANKS_RE = /[ \t]+$/;
  var CONT_RE = /(^|[ \t])\\[ \t]*$/;
  // The node-line prefix of NOTATION.md §3 (indent, gate, old fold, box, canonical fold),
  // written like the parser's NODE_RE so that both agree on where the rest begins.
  var PREFIX_RE = /^[ \t]*(?:[-|+]|=[ \t])?\s*(?:[><][ \t]\s*)?(?:\[[^\]]\]\s*)?(?:[><][ \t]\s*)?/;
  // setStatusBox of §24 without lookaheads (a consumed blank is re-emitted by the group):
  // 1 = indentation + gate + blanks, 2 = old-position fold mark, then the box to replace.
  var STATUS_BOX_RE = /^([ \t]*(?:[-|+]|=[ \t])?\s*)((?:[><][ \t]\s*)?)(?:\[[^\]]\]\s*)?/;
  var SIZE_TOKEN_RE = /(^|\s)\((XXL|XS|XL|S|M|L)\)/gi;

  // ---- documents with per-line endings ------------------------------------------------

  // splitDoc splits text into rows {c: content, e: line ending ('' for the last row)}.
  // Row i is physical line i+1 of the parser (same CRLF/CR/LF rules as §25, and the same
  // leading BOM dropped: it is kept in doc.bom). Plain string splits only: goja runs
  // regexps over non-ASCII text in its slow backtracking engine.
  function splitDoc(text) {
    var bom = '';
    if (text.charCodeAt(0) === 0xfeff) {
      bom = T.BOM;
      text = text.slice(1);
    }
    var pieces = text.split('\n');
    var rows = [];
    var crlf = 0;
    var cr = 0;
    var lf = 0;
    var hasCR = text.indexOf('\r') >= 0;
    for (var i = 0; i < pieces.length; i++) {
      var p = pieces[i];
      var e = i < pieces.length - 1 ? '\n' : '';
      if (hasCR && p.indexOf('\r') >= 0) {
        if (e === '\n' && p.charAt(p.length - 1) === '\r') {
          p = p.slice(0, -1);
          e = '\r\n';
        }
        // Lone CRs inside the piece are line breaks of their own.
        var parts = p.split('\r');
        for (var k = 0; k < parts.length - 1; k++) {
          rows.push({ c: parts[k], e: '\r' });
          cr++;
        }
        p = parts[parts.length - 1];
      }
      if (e === '\r\n') crlf++;
      else if (e === '\n') lf++;
      rows.push({ c: p, e: e });
    }
    var eol = '\n';
    if (crlf > lf && crlf >= cr) eol = '\r\n';
    else if (cr > lf && cr > crlf) eol = '\r';
    return {
      bom: bom,
      rows: rows,
      eol: eol,
      hasEol: rows.length > 1,
      endsWithNewline: rows.length > 1 && rows[rows.length - 1].c === ''
    };
  }

  // joinRows joins rows; every row but the last ends with its own ending (or eol when it
  // has none — a new row or a former last row), the last row with none. A lone CR ending,
  // an empty row and a LF ending would read as one CRLF break and lose a line (found by
  // FuzzVerbs: appending to "\n\r"); rows that newly meet so get a CR ending for the empty
  // row if its ending is new, else a CRLF ending for the row before it. bom ('' or U+FEFF)
  // starts the text; a first row that brings its own BOM then loses it (never two).
  function joinRows(rows, eol, bom) {
    var parts = new Array(rows.length * 2);
    var last = rows.length - 1;
    var prev = '';
    for (var i = 0; i < rows.length; i++) {
      var c = rows[i].c;
      var e = i < last ? rows[i].e || eol : '';
      if (prev === '\r' && c === '' && e === '\n') {
        if (rows[i].e === '') e = '\r';
        else parts[2 * i - 1] = '\r\n';
      }
      parts[2 * i] = c;
      parts[2 * i + 1] = e;
      prev = e;
    }
    if (bom) {
      if (parts[0].charCodeAt(0) === 0xfeff) parts[0] = parts[0].slice(1);
      parts[0] = bom + parts[0];
    }
    return parts.join('');
  }

  // finish joins the rows of a node verb, keeping whether the document ended with a line
  // break (a verb may have appended after the final empty line).
  function finish(doc, rows) {
    if (doc.endsWithNewline && rows[rows.length - 1].c !== '') rows.push({ c: '', e: '' });
    return joinRows(rows, doc.eol, doc.bom);
  }

  // ---- addressing ---------------------------------------------------------------------

  var LINE_REF_RE = /^line:([0-9]+)$/;

  // resolve finds the node a reference names (id, '#id' or 'line:N').
  function resolve(pd, ref, what) {
    if (ref === null || ref === undefined || ref === '') {
      throw inputError('missingId', 'no ' + what + ' given');
    }
    if (typeof ref !== 'string') throw inputError('badArgument', what + ' must be a string');
    var m = LINE_REF_RE.exec(ref);
    if (m) {
      var ln = parseInt(m[1], 10);
      var at = W._nodeAtLine(pd, ln);
      if (at !== null) return at;
      throw inputError('unknownId', 'no node starts at line ' + ln + given(what));
    }
    var id = ref.charAt(0) === '#' ? ref.slice(1) : ref;
    var node = pd.byId[id];
    if (!node) throw inputError('unknownId', 'no node has the id "' + id + '"' + given(what));
    return node;
  }

  function given(what) {
    return what === 'id' ? '' : ' (given as ' + what + ')';
  }

  function optionalRef(pd, ref, what) {
    return ref === null || ref === undefined || ref === '' ? null : resolve(pd, ref, what);
  }

  function nodeName(n) {
    return n.id !== null ? '#' + n.id : '"' + n.label + '" (line ' + n.line + ')';
  }

  // subtreeEnd returns the index in pd.all of the last node of root's subtree (pre-order
  // makes a subtree the contiguous index range root.index … subtreeEnd).
  function subtreeEnd(pd, root) {
    var n = root;
    while (n.children.length) n = n.children[n.children.length - 1];
    return n.index;
  }

  function widthOf(indent) {
    return indent.indexOf('\t') < 0 ? indent.length : indent.replace(TAB_RE, '  ').length;
  }

  function childIndent(parent) {
    var unit = parent.indent.indexOf('\t') >= 0 && parent.indent.indexOf(' ') < 0 ? '\t' : '  ';
    return parent.indent + unit;
  }

  function stripComment(s) {
    var i = s.indexOf('%%');
    return i < 0 ? s : s.slice(0, i);
  }

  // lastOwnedRow returns the 0-based index of the last row of a subtree in the tree part,
  // excluding the document's final empty row (a trailing `\` may have swallowed it).
  function lastOwnedRow(doc, node) {
    var end = node.lastTreeLine - 1;
    if (doc.endsWithNewline && end === doc.rows.length - 1) end--;
    return end;
  }

  function unsupported(what, node) {
    return inputError('unsupportedLine', 'cannot ' + what + ' ' + nodeName(node) +
      ' safely: its node line is split by a continuation (`\\`) in a way the verb cannot ' +
      'edit; rewrite the lines with werkbaum_write or werkbaum_apply_ops instead');
  }

  // ---- setStatus ----------------------------------------------------------------------

  // The help sentences come from the vocabulary (25_vocabulary.js), like the tool schemas.
  var STATUS_HELP = W._vocab.statusHelp();
  var SIZE_HELP = W._vocab.sizeHelp();
  var NEUTRAL = W._vocab.NEUTRAL;

  // statusCode turns a status argument into a box character, or null for "neutral".
  function statusCode(status) {
    if (status === null || NEUTRAL.indexOf(status) >= 0) return null;
    if (typeof status !== 'string') throw inputError('badStatus', 'status must be a string; ' + STATUS_HELP);
    var st = T.statusOf(status);
    if (!st) throw inputError('badStatus', 'unknown status "' + status + '"; ' + STATUS_HELP);
    return st.code;
  }

  function setStatusBox(line, code) {
    var m = STATUS_BOX_RE.exec(line);
    return m[1] + m[2] + (code === null ? '' : '[' + code + '] ') + line.slice(m[0].length);
  }

  // A host that handed the script its plan text may offer to build a one-row edit of it
  // itself: host.owns(text) is true when text is the host's own text and has no CR (its
  // rows are then the parser's lines), and host.splice(idx, content) is that text with the
  // content of row idx replaced. The Go engine does so (edit.go, Engine.Edit): a text built
  // in the script is UTF-16, and every later use of it cost a whole conversion in goja (the
  // split of the edit's parse alone 10 MB on a 10,000-node plan); the
  // host's text reaches the script as its own UTF-8 string and is converted once, if at
  // all. The result is the same text (TestEditEqualsApplyThenGuard, write_path.test.js).
  function hostOwns(host, text) {
    return host !== undefined && host !== null && host.owns(text) === true;
  }

  // replaceRow returns the text with the content of row idx (0-based) replaced, keeping
  // every line ending. Text without CR is spliced around the row (found through the parsed
  // lines) instead of being split into one object per line: a verb that changes one line
  // of a large plan then costs a few calls, not a few thousand.
  function replaceRow(text, pd, idx, content, host) {
    if (hostOwns(host, text)) return host.splice(idx, content);
    if (text.indexOf('\r') < 0) {
      var L = pd.lines;
      var off = text.charCodeAt(0) === 0xfeff ? 1 : 0; // the BOM is not part of line 1
      for (var i = 0; i < idx; i++) off += L[i].length + 1;
      return text.slice(0, off) + content + text.slice(off + L[idx].length);
    }
    var doc = splitDoc(text);
    var rows = doc.rows.slice();
    rows[idx] = { c: content, e: doc.rows[idx].e };
    return finish(doc, rows);
  }

  function setStatus(text, ref, status, host) {
    var code = statusCode(status);
    var pd = W.parse(text);
    var node = resolve(pd, ref, 'id');
    var have = node.box === null ? null : T.BOX_ALIASES[node.box] || node.box;
    if (have === code) return text;
    var row = node.line - 1;
    // Without CR, replaceRow splices the row's content and keeps every other byte: the
    // parse of the result is told so (parseBoxEdit's newLine) instead of comparing texts.
    var noCR = hostOwns(host, text) || text.indexOf('\r') < 0;
    var content = setStatusBox(noCR ? pd.lines[row] : splitDoc(text).rows[row].c, code);
    var out = replaceRow(text, pd, row, content, host);
    var after = W._nodeAtLine(W.parseBoxEdit(text, out, node.index, noCR ? content : undefined), node.line);
    if (!after || after.label !== node.label || after.parent !== node.parent ||
        (code === null ? after.box !== null : after.box !== code)) {
      throw unsupported('set the status of', node);
    }
    return out;
  }

  // ---- setSize ------------------------------------------------------------------------

  function sizeArg(size) {
    if (size === null || size === undefined || size === '') return null;
    if (typeof size !== 'string') throw inputError('badSize', 'size must be a string such as "M", or null');
    var s = size.trim().toUpperCase();
    if (s.charAt(0) === '(' && s.charAt(s.length - 1) === ')') s = s.slice(1, -1);
    if (!Object.prototype.hasOwnProperty.call(T.SIZE_RANK, s)) {
      throw inputError('badSize', 'unknown size "' + size + '"; ' + SIZE_HELP);
    }
    return s;
  }

  // lastSizeToken finds the last free-standing size token in the code part of a physical
  // line (from offset `from`), or null.
  function lastSizeToken(code, from) {
    var part = code.slice(from);
    if (part.indexOf('(') < 0) return null;
    SIZE_TOKEN_RE.lastIndex = 0;
    var m;
    var last = null;
    while ((m = SIZE_TOKEN_RE.exec(part)) !== null) last = m;
    if (!last) return null;
    var start = from + last.index + last[1].length;
    return { start: start, end: start + last[0].length - last[1].length, lead: last[1] };
  }

  // appendToken inserts ' tok' after the visible content of a line: before trailing
  // blanks, a continuation ' \' and a %% comment (NOTATION.md §22).
  function appendToken(line, tok) {
    var ci = line.indexOf('%%');
    var code = ci < 0 ? line : line.slice(0, ci);
    var comment = ci < 0 ? '' : line.slice(ci);
    var tail = '';
    var m = CONT_RE.exec(code);
    if (m) {
      tail = code.slice(m.index + m[1].length);
      code = code.slice(0, m.index + m[1].length);
    }
    var trimmed = code.replace(TRAILING_BLANKS_RE, '');
    return trimmed + ' ' + tok + code.slice(trimmed.length) + tail + comment;
  }

  function setSize(text, ref, size, host) {
    var want = sizeArg(size);
    var pd = W.parse(text);
    var node = resolve(pd, ref, 'id');
    if (node.size === want) return text;
    var noCR = hostOwns(host, text) || text.indexOf('\r') < 0;
    var contents = noCR ? pd.lines : splitDoc(text).rows.map(function (r) {
      return r.c;
    });
    var changed = -1; // the one row the verb changes, and its new content
    var changedTo = null;
    var phys = [node.line].concat(node.cont);
    var done = false;
    // The size token of a continued node line is the last one over all its physical lines.
    for (var k = phys.length - 1; k >= 0 && !done; k--) {
      var idx = phys[k] - 1;
      var code = stripComment(contents[idx]);
      var from = k === 0 ? PREFIX_RE.exec(code)[0].length : 0;
      var tok = lastSizeToken(code, from);
      if (!tok) continue;
      var c = contents[idx];
      if (want !== null) {
        c = c.slice(0, tok.start) + '(' + want + ')' + c.slice(tok.end);
      } else if (tok.lead !== '') {
        c = c.slice(0, tok.start - tok.lead.length) + c.slice(tok.end);
      } else {
        var end = tok.end;
        var next = c.charAt(end);
        if (next === ' ' || next === '\t') end++;
        c = c.slice(0, tok.start) + c.slice(end);
      }
      changed = idx;
      changedTo = c;
      done = true;
    }
    if (!done) {
      // No size yet: append it to the last physical line that carries content.
      for (var j = phys.length - 1; j >= 0; j--) {
        var rc = contents[phys[j] - 1];
        var body = stripComment(rc).replace(CONT_RE, '$1');
        if (BLANK_RE.test(body)) continue;
        changed = phys[j] - 1;
        changedTo = appendToken(rc, '(' + want + ')');
        done = true;
        break;
      }
    }
    var out = done ? replaceRow(text, pd, changed, changedTo, host) : text;
    var after = done ? W._nodeAtLine(W.parse(out), node.line) : null;
    if (!after || after.size !== want || after.label !== node.label || after.parent !== node.parent) {
      throw unsupported('set the size of', node);
    }
    return out;
  }

  // ---- addNode ------------------------------------------------------------------------

  // placement computes where a child goes under parent (null = root level) and with which
  // indentation. exclude is a node that does not count as an existing child (the node
  // being moved). Returns {at: 0-based row index to insert before, indent}.
  function placement(doc, pd, parent, after, exclude) {
    var siblings = parent ? parent.children : pd.roots;
    var others = [];
    for (var i = 0; i < siblings.length; i++) if (siblings[i] !== exclude) others.push(siblings[i]);
    if (after) {
      if (after === exclude) {
        throw inputError('badArgument', 'a node cannot be placed after itself (' + nodeName(after) + ')');
      }
      if (siblings.indexOf(after) < 0) {
        throw inputError('notAChild', nodeName(after) + ' is not a child of ' +
          (parent ? nodeName(parent) : 'the plan\'s roots') + '; "after" must name a sibling');
      }
      return { at: lastOwnedRow(doc, after) + 1, indent: after.indent };
    }
    if (parent) {
      var indent = others.length ? others[others.length - 1].indent : childIndent(parent);
      return { at: lastOwnedRow(doc, parent) + 1, indent: indent };
    }
    if (siblings.length) {
      var lastRoot = siblings[siblings.length - 1];
      return { at: lastOwnedRow(doc, lastRoot) + 1, indent: others.length ? others[others.length - 1].indent : '' };
    }
    // No node at all: before the separator, else at the end of the text.
    var at = pd.separatorLine !== null ? pd.separatorLine - 1 : doc.rows.length - (doc.endsWithNewline ? 1 : 0);
    return { at: at, indent: '' };
  }

  function addNode(text, parentRef, line, afterRef) {
    if (typeof line !== 'string') throw inputError('badLine', 'the node line must be a string');
    if (BREAK_RE.test(line)) {
      throw inputError('badLine', 'the node line must be a single line (no line breaks); add one node at a time');
    }
    var body = line.replace(LEAD_RE, '');
    if (BLANK_RE.test(stripComment(body))) throw inputError('badLine', 'the node line is empty');
    var pd = W.parse(text);
    var parent = optionalRef(pd, parentRef, 'parent');
    var after = optionalRef(pd, afterRef, 'after');
    var doc = splitDoc(text);
    var pl = placement(doc, pd, parent, after, null);
    var rows = doc.rows.slice();
    rows.splice(pl.at, 0, { c: pl.indent + body, e: '' });
    var out = finish(doc, rows);
    var npd = W.parse(out);
    var added = W._nodeAtLine(npd, pl.at + 1);
    var parentLine = parent ? parent.line : 0;
    if (!added || added.lastLine !== added.line || npd.all.length !== pd.all.length + 1 ||
        (added.parent < 0 ? 0 : npd.all[added.parent].line) !== parentLine) {
      throw inputError('badLine', 'the line "' + body + '" does not make exactly one node here ' +
        '(it must be a node line with a label, not a description, separator, comment or continued line)');
    }
    return out;
  }

  // ---- moveNode -----------------------------------------------------------------------

  function reindent(rows, oldIndent, newIndent) {
    var oldWidth = widthOf(oldIndent);
    var out = new Array(rows.length);
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var c = r.c;
      if (!BLANK_RE.test(c)) {
        if (c.slice(0, oldIndent.length) === oldIndent) {
          c = newIndent + c.slice(oldIndent.length);
        } else {
          var lead = LEAD_RE.exec(c)[0];
          var w = widthOf(lead);
          if (w >= oldWidth) c = newIndent + new Array(w - oldWidth + 1).join(' ') + c.slice(lead.length);
        }
      }
      out[i] = { c: c, e: r.e };
    }
    return out;
  }

  function moveNode(text, ref, parentRef, afterRef) {
    var pd = W.parse(text);
    var node = resolve(pd, ref, 'id');
    var parent = optionalRef(pd, parentRef, 'parent');
    var after = optionalRef(pd, afterRef, 'after');
    var last = subtreeEnd(pd, node);
    if (parent && parent.index >= node.index && parent.index <= last) {
      throw inputError('moveIntoItself', 'cannot move ' + nodeName(node) + ' under ' +
        (parent === node ? 'itself' : 'its own descendant ' + nodeName(parent)));
    }
    var doc = splitDoc(text);
    var start = node.line - 1;
    var end = lastOwnedRow(doc, node);
    if (end < node.lastTreeLine - 1) throw unsupported('move', node);
    var pl = placement(doc, pd, parent, after, node);
    var block = reindent(doc.rows.slice(start, end + 1), node.indent, pl.indent);
    var count = end - start + 1;
    var at = pl.at;
    if (at > end) at -= count;
    else if (at > start) at = start;
    var rows = doc.rows.slice(0, start).concat(doc.rows.slice(end + 1));
    Array.prototype.splice.apply(rows, [at, 0].concat(block));
    var out = finish(doc, rows);

    var npd = W.parse(out);
    var moved = W._nodeAtLine(npd, at + 1);
    var ok = moved && moved.label === node.label && npd.all.length === pd.all.length &&
      subtreeEnd(npd, moved) - moved.index === last - node.index;
    if (ok) {
      // The new parent sits above the insertion point; it moved up only if it came after
      // the block that was taken out.
      var wantParent = parent ? (parent.line > end + 1 ? parent.line - count : parent.line) : 0;
      var gotParent = moved.parent >= 0 ? npd.all[moved.parent].line : 0;
      ok = wantParent === gotParent;
    }
    if (!ok) throw unsupported('move', node);
    return out;
  }

  // ---- removeNode ---------------------------------------------------------------------

  function removeNode(text, ref, discard) {
    if (discard) return setStatus(text, ref, '-');
    var pd = W.parse(text);
    var node = resolve(pd, ref, 'id');
    var last = subtreeEnd(pd, node);
    var doc = splitDoc(text);
    var drop = Object.create(null);
    var end = lastOwnedRow(doc, node);
    for (var i = node.line - 1; i <= end; i++) drop[i] = true;
    // Description blocks of the removed nodes go too (they would be unknownDesc orphans).
    for (var b = 0; b < pd.descBlocks.length; b++) {
      var blk = pd.descBlocks[b];
      if (blk.node >= node.index && blk.node <= last) {
        for (var j = 0; j < blk.lines.length; j++) drop[blk.lines[j] - 1] = true;
      }
    }
    var rows = [];
    for (var k = 0; k < doc.rows.length; k++) if (!drop[k]) rows.push(doc.rows[k]);
    if (!rows.length) rows.push({ c: '', e: '' });
    var out = finish(doc, rows);
    if (W.parse(out).all.length !== pd.all.length - (last - node.index + 1)) {
      throw unsupported('remove', node);
    }
    return out;
  }

  // ---- applyOps (§25) -----------------------------------------------------------------

  function applyOps(text, ops) {
    if (!Array.isArray(ops)) throw inputError('badOps', 'ops must be a list of {op, index, count, lines}');
    var doc = splitDoc(text);
    // The one apply walk of §25 (58_lines.js), over rows that keep their line endings; new
    // rows get the document's. Every failure here is the agent's malformed request: badOps.
    var rows = W.doc._applyCore(doc.rows, ops, editWhere, newRow, 'badOps');
    if (!rows.length) return doc.bom;
    return joinRows(rows, doc.eol, doc.bom);
  }

  function editWhere(i) {
    return 'op ' + (i + 1);
  }

  function newRow(line) {
    return { c: line, e: '' };
  }

  // ---- write --------------------------------------------------------------------------

  // write replaces the whole text. Lines of the common start and end keep their exact
  // bytes and endings; the changed middle gets the document's ending (or the new text's
  // when the old text had no line break).
  function write(text, newText) {
    if (typeof newText !== 'string') throw inputError('badArgument', 'text must be a string');
    var doc = splitDoc(text);
    var nd = splitDoc(newText);
    var eol = doc.hasEol ? doc.eol : nd.eol;
    var a = doc.rows;
    var b = nd.rows;
    var p = 0;
    var max = Math.min(a.length, b.length);
    while (p < max && a[p].c === b[p].c) p++;
    var s = 0;
    while (s < max - p && a[a.length - 1 - s].c === b[b.length - 1 - s].c) s++;
    var rows = a.slice(0, p);
    for (var i = p; i < b.length - s; i++) rows.push({ c: b[i].c, e: '' });
    for (var j = a.length - s; j < a.length; j++) rows.push(a[j]);
    return joinRows(rows, eol, doc.bom || nd.bom);
  }

  // ---- dispatch -----------------------------------------------------------------------

  // host (optional) may build one-row edits (see replaceRow).
  var verbs = {
    setStatus: function (t, a, host) { return setStatus(t, a.id, a.status, host); },
    setSize: function (t, a, host) { return setSize(t, a.id, a.size, host); },
    addNode: function (t, a) { return addNode(t, a.parent, a.line, a.after); },
    moveNode: function (t, a) { return moveNode(t, a.id, a.parent, a.after); },
    removeNode: function (t, a) { return removeNode(t, a.id, !!a.discard); },
    applyOps: function (t, a) { return applyOps(t, a.ops); },
    write: function (t, a) { return write(t, a.text); }
  };

  function apply(text, verb, args, host) {
    if (!Object.prototype.hasOwnProperty.call(verbs, verb)) {
      throw inputError('badVerb', 'unknown verb "' + verb + '"; use one of ' + Object.keys(verbs).join(', '));
    }
    return verbs[verb](text, args || {}, host);
  }

  W.edit = {
    setStatus: setStatus,
    setSize: setSize,
    addNode: addNode,
    moveNode: moveNode,
    removeNode: removeNode,
    applyOps: applyOps,
    write: write,
    apply: apply,
    setStatusBox: setStatusBox,
    appendToken: appendToken,
    splitDoc: splitDoc
  };
})(Werkbaum);

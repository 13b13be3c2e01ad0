// Parser of the Werkbaum notation (NOTATION.md §1–§7, §10, §23 parser warnings).
//
// Werkbaum.parse(text) → document:
//   {
//     lines:         physical lines of the CR/CRLF-normalised text (lines[0] is line 1),
//     roots:         top-level nodes in document order (a forest),
//     all:           every node in document order (= pre-order; all[i].index === i),
//     byId:          map id → FIRST node carrying it (Object.create(null); a status edit's
//                    document layers its changes over the old map, see byIdWith: look
//                    ids up, for-in lists them, Object.keys does not),
//     warnings:      parser warnings in emission order (§23):
//                    descStray, unknownDesc, unknownStatus, duplicateId during the walk,
//                    then unknownDep, xorConflict, sizeConflict (post-passes),
//     separatorLine: 1-based line of the first `---` separator, or null,
//     descBlocks:    every description heading after the separator, in order:
//                    {line, id, node (index into all, or -1 for an unknown id), lines:
//                    [all physical lines the block owns: heading, text, blank lines]}
//   }
// Line numbers are always 1-based PHYSICAL lines of the input.
//
// Node record (fields of the reference parser, §4, plus positions for the editors):
//   line          first physical line of the node line
//   lastLine      last physical line of the logical node line (after continuation gluing)
//   cont          physical lines glued onto the node line by `\` continuation ([] if none)
//   indent        raw indentation string of the first line (width: TAB counts 2, §5)
//   depth         0 for roots
//   parent        index of the parent in doc.all, or -1 for a root
//   index         own index in doc.all
//   children      child nodes in document order
//   gate          raw gate character: '-', '+', '|', '=' or '' (none)
//   type          'and' | 'or' | 'xor'; optional (gate '+')
//   fold          '>' | '<' | null; box: raw box character or null (no box)
//   status        {code, key (English), name (German), rank} or null (neutral / unknown)
//   url, size ('XS'…'XXL' or null), tags [], marks [], id (or null), deps [], focus
//   label, labelFromId
//   desc          assembled description text or null; descLines: owned physical lines or null
//                 (continuation lines, short `"` lines, block heading/text/blank lines)
//   shortDescLines physical lines of the node's short `"` descriptions (first lines only)
//   sizeConflict  true when the §10 rule flagged the node
//   lastTreeLine  last physical line of the node's subtree in the tree part: the maximum of
//                 lastLine and shortDescLines over the node and all its descendants
//                 (continued short-description lines are included in this extent)
// Every list field is an array; empty lists are ONE shared frozen array and most one-entry
// lists are shared and frozen too, so node lists are read-only for consumers. lastLine,
// lastTreeLine, box, descLines and shortDescLines are getters, and many fields come from
// the node's prototype (see Node and Shape): read nodes, never write them. The description
// block of a node is found via doc.descBlocks (block.node === node.index).
(function (W) {
  'use strict';

  var T = W._text;
  var NAME = T.NAME;
  var STATUS_BY_CODE = T.STATUS_BY_CODE;
  var BOX_ALIASES = T.BOX_ALIASES;
  var GATE_BY_CODE = T.GATE_BY_CODE;

  // Regexps are compiled once. All are RE2-compatible (no lookarounds, no backreferences)
  // so goja hands them to Go's regexp; lookaheads of the reference regexps are replaced by
  // consuming groups plus an explicit check where the result would differ.
  var SEPARATOR_RE = /^[ \t]*-{3,}[ \t]*$/;
  var CONT_RE = /(^|[ \t])\\[ \t]*$/;
  var LEADING_BLANKS_RE = /^[ \t]+/;
  var TAB_RE = /\t/g;
  var URL_RE = /https?:\/\/\S+/i;
  var TAG_RE = new RegExp('@(' + NAME + ')', 'gu');
  var MARK_RE = new RegExp('(^|\\s)&(' + NAME + ')', 'gu');
  var ID_RE = new RegExp('(^|\\s)#(' + NAME + ')(:?)', 'u');
  var DEP_RE = new RegExp('(^|\\s):#(' + NAME + '(?:,#' + NAME + ')*)', 'gu');
  var HEADING_RE = new RegExp('^#(' + NAME + '):?\\s*$', 'u');
  var WS_SPLIT_RE = /\s+/;
  var WS_RUN_RE = /\s+/g;
  var NEEDS_COLLAPSE_RE = /[^\S ]| {2}/;
  var WS_CHAR_RE = /\s/;

  function stripComment(s) {
    var i = s.indexOf('%%');
    return i < 0 ? s : s.slice(0, i);
  }

  // The node-line prefix of §3,
  //   ^([ \t]*)([-|+]|=(?=[ \t]))?\s*(?:([><])(?=[ \t])\s*)?(?:\[([^\]])\]\s*)?(?:([><])(?=[ \t])\s*)?(.*)$
  // read by a scanner instead of a regexp: the regexp's result array is the most expensive
  // allocation per line in goja. Every optional part is greedy and the tail matches
  // anything, so the regexp never backtracks and the scanner below is equivalent (a test
  // compares both on generated lines). Results go to these variables (no allocation), and
  // the scanner calls no functions per character (a call allocates in goja).
  var pxIndent = 0; // end of group 1
  var pxGate = ''; // group 2's gate character or ''
  var pxFold = null; // group 3, else group 5
  var pxBox = null; // group 4 or null
  var pxRest = 0; // start of group 6

  // skipWS: index of the first code unit at or after p that is not JavaScript's \s.
  function skipWS(s, p) {
    var n = s.length;
    for (; p < n; p++) {
      var c = s.charCodeAt(p);
      if (c === 32 || (c >= 9 && c <= 13)) continue;
      if (c < 128) return p;
      if (c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
        c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff) continue;
      return p;
    }
    return p;
  }
  function scanPrefix(s) {
    var n = s.length;
    var p = 0;
    var c, d;
    while (p < n && ((c = s.charCodeAt(p)) === 32 || c === 9)) p++;
    pxIndent = p;
    pxGate = '';
    pxFold = null;
    pxBox = null;
    c = s.charCodeAt(p);
    if (c === 45 || c === 124 || c === 43) {
      pxGate = s.charAt(p); // - | +
      p++;
    } else if (c === 61) {
      d = s.charCodeAt(p + 1);
      if (d === 32 || d === 9) {
        pxGate = '=';
        p++;
      }
    }
    c = s.charCodeAt(p);
    if (c === 32 || c === 9 || c > 127 || (c >= 10 && c <= 13)) p = skipWS(s, p);
    c = s.charCodeAt(p);
    if (c === 62 || c === 60) {
      d = s.charCodeAt(p + 1);
      if (d === 32 || d === 9) {
        pxFold = s.charAt(p);
        p = skipWS(s, p + 1);
      }
    }
    if (s.charCodeAt(p) === 91 && p + 2 < n && s.charCodeAt(p + 1) !== 93 && s.charCodeAt(p + 2) === 93) {
      pxBox = s.charAt(p + 1);
      p = skipWS(s, p + 3);
    }
    c = s.charCodeAt(p);
    if (c === 62 || c === 60) {
      d = s.charCodeAt(p + 1);
      if (d === 32 || d === 9) {
        if (pxFold === null) pxFold = s.charAt(p);
        p = skipWS(s, p + 1);
      }
    }
    pxRest = p;
  }

  // SIZE_ANY_CASE maps every spelling of a size code (the reference matches them
  // case-insensitively, ASCII only) to its canonical form.
  var SIZE_ANY_CASE = Object.create(null);
  T.SIZES.forEach(function (code) {
    var variants = [''];
    for (var i = 0; i < code.length; i++) {
      var next = [];
      for (var j = 0; j < variants.length; j++) {
        next.push(variants[j] + code.charAt(i), variants[j] + code.charAt(i).toLowerCase());
      }
      variants = next;
    }
    for (var k = 0; k < variants.length; k++) SIZE_ANY_CASE[variants[k]] = code;
  });

  // isSpace: JavaScript's \s for one UTF-16 code unit.
  function isSpace(c) {
    if (c < 128) return c === 32 || (c >= 9 && c <= 13);
    return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
      c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
  }

  // NONE is the shared, frozen empty list of nodes that have no tags, marks, deps,
  // children, continuation or short-description lines (saves thousands of allocations
  // per parse in goja). Consumers must treat every list of a node as read-only.
  var NONE = Object.freeze([]);

  // FAST_RE reads the common physical line of the tree part in ONE regexp call (each call
  // of a string method costs about as much as a regexp exec in goja, and the general path
  // below makes some sixty of them per node line). It matches only lines whose meaning is
  // plain, and every line it does not match takes the general path, so it may reject
  // freely but must never accept a line the general path reads differently:
  //   1: a short description line `"` + blank + text (no `%`, no `\`)
  //   or a node line: 2 the prefix (indentation of spaces only, gate `-`, `|`, `+` or `=` +
  //   blank, box, a fold mark `>` or `<` + blanks before or after the box or both, the
  //   first one counting, as in scanPrefix), then 3 a leading `#id` (a name, see FA; its
  //   colon is swallowed because a blank follows), 4 the label: words of characters that start no token (no blank other
  //   than single spaces between words, no `@ & # ( ! \ % < >`, a colon only at a word's
  //   end, and a first character that is no gate, box, quote or `-` so that the regexp
  //   cannot give the prefix back), then the tail: blank-separated size, @tag, &mark, #id
  //   (when no id came before), :#dep and URL tokens, then blanks and an
  //   optional `%%` comment. The tail's usual start is read by groups of its own (5 an id;
  //   6 a size and a first tag; 7 a first mark, 8 a single dependency; in this order, each
  //   optional; a token gives no string to slice and no list to split), 9 is the rest of the
  //   tail, token by token in fastTail. The groups take tokens from the left only, so every
  //   list keeps the line's order. Groups 2 and 6 are the node's shape (see Shape).
  // A continuation (trailing `\`), a URL anywhere but in the tail, a focus mark, a name with a letter
  // outside the Basic Multilingual Plane, a tab in the indentation or anything unusual
  // fails the match. FA, a name, takes every BMP letter and digit (@jörg, #prüf): with
  // ASCII names only, a fifth of the lines of a plan with German names took the general
  // path, which costs several times the regexp; a fold mark took it too, about fifteen times
  // the cost of a fast line in goja (a sixth of the general lines of the 10,000-node plan).
  // fastLine reads it with split (the match is the whole line, so the answer is ['', the
  // nine groups, ''], or [line] when it does not match), under the `u` flag, which means the
  // same here: the pattern has no escape the flag refuses, and a class takes an astral
  // character whole where it took both halves, which only the label's negated classes can
  // do. The reason is the engine: goja runs exec on a line with a non-ASCII character through
  // Go's regexp on a rune reader, its slowest matcher, and a search for all matches under
  // `u` (split is one) on the line converted to UTF-8, where Go's backtracker runs. On the
  // generated 10,000-node plan a non-ASCII line took 10.2 µs with exec and takes 4.9 with
  // split (an ASCII line 2.8 and 3.3), and the parse 251 ms and 204 (docs/bench-werkbaum.md,
  // eighth round).
  var FA = '[' + T.NAME_CHARS_BMP + ']+';
  // The prefix (indentation, gate, fold mark, box) and the size-and-tag part of a node line;
  // PREFIX_RE and shapeFields take them apart when a shape is made (see Shape).
  var PREFIX = ' *(?:(?:[-|+]|=[ \\t])[ \\t]*)?(?:[<>][ \\t]+)?(?:\\[[^\\]]\\][ \\t]*)?(?:[<>][ \\t]+)?';
  var PREFIX_RE = /^( *)(?:([-|+]|=[ \t])[ \t]*)?(?:([<>])[ \t]+)?(?:\[([^\]])\][ \t]*)?(?:([<>])[ \t]+)?$/;
  var SIZE_TAG = '(?:[ \\t]+\\((?:XS|S|M|L|XL|XXL)\\))?(?:[ \\t]+@' + FA + ')?';
  // A URL in the tail (URL_RE, case-insensitive; no `%`, which may start a comment, and no
  // `\`, which may continue the line): everything it holds is the URL's, as in extract,
  // which removes the URL first.
  var FAST_URL = '[hH][tT][tT][pP][sS]?://[^\\s%\\\\]+';
  var FAST_RE = new RegExp(
    '^(?:[ \\t]*"[ \\t]([^%\\\\]*)|' +
    '(' + PREFIX + ')(?:#(' + FA + '):?[ \\t]+)?' +
    '([^\\s@&#(!\\\\%:<>"|+=\\[\\-][^\\s@&#(!\\\\%:<>]*:?(?: [^\\s@&#(!\\\\%:<>]+:?)*)' +
    '(?:[ \\t]+#(' + FA + '):?)?(' + SIZE_TAG + ')(?:[ \\t]+&(' + FA + '))?' +
    '(?:[ \\t]+:#(' + FA + '))?' +
    '((?:[ \\t]+(?:\\((?:XS|S|M|L|XL|XXL)\\)|[@&]' + FA + '|#' + FA + ':?|:#' + FA + '(?:,#' + FA + ')*|' + FAST_URL + '))*)' +
    '[ \\t]*(?:%%.*)?)$', 'u');
  var TAIL_TOKEN_RE = /[^ \t]+/g;
  var FAST_SIZE = { '(XS)': 'XS', '(S)': 'S', '(M)': 'M', '(L)': 'L', '(XL)': 'XL', '(XXL)': 'XXL' };

  // fastTail applies the tail tokens of a FAST_RE match to the node; false when the tail
  // holds two size tokens or a second URL (only the last size and the first URL count, the
  // others stay in the label: general path); a second id goes to the label here. The node's lists may be shared (its shape's,
  // NONE): a list gets a copy of its own before its first new entry.
  function fastTail(tail, node) {
    var toks = tail.match(TAIL_TOKEN_RE);
    var tags = null;
    var marks = null;
    var deps = null;
    for (var i = 0; i < toks.length; i++) {
      var t = toks[i];
      var c = t.charCodeAt(0);
      if (c === 40) { // (
        if (node.size !== null) return false;
        node.size = FAST_SIZE[t];
      } else if (c === 64) { // @
        if (tags === null) node.tags = tags = node.tags.slice();
        tags.push(t.slice(1));
      } else if (c === 38) { // &
        if (marks === null) node.marks = marks = node.marks.slice();
        marks.push(t.slice(1));
      } else if (c === 35) { // #id or #id: (a blank or the end follows, so the colon goes)
        if (node.id === null) node.id = t.charCodeAt(t.length - 1) === 58 ? t.slice(1, -1) : t.slice(1);
        else {
          // A second free-standing #token stays in the label, whole, after the label's words
          // (the other tail tokens leave the text), and may be a ticket ref.
          node.label += ' ' + t;
          node._plainLabel = false;
        }
      } else if (c === 58) { // :#a,#b
        if (deps === null) node.deps = deps = node.deps.slice();
        var parts = t.slice(2).split(',#');
        for (var j = 0; j < parts.length; j++) deps.push(parts[j]);
      } else { // a URL: the first one counts, a second stays in the label
        if (node.url !== null) return false;
        node.url = t;
      }
    }
    return true;
  }

  // extract applies the token extraction of §4 to the rest of a node line (group 6).
  // Matches are collected with String.prototype.match and removed with replace patterns,
  // so no JavaScript callback runs per token.
  function extract(rest, node) {
    var m, i, ms;
    // 1. URL (first match, removed).
    if (rest.indexOf('://') >= 0) {
      m = URL_RE.exec(rest);
      if (m) {
        node.url = m[0];
        rest = rest.slice(0, m.index) + rest.slice(m.index + m[0].length);
      }
    }
    // 2. Size: the LAST free-standing (XS)…(XXL), replaced by its leading blank. Every
    // candidate "(code)" preceded by whitespace or the start is a match of the reference's
    // global regexp (matches cannot overlap), so the last match is the last candidate:
    // found from the end with lastIndexOf instead of a regexp.
    var open = rest.lastIndexOf('(');
    while (open >= 0) {
      var close = rest.indexOf(')', open + 1);
      if (close > open + 1 && close <= open + 4) {
        var code = SIZE_ANY_CASE[rest.slice(open + 1, close)];
        if (code !== undefined) {
          var before = open === 0 ? 32 : rest.charCodeAt(open - 1);
          if (isSpace(before)) {
            node.size = code;
            rest = rest.slice(0, open) + rest.slice(close + 1);
            break;
          }
        }
      }
      open = open > 0 ? rest.lastIndexOf('(', open - 1) : -1;
    }
    // 3. People tags (not anchored to a blank), removed.
    if (rest.indexOf('@') >= 0) {
      ms = rest.match(TAG_RE);
      if (ms !== null) {
        node.tags = [];
        for (i = 0; i < ms.length; i++) node.tags.push(ms[i].slice(1));
        rest = rest.replace(TAG_RE, '');
      }
    }
    // 4. Keywords, replaced by the leading blank.
    if (rest.indexOf('&') >= 0) {
      ms = rest.match(MARK_RE);
      if (ms !== null) {
        node.marks = [];
        for (i = 0; i < ms.length; i++) node.marks.push(ms[i].slice(ms[i].charAt(0) === '&' ? 1 : 2));
        rest = rest.replace(MARK_RE, '$1');
      }
    }
    if (rest.indexOf('#') >= 0) {
      // 5. Node id: the first free-standing #token; a directly following colon is
      // swallowed only when whitespace or the end of the line follows it.
      m = ID_RE.exec(rest);
      if (m) {
        node.id = m[2];
        var end = m.index + m[0].length;
        if (m[3] && end < rest.length && !WS_CHAR_RE.test(rest.charAt(end))) end--;
        rest = rest.slice(0, m.index) + m[1] + rest.slice(end);
      }
      // 6. Dependencies.
      if (rest.indexOf(':#') >= 0) {
        ms = rest.match(DEP_RE);
        if (ms !== null) {
          node.deps = [];
          for (i = 0; i < ms.length; i++) {
            var parts = ms[i].slice(ms[i].indexOf(':#') + 2).split(',');
            for (var j = 0; j < parts.length; j++) node.deps.push(j === 0 ? parts[j] : parts[j].slice(1));
          }
          rest = rest.replace(DEP_RE, '$1');
        }
      }
    }
    // 7. Focus mark and 8. label. Without `!!!` the label is the collapsed text; otherwise a
    // free-standing `!!!` is a whitespace-separated token that is exactly `!!!`, and dropping
    // such tokens equals the reference's replace-then-collapse.
    if (rest.indexOf('!!!') < 0) {
      // Trim first, then collapse (same result): blanks left by removed tokens are mostly
      // at the ends, and collapsing only changes text with a non-space whitespace or two
      // blanks in a row inside.
      var label = rest.trim();
      if (NEEDS_COLLAPSE_RE.test(label)) label = label.replace(WS_RUN_RE, ' ');
      node.label = label;
      return;
    }
    var words = rest.split(WS_SPLIT_RE);
    var out = [];
    for (var w = 0; w < words.length; w++) {
      var word = words[w];
      if (word === '') continue;
      if (word === '!!!') {
        node.focus = true;
        continue;
      }
      out.push(word);
    }
    node.label = out.join(' ');
  }

  // Node is the parsed node record. Fields that most nodes leave at their default live on
  // the prototype, and fields that follow from others are getters on it: goja keeps an
  // object's own properties in a Go map, whose storage is rebuilt at 9 and at 15 entries, and
  // at 15 or more a parse of 2,000 nodes took 5 ms longer (BenchmarkPhase). A node owns only
  // what differs and what its shape does not hold (see Shape). toJSON serialises every
  // field, so the JSON shape is complete. Consumers only read node fields; the getters have
  // no setters.
  var FIELDS = ['line', 'lastLine', 'cont', 'indent', 'depth', 'parent', 'index', 'children', 'gate', 'type',
    'optional', 'fold', 'box', 'status', 'url', 'size', 'tags', 'marks', 'id', 'deps', 'focus', 'label',
    'labelFromId', 'desc', 'descLines', 'shortDescLines', 'sizeConflict', 'lastTreeLine'];
  function Node() {}
  // A node's description data (_d) is {entries, lines, short, shortEnd, owned}: the entries
  // of its description and the lines it owns while parsing, the first lines of its short
  // descriptions and the last line of the last one, and the owned lines (null when none)
  // after parsing. The assembled text is the node's own desc (read for every record, so no
  // getter). Object literals, not a constructor: a call costs in goja.
  // SIZE_MIN: the lower bound 2^rank of each size's range (§10).
  var SIZE_MIN = { XS: 1, S: 2, M: 4, L: 8, XL: 16, XXL: 32 };

  // sizeMinOf is what the node adds to its parent's need in the §10 rule: the lower bound of
  // its size, 0 when it does not count (no size, optional, discarded). Kept as _sizeMin, on
  // the shape for most nodes, so the rule reads one field per child.
  function sizeMinOf(node) {
    if (node.size === null || node.optional || (node.status !== null && node.status.code === '-')) return 0;
    return SIZE_MIN[node.size];
  }
  Node.prototype = {
    line: 0,
    cont: NONE,
    indent: '',
    depth: 0,
    parent: -1,
    index: -1,
    children: NONE,
    gate: '',
    type: 'and',
    optional: false,
    fold: null,
    box: null,
    status: null,
    url: null,
    size: null,
    tags: NONE,
    marks: NONE,
    id: null,
    deps: NONE,
    focus: false,
    label: '',
    labelFromId: false,
    sizeConflict: false,
    desc: null,
    _d: null, // description data (see descOf), or null for a node without description lines
    _box: null, // the box character when it is not its status's code ('X', an unknown code)
    _sizeMin: 0, // sizeMinOf, once the node's fields are set
    // true when the label has no '#' (FAST_RE's labels: shapes), so it holds no ticket ref;
    // the model then skips a string search, which costs a wrapper object per call in goja.
    _plainLabel: false,
    // The last line of the logical node line: its last continuation line, if any.
    get lastLine() {
      var c = this.cont;
      return c.length ? c[c.length - 1] : this.line;
    },
    // The subtree's last line: every line of a subtree follows its root's lines and short
    // descriptions, so it is the last child's, and a leaf's own last line otherwise.
    get lastTreeLine() {
      var ch = this.children;
      if (ch.length) return ch[ch.length - 1].lastTreeLine;
      var end = this.lastLine;
      var d = this._d;
      return d !== null && d.shortEnd > end ? d.shortEnd : end;
    },
    get box() {
      if (this._box !== null) return this._box;
      var st = this.status;
      return st === null ? null : st.code;
    },
    get descLines() {
      return this._d === null ? null : this._d.owned;
    },
    get shortDescLines() {
      return this._d === null ? NONE : this._d.short;
    },
    toJSON: function () {
      var o = {};
      for (var i = 0; i < FIELDS.length; i++) o[FIELDS[i]] = this[FIELDS[i]];
      return o;
    }
  };

  // setGate sets the fields of a gate character (for FAST_RE, `=` comes with its blank).
  function setGate(node, gate) {
    var c = gate.charAt(0);
    var g = GATE_BY_CODE[c];
    node.gate = c;
    if (g.type !== 'and') node.type = g.type;
    if (g.optional) node.optional = true;
  }

  // setBox sets the status of a box character (st: its status, undefined when unknown).
  function setBox(node, box, st) {
    if (st) node.status = st;
    if (!st || BOX_ALIASES[box] !== undefined) node._box = box;
  }

  // Shapes. A goja object keeps its own properties in a Go map, whose storage is rebuilt at
  // 9 entries; a node that owned its indentation, gate, box, size and tag besides its line,
  // id, label and place in the tree passed 8, and parsing 2,000 such nodes took 4 ms more.
  // Most lines of a plan repeat a few combinations of these five and the fold mark, so a
  // fast-path node gets them from a shared prototype, its shape, keyed by the text of
  // FAST_RE's groups 2 (the prefix) and 6 (size and tag), which determines the six; the
  // regexp does not capture them one by one, which saves six strings per line. A shape is a Node whose fields are
  // never written after it is made; a node that reads more tail tokens owns what they
  // change. The shapes stay with the runtime for the next parse; when there are too many,
  // the next parse starts the table afresh (shapedNode), and it goes with the memo when the
  // host empties that after idling: made amid a parse's garbage, each shape kept a few Go
  // heap spans in use, and an idle daemon held 0.5 MB more per runtime (BenchmarkEngineRSS).
  var MAX_SHAPES = 4096; // prefixes and shapes together
  var prefixes = Object.create(null); // group 2's text → Prefix
  var shapeCount = 0;
  // The shapes' tag lists: one frozen list per name, shared by the shapes that name it (a
  // plan has a few people and thousands of shapes), made and dropped with the table.
  var tagLists = Object.create(null);
  W._onClearMemo(function () {
    prefixes = Object.create(null);
    tagLists = Object.create(null);
    shapeCount = 0;
  });

  // Prefix is a prefix taken apart, with the shapes of its size-and-tag texts.
  function Prefix(text) {
    var m = PREFIX_RE.exec(text);
    this.indent = m[1];
    this.width = m[1].length;
    this.gate = m[2] === undefined ? '' : m[2];
    this.fold = m[3] !== undefined ? m[3] : m[5] !== undefined ? m[5] : null; // the first one counts
    this.box = m[4] === undefined ? null : m[4];
    // The box when its code is unknown (§4: the line warns), else null: what the tree walk
    // must check of a shaped node's box (its status is the shape's).
    this.unknownBox = this.box !== null && !STATUS_BY_CODE[BOX_ALIASES[this.box] || this.box] ? this.box : null;
    this.shapes = Object.create(null); // group 6's text → Shape
  }

  // prefixOf returns the Prefix of group 2's text; once the table is full, a new prefix is
  // taken apart for its line only (and makes no shapes).
  function prefixOf(text) {
    var pre = prefixes[text];
    if (pre === undefined) {
      pre = new Prefix(text);
      if (shapeCount < MAX_SHAPES) {
        prefixes[text] = pre;
        shapeCount++; // prefixes count too: a line may make one without a shape
      }
    }
    return pre;
  }

  // shapeFields sets the six fields a prefix and a size-and-tag text determine. A shape
  // gets them once for all its nodes; a node whose combination finds the table full gets
  // them as fields of its own (the same values: one code path for both). sizeTag is what
  // FAST_RE's group 6, `(?:[ \t]+\((XS|S|M|L|XL|XXL)\))?(?:[ \t]+@NAME)?`, matched: the
  // size, if any, is the code inside the parentheses, the tag, if any, the name after the
  // `@` (a name holds none of `(` `)` `@`), so two searches take it apart. A regexp for it
  // cost a result array per shape, and on a non-ASCII name goja's slowest matcher: a
  // fresh runtime makes a shape for about every third line of a large plan (3,083 for
  // the generated 10,000-node plan), and its first parse took a fifth longer than the
  // next one (docs/bench-plans.md, "issue 33, third round").
  function shapeFields(o, pre, sizeTag) {
    if (pre.width !== 0) o.indent = pre.indent;
    if (pre.gate !== '') setGate(o, pre.gate);
    if (pre.fold !== null) o.fold = pre.fold;
    if (pre.box !== null) setBox(o, pre.box, STATUS_BY_CODE[BOX_ALIASES[pre.box] || pre.box]);
    if (sizeTag !== '') {
      var open = sizeTag.indexOf('(');
      if (open >= 0) o.size = sizeTag.slice(open + 1, sizeTag.indexOf(')', open));
      var at = sizeTag.indexOf('@');
      if (at >= 0) {
        var tag = sizeTag.slice(at + 1);
        o.tags = tagLists[tag] || (tagLists[tag] = Object.freeze([tag]));
      }
    }
    o._sizeMin = sizeMinOf(o);
    o._plainLabel = true;
  }

  // shapedNode returns a new node with the fields of its shape. Real plans have many
  // combinations (a generated 10,000-node plan with ten people 3,083, its 40,000-node
  // sibling 6,305; werkbaum.werkbaum 75): with a table of 256 that started afresh whenever
  // it was full, nearly every line of a large plan made a new shape. The table now holds
  // MAX_SHAPES and never starts afresh in the middle of a parse: combinations beyond it
  // own their fields; a full table starts afresh when the next parse begins (startShapes),
  // so it follows the plans being read. Parse and write of the 10,000-node plan cost about
  // a fifth less CPU with 4,096 than with 256 (docs/bench-werkbaum.md, fourth round).
  function shapedNode(pre, sizeTag) {
    var Shape = pre.shapes[sizeTag];
    if (Shape === undefined) {
      if (shapeCount >= MAX_SHAPES) {
        var node = new Node();
        shapeFields(node, pre, sizeTag);
        return node;
      }
      Shape = newShape(pre, sizeTag);
    }
    return new Shape();
  }

  function newShape(pre, sizeTag) {
    var proto = new Node();
    shapeFields(proto, pre, sizeTag);
    var Shape = function () {};
    Shape.prototype = proto;
    pre.shapes[sizeTag] = Shape;
    shapeCount++;
    return Shape;
  }

  // startShapes runs when a parse begins: a full table starts afresh.
  function startShapes() {
    if (shapeCount >= MAX_SHAPES) {
      prefixes = Object.create(null);
      tagLists = Object.create(null);
      shapeCount = 0;
    }
  }

  // gateOf returns the gate of a sibling group from its first member (§8).
  function gateOf(kids) {
    if (!kids.length) return 'and';
    var t = kids[0].type;
    return t === 'or' || t === 'xor' ? t : 'and';
  }

  // Per-node scratch data lives in side objects so node records keep one fixed shape.
  function addDescEntry(list, text) {
    if (text === '') {
      if (list.length && list[list.length - 1] !== '') list.push('');
      return;
    }
    list.push(text);
  }

  // descOf returns the node's description data, created on first use and listed in described.
  function descOf(node, described) {
    if (node._d === null) {
      node._d = { entries: [], lines: [], short: NONE, shortEnd: 0, owned: null };
      described[described.length] = node;
    }
    return node._d;
  }

  // shortDesc adds a short description line (§6) to the node above it.
  function shortDesc(node, text, first, cont, described) {
    if (node._d === null) { // the usual case, without calls
      node._d = { entries: text === '' ? [] : [text], lines: [first], short: [first],
        shortEnd: cont ? cont[cont.length - 1] : first, owned: null };
      described[described.length] = node;
      return;
    }
    var d = node._d;
    addDescEntry(d.entries, text);
    d.lines.push(first);
    if (d.short === NONE) d.short = [];
    d.short.push(first);
    d.shortEnd = cont ? cont[cont.length - 1] : first;
  }

  // xorCheck adds an xorConflict for every realized child after the first of a group whose
  // first raw child has type xor (§8); every child counts, whatever its own gate.
  function xorCheck(ch, out) {
    if (ch[0].type !== 'xor') return;
    var seen = 0;
    for (var j = 0; j < ch.length; j++) {
      if (ch[j].status !== null && ch[j].status.rank >= 2 && seen++) {
        out.push({ type: 'xorConflict', line: ch[j].line, label: ch[j].label });
      }
    }
  }

  // fastOff switches the FAST_RE path off (tests compare both paths).
  var fastOff = false;

  // The parse runs in the phases of §1: the tree part (walkTree: one line reader per line,
  // then the per-node checks and the hierarchy), the description part (walkDescriptions),
  // the assembly of the descriptions, and the post-passes. Each phase is one function over
  // the document and the walk's scratch lists.

  // Walk holds what the phases hand on to each other and the document does not show.
  function Walk() {
    this.described = []; // nodes with description data, in the order it was created
    this.single = Object.create(null); // name → the frozen list of that one name
    this.withDeps = []; // nodes with dependencies, in pre-order
    this.parents = []; // nodes with children, in pre-order
  }

  // The line readers answer with a node, SKIP (the line makes no node) or null (fastLine:
  // the general reader decides). What they know besides the node comes back in these
  // variables, so a line costs no answer object: the node's hierarchy width (§5), its raw
  // box when checkNode needs it (lnBox: every box of the general reader's nodes, whose box
  // checkNode sets; of a shaped node, whose shape holds its status, only an unknown one,
  // which warns), whether its shape gave it its prefix fields (lnShaped) and whether a
  // tail token set fields of its own (lnTailed), whether it has dependencies (lnDeps) and
  // whether checkNode has anything to do (lnCheck): a shaped node with a known box, no
  // tail and no id leaves it nothing (a third of the lines of the generated 10,000-node
  // plan), and the walk does not call it. The readers know these from their locals; the
  // walk would read them from the node, through its prototype chain in goja.
  var SKIP = Object.freeze({});
  var lnWidth = 0;
  var lnBox = null;
  var lnShaped = false;
  var lnTailed = false;
  var lnDeps = false;
  var lnCheck = true;

  // fastLine reads a common node or short-description line (§4, §6) with one regexp.
  function fastLine(doc, walk, line, first, lastNode) {
    var fm = line.split(FAST_RE);
    if (fm.length === 1) return null;
    return fastGroups(doc, walk, fm, 1, first, lastNode);
  }

  // fastGroups makes what a line that FAST_RE matched says, from the match's groups 1 to 9
  // in g[k] to g[k + 8] (a split's answer, or the host's answer for all lines, see
  // hostLineGroups).
  function fastGroups(doc, walk, g, k, first, lastNode) {
    var desc = g[k];
    if (desc !== undefined) {
      if (lastNode) shortDesc(lastNode, desc.trim(), first, null, walk.described);
      else doc.warnings.push({ type: 'descStray', line: first });
      return SKIP;
    }
    // The usual case, a known prefix and shape, takes no call: a call costs more than the
    // look-up in goja.
    var prefix = g[k + 1];
    var pre = prefixes[prefix];
    if (pre === undefined) pre = prefixOf(prefix);
    var id = g[k + 2];
    if (id === undefined) id = null;
    var id2 = g[k + 4];
    if (id2 !== undefined) {
      if (id !== null) return null; // a second free-standing #token stays in the label
      id = id2;
    }
    var sizeTag = g[k + 5];
    var Shape = pre.shapes[sizeTag];
    var node = Shape !== undefined ? new Shape() : shapedNode(pre, sizeTag);
    node.line = first;
    if (id !== null) node.id = id;
    node.label = g[k + 3];
    var mark = g[k + 6];
    var dep = g[k + 7];
    var tail = g[k + 8];
    if (tail === '') {
      // The lists have one entry each: shared frozen lists, one per name and parse.
      if (mark !== undefined) node.marks = walk.single[mark] || (walk.single[mark] = Object.freeze([mark]));
      if (dep !== undefined) node.deps = walk.single[dep] || (walk.single[dep] = Object.freeze([dep]));
      lnTailed = false;
      lnDeps = dep !== undefined;
      lnCheck = id !== null || pre.unknownBox !== null;
    } else {
      if (mark !== undefined) node.marks = [mark];
      if (dep !== undefined) node.deps = [dep];
      if (!fastTail(tail, node)) return null;
      lnTailed = true;
      lnDeps = node.deps !== NONE;
      lnCheck = true;
    }
    lnWidth = pre.width;
    lnBox = pre.unknownBox;
    lnShaped = true;
    return node;
  }

  // hostLineGroups, when the host provides it (the Go engine: W._setLineGroups), matches
  // every line of a text with FAST_RE at once: hostLineGroups(text) is a list of nine
  // entries per line, the match's groups 1 to 9, with null first for a line that FAST_RE
  // does not match; or null when the host declines the text. It is the same regexp run
  // by the same matcher (goja hands FAST_RE to Go's regexp), so it answers what a split
  // per line answers (TestHostLineGroupsEqualSplit), without a split's call and its list
  // per line: in goja those were a third of the parse (docs/bench-werkbaum.md). Node
  // has no host function and splits each line.
  var hostLineGroups = null;
  var hostOff = false;

  // logicalLine returns physical line i with its comment removed and its `\` continuations
  // glued on (§2), or null for the separator line. lnLast is the last physical index it
  // used, lnCont the 1-based numbers of the glued lines (null when none).
  var lnLast = 0;
  var lnCont = null;
  function logicalLine(lines, i) {
    var s = lines[i];
    var cm = s.indexOf('%%');
    if (cm >= 0) s = s.slice(0, cm);
    if (s.indexOf('---') >= 0 && SEPARATOR_RE.test(s)) return null;
    var cont = null;
    if (s.indexOf('\\') >= 0) {
      var n = lines.length;
      while (CONT_RE.test(s)) {
        s = s.replace(CONT_RE, '$1');
        if (i + 1 >= n) break;
        var c = s.charAt(s.length - 1);
        if (s !== '' && c !== ' ' && c !== '\t') s += ' ';
        i++;
        s += stripComment(lines[i]).replace(LEADING_BLANKS_RE, '');
        (cont || (cont = [])).push(i + 1);
      }
    }
    lnLast = i;
    lnCont = cont;
    return s;
  }

  // generalLine reads any logical line of the tree part: a blank line, a short description
  // (§6), or a node line (§3, §4).
  function generalLine(doc, walk, s, first, cont, lastNode) {
    // Blank line, or short description line: decided on the first character after the
    // leading blanks; trimStart (all JavaScript whitespace) only when that character is not
    // plain ASCII.
    var p0 = 0;
    var c0 = 0;
    var sl = s.length;
    while (p0 < sl && ((c0 = s.charCodeAt(p0)) === 32 || c0 === 9)) p0++;
    if (p0 === sl) return SKIP; // blank
    if (c0 > 127 || (c0 >= 10 && c0 <= 13)) {
      var t = s.trimStart();
      if (t === '') return SKIP; // blank
      p0 = s.length - t.length;
      c0 = s.charCodeAt(p0);
    }
    var c1 = s.charCodeAt(p0 + 1);
    if (c0 === 34 && (c1 === 32 || c1 === 9)) {
      if (lastNode) shortDesc(lastNode, s.slice(p0 + 2).trim(), first, cont, walk.described);
      else doc.warnings.push({ type: 'descStray', line: first });
      return SKIP;
    }

    scanPrefix(s);
    var node = new Node();
    var box = pxBox;
    node.line = first;
    if (cont) node.cont = cont;
    if (pxIndent !== 0) node.indent = s.slice(0, pxIndent);
    if (pxGate !== '') setGate(node, pxGate);
    if (pxFold !== null) node.fold = pxFold;
    extract(s.slice(pxRest), node);
    if (node.label === '') {
      if (node.id === null) return SKIP; // no node and no further effects (§4 step 8)
      node.label = '#' + node.id;
      node.labelFromId = true;
    }
    lnWidth = node.indent.indexOf('\t') < 0 ? pxIndent : node.indent.replace(TAB_RE, '  ').length;
    lnBox = box;
    lnShaped = false;
    lnDeps = node.deps !== NONE;
    lnCheck = true;
    return node;
  }

  // checkNode applies the rules of one node line that need no neighbours: the status code
  // (§4, unknownStatus), the size's minimum (§10), the first node of an id (duplicateId).
  function checkNode(doc, node, first, box, shaped, tailed) {
    if (box !== null) {
      var st = STATUS_BY_CODE[BOX_ALIASES[box] || box];
      if (!st) doc.warnings.push({ type: 'unknownStatus', line: first, code: box });
      if (!shaped) setBox(node, box, st);
    }
    if (!shaped || tailed) { // a tail token may have given a shaped node its size
      var sizeMin = sizeMinOf(node);
      if (sizeMin !== node._sizeMin) node._sizeMin = sizeMin;
    }
    if (node.id !== null) {
      var prev = doc.byId[node.id];
      if (prev) doc.warnings.push({ type: 'duplicateId', line: first, id: node.id, firstLine: prev.line });
      else doc.byId[node.id] = node;
    }
  }

  // walkTree reads the tree part, up to the first separator (§1 step 3), and places each
  // node under its parent in pre-order (§5). The placing is written out in the loop, with
  // the document's lists in locals: a call and a property read per line cost more than the
  // placing itself in goja.
  function walkTree(doc, walk, groups) {
    var lines = doc.lines;
    var n = lines.length;
    var all = doc.all;
    var roots = doc.roots;
    var parents = walk.parents;
    var withDeps = walk.withDeps;
    // The hierarchy stack (§5): nodes and their widths, [0, top) in use. Index writes instead
    // of push and pop: a native call costs more than the write in goja.
    var stackNodes = [null];
    var stackWidths = [-1];
    var top = 1;
    var lastNode = null;
    var count = 0; // all.length
    for (var i = 0; i < n; i++) {
      var first = i + 1;
      var cont = null;
      var node;
      if (groups !== null) {
        var k = i * 9;
        node = groups[k] === null ? null : fastGroups(doc, walk, groups, k, first, lastNode);
      } else node = fastOff ? null : fastLine(doc, walk, lines[i], first, lastNode);
      if (node === null) {
        var s = logicalLine(lines, i);
        if (s === null) {
          doc.separatorLine = first;
          return;
        }
        i = lnLast;
        cont = lnCont;
        node = generalLine(doc, walk, s, first, cont, lastNode);
      }
      if (node === SKIP) continue;
      if (lnCheck) checkNode(doc, node, first, lnBox, lnShaped, lnTailed);
      var width = lnWidth;
      while (stackWidths[top - 1] >= width) top--;
      var parent = stackNodes[top - 1];
      var index = count++;
      node.index = index;
      all[index] = node;
      if (cont) descOf(node, walk.described).lines = cont.slice();
      if (parent !== null) {
        node.parent = parent.index;
        node.depth = top - 1; // the stack holds the node's ancestors, from a root at 1

        var siblings = parent.children;
        if (siblings === NONE) {
          parent.children = siblings = [];
          parents[parents.length] = parent; // in pre-order: a first child follows its parent
        }
        siblings[siblings.length] = node;
      } else {
        roots[roots.length] = node;
      }
      if (lnDeps) withDeps[withDeps.length] = node;
      stackNodes[top] = node;
      stackWidths[top] = width;
      top++;
      lastNode = node;
    }
  }

  // walkDescriptions reads the description part (§7): the lines after the first separator,
  // comment-stripped, never glued. Most lines are text lines of an open block: the loop
  // keeps the open block's lists in locals, and the comment and separator checks run per
  // line only when the part has a `%%` or a `---` at all (two searches over the text
  // instead of two per line).
  function walkDescriptions(doc, walk, norm) {
    var lines = doc.lines;
    var n = lines.length;
    var separatorLine = doc.separatorLine;
    var warnings = doc.warnings;
    var i;
    var partStart = 0; // offset of the part in norm
    for (i = 0; i < separatorLine; i++) partStart += lines[i].length + 1;
    var mayComment = norm.indexOf('%%', partStart) >= 0;
    var maySeparator = norm.indexOf('---', partStart) >= 0;
    var block = null; // null = none, {node: null} = SKIP, else a real block
    var blockLines = null; // block.lines of the open block
    var descList = null; // the target node's description entries (null: no target)
    var descOwned = null; // the target node's owned lines
    for (i = separatorLine; i < n; i++) {
      var s = lines[i];
      if (mayComment) s = stripComment(s);
      var ln = i + 1;
      // A later separator (also an indented one) is ignored and keeps the open block (§2);
      // like the first one it is recognised before anything else.
      if (maySeparator && s.indexOf('---') >= 0 && SEPARATOR_RE.test(s)) continue;
      var trimmed = s.trim();
      if (trimmed === '') {
        if (block) {
          blockLines.push(ln);
          if (descList !== null) {
            if (descList.length && descList[descList.length - 1] !== '') descList.push('');
            descOwned.push(ln);
          }
        }
        continue;
      }
      var c0 = s.charCodeAt(0);
      if (c0 === 32 || c0 === 9) {
        if (!block) warnings.push({ type: 'descStray', line: ln });
        else {
          blockLines.push(ln);
          if (descList !== null) {
            descList.push(trimmed);
            descOwned.push(ln);
          }
        }
        continue;
      }
      var h = HEADING_RE.exec(s);
      if (h) {
        var target = doc.byId[h[1]] || null;
        blockLines = [ln];
        block = { line: ln, id: h[1], node: target, lines: blockLines };
        doc.descBlocks.push(block);
        descList = null;
        if (target) {
          var td = descOf(target, walk.described);
          td.lines.push(ln);
          descList = td.entries;
          descOwned = td.lines;
        } else warnings.push({ type: 'unknownDesc', line: ln, id: h[1] });
        continue;
      }
      warnings.push({ type: 'descStray', line: ln });
      block = null;
      descList = null;
    }
  }

  // assembleDescriptions joins each node's description entries (§7; subtree extents follow
  // from the tree: lastTreeLine) and turns the blocks' targets into node indices.
  function assembleDescriptions(doc, walk) {
    var described = walk.described;
    var i;
    for (i = 0; i < described.length; i++) {
      var dd = described[i]._d;
      var list = dd.entries;
      while (list.length && list[list.length - 1] === '') list.pop();
      if (list.length) described[i].desc = list.length === 1 ? list[0] : list.join('\n');
      if (dd.lines.length) dd.owned = dd.lines;
      dd.entries = NONE;
    }
    var blocks = doc.descBlocks;
    for (i = 0; i < blocks.length; i++) {
      blocks[i].node = blocks[i].node ? blocks[i].node.index : -1;
    }
  }

  // unknownDeps lists the dependencies on ids no node carries, in pre-order (§9).
  function unknownDeps(doc, walk) {
    var out = [];
    var withDeps = walk.withDeps;
    for (var k = 0; k < withDeps.length; k++) {
      var p = withDeps[k];
      var deps = p.deps;
      for (var j = 0; j < deps.length; j++) {
        if (!doc.byId[deps[j]]) out.push({ type: 'unknownDep', line: p.line, id: deps[j] });
      }
    }
    return out;
  }

  // groupConflicts checks every sibling group in pre-order, in one walk over the parents:
  // the xorConflicts of §8 go to xors (the pre-order starts at the virtual root: the
  // top-level nodes are one sibling group too, and their conflicts come first), and every
  // sized parent whose children need at least twice its size's minimum (§10) is flagged
  // and its sizeConflict goes to sizes. The tests that skip a call are written out: in
  // goja a call costs more than they do, and the two checks as two walks, one of them
  // with a second walk for the warnings, took 13–16 ms of a 10,000-node plan's parse.
  function groupConflicts(doc, walk, xors, sizes) {
    var roots = doc.roots;
    if (roots.length && roots[0].type === 'xor') xorCheck(roots, xors);
    var parents = walk.parents;
    for (var k = 0; k < parents.length; k++) {
      var p = parents[k];
      var ch = p.children;
      if (ch[0].type === 'xor') xorCheck(ch, xors);
      if (p.size !== null && sizeConflictOf(p)) {
        p.sizeConflict = true;
        sizes[sizes.length] = sizeWarning(p);
      }
    }
  }

  // sizeConflictOf is the rule of §10 for one parent.
  function sizeConflictOf(p) {
    if (p.size === null || p.size === 'XXL') return false;
    var ch = p.children;
    var counted = 0;
    var disj = ch[0].type !== 'and';
    var need = disj ? Infinity : 0;
    for (var j = 0; j < ch.length; j++) {
      var min = ch[j]._sizeMin;
      if (min === 0) continue;
      counted++;
      if (disj) {
        if (min < need) need = min;
      } else need += min;
    }
    return counted > 0 && need >= 2 * SIZE_MIN[p.size];
  }

  function sizeWarning(p) {
    return { type: 'sizeConflict', line: p.line, size: p.size };
  }

  function parse(text) {
    startShapes();
    var norm = T.normalize(text);
    var doc = {
      lines: norm.split('\n'),
      roots: [],
      all: [],
      byId: Object.create(null),
      warnings: [],
      separatorLine: null,
      descBlocks: []
    };
    var walk = new Walk();
    var groups = hostLineGroups === null || hostOff || fastOff ? null : hostLineGroups(norm);
    walkTree(doc, walk, groups);
    if (doc.separatorLine !== null) walkDescriptions(doc, walk, norm);
    assembleDescriptions(doc, walk);
    // The post-pass warnings follow the walk's, in this order (§1 step 4).
    var deps = unknownDeps(doc, walk);
    var xors = [];
    var sizes = [];
    groupConflicts(doc, walk, xors, sizes);
    doc.warnings = doc.warnings.concat(deps, xors, sizes);
    return doc;
  }

  // ---- The parse of a status edit -----------------------------------------------------
  // A write that sets one node's status changes one line, and only its box; the rest of the
  // document reads as before. parseBoxEdit makes the new text's document from the old one
  // instead of parsing the whole text again (two thirds of a write on a large plan): the
  // changed node and its ancestors are copied (documents are shared and read-only; a node
  // holds its children as objects, its parent by index), and what follows from a status is
  // recomputed: the node's status and size minimum, its line's unknownStatus warning, its
  // parent's sizeConflict, and the xorConflict and sizeConflict warnings. It answers null,
  // and the caller parses in full, unless the new text's lines are the old ones but that
  // node's (a single physical line), and that line, read alone, is the same node but for its
  // box. Proven equal to parse in Node (test/fastpath.test.js) and in goja (boxedit_test.go);
  // BenchmarkSize's write pays for it (docs/bench-werkbaum.md, sixth round).
  var LINE_FIELDS = ['line', 'cont', 'indent', 'gate', 'type', 'optional', 'fold', 'url', 'size', 'tags', 'marks',
    'id', 'deps', 'focus', 'label', 'labelFromId', '_plainLabel'];
  var boxEditOff = false;
  var POST_PASS = { unknownDep: true, xorConflict: true, sizeConflict: true };

  // copyOf is a copy of the array a. goja's Array.prototype.slice copies element by element
  // through its property machinery (its fast path never applies to the new array), while
  // Array.apply copies the argument list natively: 0.1 ms instead of 2 ms for 12,000
  // entries. Not for one entry (Array(n) of one number is n holes), nor for very long
  // arrays (V8 bounds the number of arguments).
  function copyOf(a) {
    return a.length < 2 || a.length > COPY_MAX ? a.slice() : Array.apply(null, a);
  }
  var COPY_MAX = 30000;

  // byIdWith is byId with the nodes of `changed` (copies of nodes byId names) in place of
  // theirs, as an object whose prototype is byId: copying a 10,000-id map took a tenth of a
  // write's script time. Lookups walk the chain of such layers, so after BYID_LAYERS of them
  // the map is copied flat again (depth counts the layers; a parsed document's map has none).
  var BYID_LAYERS = 16;
  function byIdWith(byId, depth, changed) {
    var layer = Object.create(byId);
    for (var i = 0; i < changed.length; i++) layer[changed[i].id] = changed[i];
    if (depth < BYID_LAYERS) return layer;
    var flat = Object.create(null);
    for (var id in layer) flat[id] = layer[id];
    return flat;
  }

  function sameList(a, b) {
    if (a === b) return true;
    if (a.length !== b.length) return false;
    for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }

  // copyNode is a node with n's fields, its own ones copied (the shape's stay shared).
  function copyNode(n) {
    var c = Object.create(Object.getPrototypeOf(n));
    var keys = Object.keys(n);
    for (var i = 0; i < keys.length; i++) c[keys[i]] = n[keys[i]];
    return c;
  }

  // readAlone reads line i of lines as the tree walk would, outside any document: the node
  // and its line's warnings, or null when it is no node or needs its neighbours (a glued
  // continuation).
  function readAlone(lines, i) {
    var scratch = { warnings: [], byId: Object.create(null) };
    var walk = new Walk();
    var node = fastOff ? null : fastLine(scratch, walk, lines[i], i + 1, null);
    if (node === null) {
      var s = logicalLine(lines, i);
      if (s === null || lnCont !== null) return null;
      node = generalLine(scratch, walk, s, i + 1, null, null);
    }
    if (node === SKIP) return null;
    checkNode(scratch, node, i + 1, lnBox, lnShaped, lnTailed);
    return { node: node, warnings: scratch.warnings };
  }

  // parseBoxEdit's newLine, when given, is what the caller knows: newText is the old text with the content
  // of the node's line replaced by newLine, every other byte kept (60_edit.js setStatus
  // splicing a text without CR). The new lines are then the old ones with that one
  // replaced, and neither the split of the whole new text nor the comparison of its lines
  // with the old ones is needed (a third of the parse's time on a 10,000-node plan).
  function parseBoxEdit(old, index, newText, newLine) {
    var node = old.all[index];
    if (!node || node.cont !== NONE) return null;
    var k = node.line - 1;
    var oldLines = old.lines;
    var lines, i;
    if (typeof newLine === 'string' && k < oldLines.length) {
      lines = copyOf(oldLines);
      lines[k] = newLine;
    } else {
      lines = T.normalize(newText).split('\n');
      if (lines.length !== oldLines.length) return null;
      for (i = 0; i < lines.length; i++) if (i !== k && lines[i] !== oldLines[i]) return null;
    }
    if (old.separatorLine !== null && k >= old.separatorLine - 1) return null;
    var read = readAlone(lines, k);
    if (read === null) return null;
    var fresh = read.node;
    for (var f = 0; f < LINE_FIELDS.length; f++) {
      var a = fresh[LINE_FIELDS[f]], b = node[LINE_FIELDS[f]];
      if (a !== b && !(Array.isArray(a) && Array.isArray(b) && sameList(a, b))) return null;
    }
    if (read.warnings.length) return null; // the new box is unknown, or the line warns otherwise

    var doc = {
      lines: lines,
      roots: old.roots,
      all: copyOf(old.all),
      byId: old.byId,
      byIdLayers: old.byIdLayers || 0, // byIdWith's layers over a flat map
      warnings: null,
      separatorLine: old.separatorLine,
      descBlocks: old.descBlocks
    };
    var changed = copyNode(node);
    changed.status = fresh.status;
    changed._box = fresh._box;
    changed._sizeMin = fresh._sizeMin;
    doc.all[index] = changed;
    var copies = [changed];
    // The ancestors, each with its children list holding the copy below it.
    var child = changed;
    var from = node;
    while (child.parent >= 0) {
      var parent = copyNode(old.all[child.parent]);
      var ch = copyOf(parent.children);
      ch[ch.indexOf(from)] = child;
      parent.children = ch;
      doc.all[parent.index] = parent;
      copies.push(parent);
      from = old.all[child.parent];
      child = parent;
    }
    doc.roots = copyOf(old.roots);
    doc.roots[doc.roots.indexOf(from)] = child;
    if (node.parent >= 0) {
      // Only its parent's need changed (§10): the children's size minimums it adds up.
      var p = doc.all[node.parent];
      var conflict = sizeConflictOf(p);
      if (conflict !== p.sizeConflict) p.sizeConflict = conflict;
    }
    var named = [];
    for (i = 0; i < copies.length; i++) {
      var c = copies[i];
      if (c.id !== null && old.byId[c.id] === old.all[c.index]) named.push(c);
    }
    if (named.length) {
      doc.byId = byIdWith(old.byId, doc.byIdLayers, named);
      doc.byIdLayers = doc.byIdLayers < BYID_LAYERS ? doc.byIdLayers + 1 : 0;
    }

    // The warnings: the walk's, less the old line's unknownStatus (a status edit writes a
    // known box), then the post-passes of §1 step 4 in their order. The post-passes' are
    // the old list's tail (unknownDep, xorConflict and sizeConflict come from them only),
    // and a status changes only two of its parts: the xorConflicts of the node's sibling
    // group and the sizeConflict of its parent. unknownDep reads no status.
    var end = old.warnings.length;
    while (end > 0 && POST_PASS[old.warnings[end - 1].type]) end--;
    var out = [];
    for (i = 0; i < end; i++) {
      var w = old.warnings[i];
      if (w.line !== node.line || w.type !== 'unknownStatus') out.push(w);
    }
    var deps = [];
    var xors = [];
    var sizes = [];
    for (i = end; i < old.warnings.length; i++) {
      w = old.warnings[i];
      (w.type === 'unknownDep' ? deps : w.type === 'xorConflict' ? xors : sizes).push(w);
    }
    var P = node.parent;
    var group = [];
    xorCheck(P >= 0 ? doc.all[P].children : doc.roots, group);
    doc.warnings = out.concat(deps, groupSpliced(old, xors, P, group),
      P >= 0 ? sizeSpliced(sizes, doc.all[P]) : sizes);
    return doc;
  }

  // groupSpliced is the xorConflict list xors (in pre-order of the sibling groups' parents,
  // the top level first) with the group under parent P (-1: the top level) replaced by
  // `group`, that group's xorConflicts now.
  function groupSpliced(old, xors, P, group) {
    var out = [];
    var placed = false;
    for (var i = 0; i < xors.length; i++) {
      var q = W._nodeAtLine(old, xors[i].line).parent;
      if (q === P) continue;
      if (q > P && !placed) {
        out = out.concat(group);
        placed = true;
      }
      out.push(xors[i]);
    }
    return placed ? out : out.concat(group);
  }

  // sizeSpliced is the sizeConflict list sizes (in pre-order, which is line order) with
  // parent p's warning as p's flag has it now.
  function sizeSpliced(sizes, p) {
    var out = [];
    var placed = !p.sizeConflict;
    for (var i = 0; i < sizes.length; i++) {
      if (sizes[i].line === p.line) continue;
      if (sizes[i].line > p.line && !placed) {
        out.push(sizeWarning(p));
        placed = true;
      }
      out.push(sizes[i]);
    }
    if (!placed) out.push(sizeWarning(p));
    return out;
  }

  // W.parse memoises (05_text.js Memo): documents are read-only for every consumer.
  var parsed = W._memo();
  W.parse = function (text) {
    var doc = parsed.get(text);
    if (doc === null) {
      doc = parse(text);
      parsed.put(text, doc);
    }
    return doc;
  };
  // W.parseBoxEdit(oldText, newText, index) is W.parse(newText) for a text that a status
  // edit of node `index` made from oldText: from the old document when parseBoxEdit can,
  // else in full; memoised like W.parse.
  // newLine (optional): see parseBoxEdit.
  W.parseBoxEdit = function (oldText, newText, index, newLine) {
    var doc = parsed.get(newText);
    if (doc === null) {
      var old = W.parse(oldText);
      if (!boxEditOff) doc = parseBoxEdit(old, index, newText, newLine);
      if (doc === null) doc = parse(newText);
      else lastBoxEdit = { doc: doc, from: old, index: index };
      parsed.put(newText, doc);
    }
    return doc;
  };
  // W._boxEditOrigin(doc) is {doc, from, index} when doc is the document the last
  // parseBoxEdit made (from the old document `from` by a status edit of node `index`), else
  // null: the analysis of the edited text then starts from the old one's model
  // (50_analyze.js). One edit is kept, so no chain of old documents stays reachable; the
  // memo's trim and clear forget it (the old document is all it would keep alive then).
  var lastBoxEdit = null;
  W._onTrimMemo(function () {
    lastBoxEdit = null;
  });
  W._boxEditOrigin = function (doc) {
    return lastBoxEdit !== null && lastBoxEdit.doc === doc ? lastBoxEdit : null;
  };
  // _boxEditParse(on) switches parseBoxEdit on or off (tests compare it with parse; on by
  // default). _parseBoxEditFresh is parseBoxEdit without the memo (null: not applicable).
  W._boxEditParse = function (on) {
    boxEditOff = !on;
  };
  W._copyOf = copyOf;
  W._parseBoxEditFresh = function (oldText, newText, index, newLine) {
    return parseBoxEdit(parse(oldText), index, newText, newLine);
  };
  // _parseFresh parses without the memo (the debugging method "parse" shows a document
  // that no analysis has touched).
  W._parseFresh = parse;
  // W._nodeAtLine(doc, line) is the node that starts on physical line `line` (1-based), or
  // null: doc.all is in line order, so a binary search finds it.
  W._nodeAtLine = function (doc, line) {
    var all = doc.all;
    var lo = 0;
    var hi = all.length - 1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      var l = all[mid].line;
      if (l === line) return all[mid];
      if (l < line) lo = mid + 1;
      else hi = mid - 1;
    }
    return null;
  };
  // _nodePrefix exposes the prefix scanner to the tests (compared with the §3 regexp).
  W._nodePrefix = function (s) {
    scanPrefix(s);
    return { indent: s.slice(0, pxIndent), gate: pxGate, fold: pxFold, box: pxBox, rest: s.slice(pxRest) };
  };
  W._gateOf = gateOf;
  // _shapeTableSize is MAX_SHAPES, for the tests that fill the table.
  W._shapeTableSize = MAX_SHAPES;
  // _fastParse(on) switches the one-regexp path for common lines on or off (for tests that
  // compare it with the general path; on by default).
  W._fastParse = function (on) {
    fastOff = !on;
  };
  // _fastLineRE is FAST_RE, whose pattern and flags the host's matcher of all lines is
  // compiled from; _setLineGroups(fn) installs that matcher (see hostLineGroups), and
  // _hostLines(on) switches it off and on (tests compare it with a split per line; on by
  // default).
  W._fastLineRE = FAST_RE;
  W._setLineGroups = function (fn) {
    hostLineGroups = fn;
  };
  W._hostLines = function (on) {
    hostOff = !on;
  };
})(Werkbaum);

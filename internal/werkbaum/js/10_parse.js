// Parser of the Werkbaum notation (NOTATION.md §1–§7, §10, §23 parser warnings).
//
// Werkbaum.parse(text) → document:
//   {
//     lines:         physical lines of the CR/CRLF-normalised text (lines[0] is line 1),
//     roots:         top-level nodes in document order (a forest),
//     all:           every node in document order (= pre-order; all[i].index === i),
//     byId:          map id → FIRST node carrying it (Object.create(null)),
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
//   indent        raw indentation string of the first line; width = indent with TAB = 2
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
// The description block of a node is found via doc.descBlocks (node === index).
(function (W) {
  'use strict';

  var T = W._text;
  var NAME = T.NAME;
  var STATUS_BY_CODE = T.STATUS_BY_CODE;

  // Regexps are compiled once. All are RE2-compatible (no lookarounds, no backreferences)
  // so goja hands them to Go's regexp; lookaheads of the reference regexps are replaced by
  // consuming groups plus an explicit check where the result would differ.
  var SEPARATOR_RE = /^[ \t]*-{3,}[ \t]*$/;
  var CONT_RE = /(^|[ \t])\\[ \t]*$/;
  var LEADING_BLANKS_RE = /^[ \t]+/;
  var BLANK_RE = /^\s*$/;
  var NODE_RE = /^([ \t]*)([-|+]|=[ \t])?\s*(?:([><])[ \t]\s*)?(?:\[([^\]])\]\s*)?(?:([><])[ \t]\s*)?([\s\S]*)$/;
  var TAB_RE = /\t/g;
  var URL_RE = /https?:\/\/\S+/i;
  var SIZE_RE = /(^|\s)\((XXL|XS|XL|S|M|L)\)/gi;
  var TAG_RE = new RegExp('@(' + NAME + ')', 'gu');
  var MARK_RE = new RegExp('(^|\\s)&(' + NAME + ')', 'gu');
  var ID_RE = new RegExp('(^|\\s)#(' + NAME + ')(:?)', 'u');
  var DEP_RE = new RegExp('(^|\\s):#(' + NAME + '(?:,#' + NAME + ')*)', 'gu');
  var HEADING_RE = new RegExp('^#(' + NAME + '):?\\s*$', 'u');
  var WS_SPLIT_RE = /\s+/;
  var WS_CHAR_RE = /\s/;
  var INDENTED_RE = /^[ \t]/;

  function stripComment(s) {
    var i = s.indexOf('%%');
    return i < 0 ? s : s.slice(0, i);
  }

  // extract applies the token extraction of §4 to the rest of a node line (group 6).
  function extract(rest, node) {
    var m;
    // 1. URL (first match, removed).
    if (rest.indexOf('://') >= 0) {
      m = URL_RE.exec(rest);
      if (m) {
        node.url = m[0];
        rest = rest.slice(0, m.index) + rest.slice(m.index + m[0].length);
      }
    }
    // 2. Size: the LAST free-standing (XS)…(XXL), replaced by its leading blank.
    if (rest.indexOf('(') >= 0) {
      SIZE_RE.lastIndex = 0;
      var last = null;
      while ((m = SIZE_RE.exec(rest)) !== null) last = m;
      if (last) {
        node.size = last[2].toUpperCase();
        rest = rest.slice(0, last.index) + last[1] + rest.slice(last.index + last[0].length);
      }
    }
    // 3. People tags (not anchored to a blank), removed.
    if (rest.indexOf('@') >= 0) {
      var tags = node.tags;
      rest = rest.replace(TAG_RE, function (all, t) {
        tags.push(t);
        return '';
      });
    }
    // 4. Keywords, replaced by the leading blank.
    if (rest.indexOf('&') >= 0) {
      var marks = node.marks;
      rest = rest.replace(MARK_RE, function (all, lead, k) {
        marks.push(k);
        return lead;
      });
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
        var deps = node.deps;
        rest = rest.replace(DEP_RE, function (all, lead, list) {
          var parts = list.split(',');
          for (var i = 0; i < parts.length; i++) deps.push(parts[i].slice(i === 0 ? 0 : 1));
          return lead;
        });
      }
    }
    // 7. Focus mark and 8. label: a free-standing `!!!` is a whitespace-separated token
    // that is exactly `!!!`; dropping such tokens and joining the rest with single spaces
    // equals the reference's replace-then-collapse.
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

  // gateOf returns the gate of a sibling group from its first member (§8).
  function gateOf(kids) {
    if (!kids.length) return 'and';
    var t = kids[0].type;
    return t === 'or' || t === 'xor' ? t : 'and';
  }

  // Per-node scratch data lives in side objects so node records keep one fixed shape.
  function addDescEntry(aux, text) {
    var list = aux.desc;
    if (text === '') {
      if (list.length && list[list.length - 1] !== '') list.push('');
      return;
    }
    list.push(text);
  }

  function parse(text) {
    var lines = T.lines(text);
    var n = lines.length;
    var roots = [];
    var all = [];
    var byId = Object.create(null);
    var warnings = [];
    var descBlocks = [];
    var separatorLine = null;
    var stack = [{ node: null, width: -1 }];
    var lastNode = null;
    var auxes = []; // scratch per node: {desc, descLines, shortEnd}
    var i, s;

    // Tree part: build logical lines (comments removed, continuation glued) and walk them.
    for (i = 0; i < n; i++) {
      s = stripComment(lines[i]);
      if (SEPARATOR_RE.test(s)) {
        separatorLine = i + 1;
        break;
      }
      var first = i + 1;
      var cont = null;
      if (s.indexOf('\\') >= 0) {
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
      if (BLANK_RE.test(s)) continue;

      // Short description line (§6).
      var t = s.trimStart();
      if (t.charAt(0) === '"' && (t.charAt(1) === ' ' || t.charAt(1) === '\t')) {
        if (lastNode) {
          var la = auxes[lastNode.index];
          addDescEntry(la, t.slice(2).trim());
          la.descLines.push(first);
          lastNode.shortDescLines.push(first);
          la.shortEnd = cont ? cont[cont.length - 1] : first;
        } else {
          warnings.push({ type: 'descStray', line: first });
        }
        continue;
      }

      var m = NODE_RE.exec(s);
      if (!m) continue;
      var gate = m[2] ? m[2].charAt(0) : '';
      var node = {
        line: first,
        lastLine: cont ? cont[cont.length - 1] : first,
        cont: cont || [],
        indent: m[1],
        width: 0,
        depth: 0,
        parent: -1,
        index: -1,
        children: [],
        gate: gate,
        type: gate === '|' ? 'or' : gate === '=' ? 'xor' : 'and',
        optional: gate === '+',
        fold: m[3] || m[5] || null,
        box: m[4] === undefined ? null : m[4],
        status: null,
        url: null,
        size: null,
        tags: [],
        marks: [],
        id: null,
        deps: [],
        focus: false,
        label: '',
        labelFromId: false,
        desc: null,
        descLines: null,
        shortDescLines: [],
        sizeConflict: false,
        lastTreeLine: 0
      };
      extract(m[6], node);
      if (node.label === '') {
        if (node.id === null) continue; // no node and no further effects (§4 step 8)
        node.label = '#' + node.id;
        node.labelFromId = true;
      }
      if (node.box !== null) {
        var code = node.box === 'X' ? 'x' : node.box;
        var st = STATUS_BY_CODE[code];
        if (st) node.status = st;
        else warnings.push({ type: 'unknownStatus', line: first, code: node.box });
      }
      if (node.id !== null) {
        var prev = byId[node.id];
        if (prev) warnings.push({ type: 'duplicateId', line: first, id: node.id, firstLine: prev.line });
        else byId[node.id] = node;
      }
      var width = m[1].indexOf('\t') < 0 ? m[1].length : m[1].replace(TAB_RE, '  ').length;
      node.width = width;
      while (stack[stack.length - 1].width >= width) stack.pop();
      var parent = stack[stack.length - 1].node;
      node.index = all.length;
      all.push(node);
      auxes.push({ desc: [], descLines: cont ? cont.slice() : [], shortEnd: 0 });
      if (parent) {
        node.parent = parent.index;
        node.depth = parent.depth + 1;
        parent.children.push(node);
      } else {
        roots.push(node);
      }
      stack.push({ node: node, width: width });
      lastNode = node;
    }

    // Description part (§7): lines after the first separator, comment-stripped, never glued.
    if (separatorLine !== null) {
      var block = null; // null = none, {node: null} = SKIP, else a real block
      for (i = separatorLine; i < n; i++) {
        s = stripComment(lines[i]);
        var ln = i + 1;
        if (BLANK_RE.test(s)) {
          if (block && block.node) {
            addDescEntry(auxes[block.node.index], '');
            auxes[block.node.index].descLines.push(ln);
            block.lines.push(ln);
          } else if (block) {
            block.lines.push(ln);
          }
          continue;
        }
        if (INDENTED_RE.test(s)) {
          if (!block) warnings.push({ type: 'descStray', line: ln });
          else {
            block.lines.push(ln);
            if (block.node) {
              addDescEntry(auxes[block.node.index], s.trim());
              auxes[block.node.index].descLines.push(ln);
            }
          }
          continue;
        }
        var h = HEADING_RE.exec(s);
        if (h) {
          var target = byId[h[1]] || null;
          block = { line: ln, id: h[1], node: target, lines: [ln] };
          descBlocks.push(block);
          if (target) auxes[target.index].descLines.push(ln);
          else warnings.push({ type: 'unknownDesc', line: ln, id: h[1] });
          continue;
        }
        if (SEPARATOR_RE.test(s)) continue;
        warnings.push({ type: 'descStray', line: ln });
        block = null;
      }
    }

    // Assemble descriptions and subtree extents (reverse document order: children first).
    for (i = all.length - 1; i >= 0; i--) {
      var nd = all[i];
      var aux = auxes[i];
      var list = aux.desc;
      while (list.length && list[list.length - 1] === '') list.pop();
      nd.desc = list.length ? list.join('\n') : null;
      nd.descLines = aux.descLines.length ? aux.descLines : null;
      var end = nd.lastLine > aux.shortEnd ? nd.lastLine : aux.shortEnd;
      if (end > nd.lastTreeLine) nd.lastTreeLine = end;
      if (nd.parent >= 0 && all[nd.parent].lastTreeLine < nd.lastTreeLine) {
        all[nd.parent].lastTreeLine = nd.lastTreeLine;
      }
    }
    for (i = 0; i < descBlocks.length; i++) {
      descBlocks[i].node = descBlocks[i].node ? descBlocks[i].node.index : -1;
    }

    // Post-passes in pre-order: unknownDep, xorConflict, sizeConflict.
    var k, j;
    for (k = 0; k < all.length; k++) {
      var deps = all[k].deps;
      for (j = 0; j < deps.length; j++) {
        if (!byId[deps[j]]) warnings.push({ type: 'unknownDep', line: all[k].line, id: deps[j] });
      }
    }
    for (k = 0; k < all.length; k++) {
      var kids = all[k].children;
      if (!kids.length || kids[0].type !== 'xor') continue;
      var seen = 0;
      for (j = 0; j < kids.length; j++) {
        if (kids[j].status && kids[j].status.rank >= 2) {
          if (seen++) warnings.push({ type: 'xorConflict', line: kids[j].line, label: kids[j].label });
        }
      }
    }
    for (k = 0; k < all.length; k++) {
      var p = all[k];
      if (!p.size || !p.children.length || p.size === 'XXL') continue;
      var ch = p.children;
      var counted = 0;
      var disj = ch[0].type !== 'and';
      var need = disj ? Infinity : 0;
      for (j = 0; j < ch.length; j++) {
        var q = ch[j];
        if (!q.size || q.optional || (q.status && q.status.code === '-')) continue;
        counted++;
        var min = Math.pow(2, T.SIZE_RANK[q.size]);
        if (disj) {
          if (min < need) need = min;
        } else need += min;
      }
      if (counted && need >= Math.pow(2, T.SIZE_RANK[p.size] + 1)) {
        p.sizeConflict = true;
        warnings.push({ type: 'sizeConflict', line: p.line, size: p.size });
      }
    }

    return {
      lines: lines,
      roots: roots,
      all: all,
      byId: byId,
      warnings: warnings,
      separatorLine: separatorLine,
      descBlocks: descBlocks
    };
  }

  W.parse = parse;
  W._gateOf = gateOf;
})(Werkbaum);

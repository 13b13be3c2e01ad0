// The warning catalogue (NOTATION.md §23): the renderer's mixedGate check, the editor's
// final order and an English sentence for every type.
(function (W) {
  'use strict';

  // mixedGate walks the rendered tree (roots in view; discarded children hidden unless
  // showDiscarded) in pre-order; roots are never compared with each other (§8). The model's
  // forward pass already did the walk (20_model.js): this returns its list, {type, line,
  // label} per parent in pre-order.
  function mixedGate(m) {
    return m.mixed;
  }

  // textOf returns the English sentence of a warning ("Line N: …" where it has a line).
  function textOf(w) {
    var at = 'Line ' + w.line + ': ';
    switch (w.type) {
      case 'mixedGate':
        return at + 'the children of "' + w.label + '" mix gates; use only - and +, only |, or only =.';
      case 'unknownStatus':
        return at + 'unknown status box [' + w.code + ']; the node is treated as having no status.';
      case 'xorConflict':
        return at + '"' + w.label + '" is a second realized alternative of an exclusive (=) group.';
      case 'duplicateId':
        return at + 'the id #' + w.id + ' is already used on line ' + w.firstLine + '; references go to that first node.';
      case 'unknownDep':
        return at + 'dependency on #' + w.id + ', but no node has that id.';
      case 'unknownDesc':
        return at + 'description heading #' + w.id + ', but no node has that id.';
      case 'descStray':
        return at + 'description text that belongs to no node.';
      case 'sizeConflict':
        return at + 'the size (' + w.size + ') is too small for the sizes of its children.';
      case 'assigneeOverload':
        return (
          '@' + w.tag + ' carries ' + w.share + '% of the remaining work (' + w.stations + ' of ' +
          w.totalStations + ' open work packages).'
        );
      case 'cheapApprox':
        return 'The cheapest path is an approximation: too many coupled alternatives for an exact search.';
      default:
        return w.type + ' (' + (w.line === undefined ? '?' : w.line) + ')';
    }
  }

  // finalOrder concatenates parser, cheapApprox, assigneeOverload and mixedGate warnings and
  // sorts stably by line (line-less first). The lists arrive nearly sorted (the parser's
  // walk and its post-passes are in document order, the line-less ones move to the front),
  // so an insertion sort does it in about one step per warning; if that takes more moves
  // than MOVES_PER_WARNING per warning (many warnings far out of order), the list is
  // sorted by (line, position) instead, which gives the same stable order.
  var MOVES_PER_WARNING = 4;
  function finalOrder(parser, approx, overload, mixed) {
    var out = parser.concat(approx, overload, mixed);
    var budget = MOVES_PER_WARNING * out.length + 16;
    for (var i = 1; i < out.length; i++) {
      var w = out[i];
      var k = w.line || 0;
      var j = i - 1;
      if ((out[j].line || 0) <= k) continue;
      while (j >= 0 && (out[j].line || 0) > k) {
        out[j + 1] = out[j];
        j--;
        if (--budget < 0) return sortedByLine(parser.concat(approx, overload, mixed));
      }
      out[j + 1] = w;
    }
    return out;
  }

  function byKey(a, b) {
    return a.k - b.k || a.i - b.i;
  }

  // sortedByLine is the stable sort by line for any order (index tie-break, so it does not
  // depend on the engine's sort being stable).
  function sortedByLine(list) {
    var keyed = [];
    for (var i = 0; i < list.length; i++) keyed.push({ w: list[i], k: list[i].line || 0, i: i });
    keyed.sort(byKey);
    var out = [];
    for (i = 0; i < keyed.length; i++) out.push(keyed[i].w);
    return out;
  }

  W._mixedGate = mixedGate;
  W._warningText = textOf;
  W._finalWarnings = finalOrder;
})(Werkbaum);

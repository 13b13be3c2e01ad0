// The warning catalogue (NOTATION.md §23): the renderer's mixedGate check, the editor's
// final order and an English sentence for every type.
(function (W) {
  'use strict';

  var S = W._status;

  // mixedGate walks the rendered tree (roots in view; discarded children hidden unless
  // showDiscarded) in pre-order; roots are never compared with each other (§8).
  function mixedGate(m) {
    var out = [];
    var stack = [];
    for (var r = m.roots.length - 1; r >= 0; r--) stack.push(m.roots[r]);
    while (stack.length) {
      var n = stack.pop();
      var vis = [];
      for (var i = 0; i < n.children.length; i++) {
        var c = n.children[i];
        if (m.showDiscarded || !S.isDiscarded(c)) vis.push(c);
      }
      if (vis.length > 1) {
        var t = vis[0].type;
        for (i = 1; i < vis.length; i++) {
          if (vis[i].type !== t) {
            out.push({ type: 'mixedGate', line: vis[0].line, label: n.label });
            break;
          }
        }
      }
      for (i = vis.length - 1; i >= 0; i--) stack.push(vis[i]);
    }
    return out;
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
  // sorts stably by line (line-less first). Array sort is stable in goja and V8, but the
  // index tie-break keeps it independent of that.
  function finalOrder(parser, approx, overload, mixed) {
    var list = parser.concat(approx, overload, mixed);
    var keyed = [];
    for (var i = 0; i < list.length; i++) keyed.push({ w: list[i], k: list[i].line || 0, i: i });
    keyed.sort(function (a, b) {
      return a.k - b.k || a.i - b.i;
    });
    var out = [];
    for (i = 0; i < keyed.length; i++) out.push(keyed[i].w);
    return out;
  }

  W._mixedGate = mixedGate;
  W._warningText = textOf;
  W._finalWarnings = finalOrder;
})(Werkbaum);

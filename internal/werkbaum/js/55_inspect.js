// Werkbaum.inspect(text, opts): the MCP view of ARCHITECTURE §5.1 (werkbaum_inspect).
//
// opts.id: a node id; the view is then limited to that node's subtree (the first node with
// the id; an unknown id throws "unknown id: <id>"): nodes of the subtree, warnings whose
// line lies inside the subtree's tree lines or its nodes' description lines (plus the
// line-less plan-wide ones), and needed/stations inside the subtree. cost, assignee loads
// and the overloaded assignee always describe the whole plan.
// opts.include ⊆ ["tree", "warnings", "path"] (default all) selects the keys returned.
// Nodes under a dropped discarded root are listed with inView false and null model values.
(function (W) {
  'use strict';



  function inspectNode(r, i) {
    var v = W._nodeView(r, i);
    return {
      line: v.line,
      parentLine: v.parentLine,
      depth: v.depth,
      id: v.id,
      label: v.label,
      gate: v.type,
      childrenGate: v.childrenGate,
      optional: v.optional,
      status: v.status,
      effectiveStatus: v.effectiveStatus,
      held: v.held,
      size: v.size,
      assumedSize: v.assumedSize,
      ownCost: v.ownCost,
      people: v.tags,
      keywords: v.marks,
      deps: v.deps,
      url: v.url,
      desc: v.desc,
      taigaSlug: v.taigaSlug,
      ticketRef: v.ticketRef,
      focus: v.focus,
      fold: v.fold,
      inView: v.inView,
      needed: v.needed,
      station: v.station
    };
  }

  function inspect(text, opts) {
    opts = opts || {};
    var include = opts.include && opts.include.length ? opts.include : ['tree', 'warnings', 'path'];
    var want = {};
    for (var k = 0; k < include.length; k++) want[include[k]] = true;
    var r = W._compute(text, {});
    var all = r.m.all;
    var lo = 0;
    var hi = all.length; // node index range of the subtree: [lo, hi)
    var owned = null; // physical lines belonging to the subtree
    if (opts.id !== undefined && opts.id !== null && opts.id !== '') {
      var root = r.doc.byId[opts.id];
      if (!root) throw new Error('unknown id: ' + opts.id);
      lo = root.index;
      hi = lo + 1;
      while (hi < all.length && all[hi].depth > root.depth) hi++;
      owned = Object.create(null);
      for (var i = lo; i < hi; i++) {
        var dl = all[i].descLines;
        if (dl) for (var d = 0; d < dl.length; d++) owned[dl[d]] = true;
      }
      owned.first = root.line;
      owned.last = root.lastTreeLine;
    }
    var out = {};
    if (want.tree) {
      var nodes = [];
      for (i = lo; i < hi; i++) nodes.push(inspectNode(r, i));
      out.nodes = nodes;
    }
    if (want.warnings) {
      var ws = [];
      for (i = 0; i < r.warnings.length; i++) {
        var w = r.warnings[i];
        if (owned && w.line !== undefined && !(w.line >= owned.first && w.line <= owned.last) && !owned[w.line]) continue;
        ws.push(w);
      }
      out.warnings = ws;
    }
    if (want.path) {
      var needed = [];
      var stations = [];
      for (i = lo; i < hi; i++) {
        if (r.path.inSet[i]) needed.push(all[i].line);
        if (r.path.station[i]) stations.push(all[i].line);
      }
      out.path = {
        exact: r.path.exact,
        needed: needed,
        stations: stations,
        cost: r.path.cost,
        assigneeLoads: r.loads.assigneeLoads,
        overloadedAssignee: r.loads.overloadedAssignee
      };
    }
    return out;
  }

  W.inspect = inspect;
})(Werkbaum);

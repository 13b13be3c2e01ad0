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

  var T = W._text;

  // inspectNode builds the MCP record of node i directly (no intermediate §28 record: object
  // creation dominates in goja). Names follow §28 where the meaning is the same.
  function inspectNode(r, i) {
    var m = r.m;
    var n = m.all[i];
    var inView = m.inView[i] === true;
    var eff = null;
    if (inView) {
      var rank = n.status === null ? 0 : n.status.rank;
      eff = m.eff[i] < rank ? T.RANK_KEYS[m.eff[i]] : n.status ? n.status.key : null;
    }
    return {
      line: n.line,
      parentLine: n.parent >= 0 ? m.all[n.parent].line : null,
      depth: n.depth,
      id: n.id,
      label: n.label,
      gate: n.type,
      optional: n.optional,
      status: n.status ? n.status.key : null,
      effectiveStatus: eff,
      size: n.size,
      assumedSize: inView ? T.SIZES[m.assumed[i]] : null,
      people: n.tags,
      keywords: n.marks,
      deps: n.deps,
      url: n.url,
      desc: n.desc,
      taigaSlug: m.taiga[i],
      ticketRef: m.ticket[i],
      focus: n.focus,
      inView: inView,
      needed: inView && r.path.inSet[i] === 1,
      station: inView && r.path.station[i] === 1
    };
  }

  // ROW_FIELDS names the columns of a node row of inspectRows, in the order of the keys of
  // inspectNode (js/test/inspect_rows.test.js and the Go host check that they agree).
  var ROW_FIELDS = ['line', 'parentLine', 'depth', 'id', 'label', 'gate', 'optional', 'status', 'effectiveStatus',
    'size', 'assumedSize', 'people', 'keywords', 'deps', 'url', 'desc', 'taigaSlug', 'ticketRef', 'focus', 'inView',
    'needed', 'station'];

  // inspectRow is inspectNode as a positional array: goja builds an array literal in one
  // allocation but an object property by property, and serialises it in half the time.
  function inspectRow(r, i) {
    var m = r.m;
    var n = m.all[i];
    var inView = m.inView[i] === true;
    var eff = null;
    if (inView) {
      var rank = n.status === null ? 0 : n.status.rank;
      eff = m.eff[i] < rank ? T.RANK_KEYS[m.eff[i]] : n.status ? n.status.key : null;
    }
    return [
      n.line,
      n.parent >= 0 ? m.all[n.parent].line : null,
      n.depth,
      n.id,
      n.label,
      n.type,
      n.optional,
      n.status ? n.status.key : null,
      eff,
      n.size,
      inView ? T.SIZES[m.assumed[i]] : null,
      n.tags,
      n.marks,
      n.deps,
      n.url,
      n.desc,
      m.taiga[i],
      m.ticket[i],
      n.focus,
      inView,
      inView && r.path.inSet[i] === 1,
      inView && r.path.station[i] === 1
    ];
  }

  // inspect returns the view with node records; inspectRows the same view with node rows
  // (columns ROW_FIELDS), which the Go host turns into the records' JSON far faster.
  function inspect(text, opts) {
    return view(text, opts, inspectNode);
  }
  function inspectRows(text, opts) {
    return view(text, opts, inspectRow);
  }

  function view(text, opts, nodeOf) {
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
      for (i = lo; i < hi; i++) nodes.push(nodeOf(r, i));
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
  W.inspectRows = inspectRows;
  W._inspectRowFields = ROW_FIELDS;
})(Werkbaum);

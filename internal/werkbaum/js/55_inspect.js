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

  // inspect returns the view with node records. Each record is built in the loop, from
  // the model's columns held in locals (no intermediate §28 record: object creation
  // dominates in goja). Names follow §28 where the meaning is the same. In goja every
  // property read (r.m, m.all, T.SIZES, …), every call and every native call (push) is an
  // interpreted operation that costs about what a record's field does: read once per call,
  // the records of a 606-node plan took 9–13 ms of a 25 ms analysis (issue 33).
  function inspect(text, opts) {
    var v = select(text, opts);
    var nodes = v.out.nodes;
    if (!nodes) return v.out;
    var m = v.r.m;
    var all = m.all;
    var inViewOf = m.inView;
    var effOf = m.eff;
    var assumed = m.assumed;
    var taiga = m.taiga;
    var ticket = m.ticket;
    var inSet = v.r.path.inSet;
    var station = v.r.path.station;
    var RANK_KEYS = T.RANK_KEYS;
    var SIZES = T.SIZES;
    var k = nodes.length;
    for (var i = v.lo; i < v.hi; i++) {
      var n = all[i];
      var inView = inViewOf[i] === true;
      var st = n.status;
      var status = st === null ? null : st.key;
      var eff = null;
      if (inView) eff = effOf[i] < (st === null ? 0 : st.rank) ? RANK_KEYS[effOf[i]] : status;
      var p = n.parent;
      nodes[k++] = {
        line: n.line,
        parentLine: p >= 0 ? all[p].line : null,
        depth: n.depth,
        id: n.id,
        label: n.label,
        gate: n.type,
        optional: n.optional,
        status: status,
        effectiveStatus: eff,
        size: n.size,
        assumedSize: inView ? SIZES[assumed[i]] : null,
        people: n.tags,
        keywords: n.marks,
        deps: n.deps,
        url: n.url,
        desc: n.desc,
        taigaSlug: taiga[i],
        ticketRef: ticket[i],
        focus: n.focus,
        inView: inView,
        needed: inView && inSet[i] === 1,
        station: inView && station[i] === 1
      };
    }
    return v.out;
  }

  // inspectParts is inspect for a host that writes the node records itself (the Go engine:
  // a record is 22 values, and building them as objects or rows and serialising them in goja
  // cost a third of an inspect). It returns the JSON of the view with an empty node list and
  // what the records are made of: the nodes [lo, hi) of all, the model's per-node arrays
  // (m.inView, m.eff, m.assumed, m.taiga, m.ticket), the path's (path.inSet, path.station),
  // and the tables RANK_KEYS and SIZES. The records must equal inspect's
  // (TestHostRecordsEqualTheScriptsRecords in Go checks every field of many plans).
  function inspectParts(text, opts) {
    var v = select(text, opts);
    return {
      json: JSON.stringify(v.out),
      tree: !!v.out.nodes,
      lo: v.lo,
      hi: v.hi,
      all: v.r.m.all,
      m: v.r.m,
      path: v.r.path,
      rankKeys: T.RANK_KEYS,
      sizes: T.SIZES
    };
  }

  // select computes the view of opts without its node records: out holds warnings and path
  // as asked and an empty nodes list when the tree is asked; [lo, hi) are the indices of the
  // nodes to list (a subtree is a contiguous range: doc.all is in pre-order).
  function select(text, opts) {
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
    if (want.tree) out.nodes = [];
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
      // The columns in locals, the lists filled by index: in goja each property read and
      // each native call (push) costs more than the rest of the loop.
      var needed = [];
      var stations = [];
      var inSet = r.path.inSet;
      var station = r.path.station;
      for (i = lo; i < hi; i++) {
        if (inSet[i]) needed[needed.length] = all[i].line;
        if (station[i]) stations[stations.length] = all[i].line;
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
    return { r: r, lo: lo, hi: hi, out: out };
  }

  W.inspect = inspect;
  W.inspectParts = inspectParts;
})(Werkbaum);

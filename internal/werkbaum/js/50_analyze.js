// Werkbaum.analyze(text, opts): the complete result of NOTATION.md §28 (the format of
// examples/*.expected.json), and Werkbaum.warnings(text): the editor's warning list.
// opts: {checksum (computed by the host, echoed), file, showDiscarded}.
(function (W) {
  'use strict';

  var T = W._text;
  var S = W._status;

  // compute runs parse → model → path → loads → warnings once; analyze, inspect, warnings
  // and guard share it. Results of the default view are memoised per text (read-only).
  var computed = W._memo();
  function compute(text, opts) {
    if (opts && opts.showDiscarded) return computeFresh(text, opts);
    var r = computed.get(text);
    if (r === null) {
      r = computeFresh(text, opts);
      computed.put(text, r);
    }
    return r;
  }

  function computeFresh(text, opts) {
    var doc = W.parse(text);
    var from = editedFrom(doc, opts);
    var m = from === null ? null : W._modelBoxEdit(from.r.m, doc, from.index);
    var path = m === null ? null : W._cheapPathAfterEdit(from.r.path, m, from.index);
    if (m === null) m = W._model(doc, opts);
    if (path === null) path = W._cheapPath(m);
    var loads = W._loads(m, path);
    var mixed = W._mixedGate(m);
    return { doc: doc, m: m, path: path, loads: loads, warnings: warningsOf(doc, path, loads, mixed), mixed: mixed };
  }

  // editedFrom is {r, index} for a document a status edit of node index made
  // (W._boxEditOrigin) whose old document's analysis r is still remembered, else null. The
  // analysis then starts from r: its model (W._modelBoxEdit: the write path's set_status,
  // then its guard and the inspect of the result) and its path (W._cheapPathAfterEdit);
  // each answers null when it cannot, and that part runs in full.
  var boxEditModelOff = false;
  function editedFrom(doc, opts) {
    var origin = boxEditModelOff || (opts && opts.showDiscarded) ? null : W._boxEditOrigin(doc);
    if (origin === null) return null;
    var prev = computed.find(function (r) {
      return r.doc === origin.from;
    });
    return prev === null ? null : { r: prev, index: origin.index };
  }

  // warningsOf is the final warning list of an analysis (§23 order) with its English texts;
  // the mixedGate entries get their texts too.
  function warningsOf(doc, path, loads, mixed) {
    var approx = path.exact ? [] : [{ type: 'cheapApprox' }];
    var over = [];
    if (loads.overloadedAssignee) {
      var o = loads.overloadedAssignee;
      over.push({ type: 'assigneeOverload', tag: o.tag, share: o.share, stations: o.stations, totalStations: o.totalStations });
    }
    var warnings = W._finalWarnings(doc.warnings, approx, over, mixed);
    for (var i = 0; i < warnings.length; i++) warnings[i].text = W._warningText(warnings[i]);
    for (i = 0; i < mixed.length; i++) mixed[i].text = W._warningText(mixed[i]);
    return warnings;
  }

  // nodeView is the §28 record of node i.
  function nodeView(r, i) {
    var m = r.m;
    var n = m.all[i];
    var inView = m.inView[i] === true;
    var rank = S.rankOf(n);
    var eff = inView ? m.eff[i] : -1;
    var held = inView && eff < rank;
    var childLines = [];
    for (var c = 0; c < n.children.length; c++) childLines.push(n.children[c].line);
    return {
      line: n.line,
      parentLine: n.parent >= 0 ? m.all[n.parent].line : null,
      depth: n.depth,
      id: n.id,
      label: n.label,
      labelFromId: n.labelFromId,
      type: n.type,
      childrenGate: n.children.length ? W._gateOf(n.children) : null,
      optional: n.optional,
      fold: n.fold,
      focus: n.focus,
      status: n.status ? n.status.key : null,
      statusCode: n.status ? n.status.code : null,
      progressRank: rank,
      effectiveStatus: !inView ? null : held ? T.RANK_KEYS[eff] : n.status ? n.status.key : null,
      held: held,
      size: n.size,
      assumedSize: inView ? T.SIZES[m.assumed[i]] : null,
      ownCost: inView ? m.ownCost[i] : null,
      sizeConflict: n.sizeConflict,
      needsBreakdown: n.size !== null && T.SIZE_RANK[n.size] >= 2 && !n.children.length && !S.isDiscarded(n),
      tags: n.tags,
      marks: n.marks,
      deps: n.deps,
      url: n.url,
      desc: n.desc,
      descLines: n.descLines,
      taigaSlug: m.taiga[i],
      ticketRef: m.ticket[i],
      inView: inView,
      needed: inView && r.path.inSet[i] === 1,
      station: inView && r.path.station[i] === 1,
      initiallyCollapsed: m.collapsed[i] === 1,
      childLines: childLines
    };
  }

  function pathView(r) {
    var all = r.m.all;
    var needed = [];
    var stations = [];
    for (var i = 0; i < all.length; i++) {
      if (r.path.inSet[i]) needed.push(all[i].line);
      if (r.path.station[i]) stations.push(all[i].line);
    }
    return {
      exact: r.path.exact,
      needed: needed,
      stations: stations,
      cost: r.path.cost,
      assigneeLoads: r.loads.assigneeLoads,
      unassignedLoad: r.loads.unassignedLoad,
      assigneeStations: r.loads.assigneeStations,
      totalStations: r.loads.totalStations,
      overloadedAssignee: r.loads.overloadedAssignee
    };
  }

  function analyze(text, opts) {
    opts = opts || {};
    var r = compute(text, opts);
    var all = r.m.all;
    var nodes = [];
    var collapsed = [];
    var focusLines = [];
    for (var i = 0; i < all.length; i++) {
      nodes.push(nodeView(r, i));
      if (r.m.collapsed[i]) collapsed.push(all[i].line);
      if (all[i].focus && r.m.inView[i]) focusLines.push(all[i].line);
    }
    var parseWarnings = [];
    for (i = 0; i < r.doc.warnings.length; i++) parseWarnings.push(r.doc.warnings[i]);
    var out = {};
    if (opts.file !== undefined && opts.file !== null) out.file = opts.file;
    out.checksum = opts.checksum === undefined ? null : opts.checksum;
    out.physicalLines = r.doc.lines.length;
    out.view = { showDiscarded: r.m.showDiscarded, discardedRootsDropped: r.m.discardedRootsDropped };
    out.nodes = nodes;
    out.warnings = r.warnings;
    out.parseWarnings = parseWarnings;
    out.mixedGateWarnings = r.mixed;
    out.path = pathView(r);
    out.initiallyCollapsed = collapsed;
    out.focusLines = focusLines;
    return out;
  }

  W._compute = compute;
  // _analysisKnown(text) says whether the memo holds the default analysis of text: a write
  // whose old text it holds does not analyse that text again (the host logs which).
  W._analysisKnown = function (text) {
    return computed.keys.indexOf(text) >= 0;
  };
  // _boxEditModel(on) switches modelOf's start from the old model on or off (tests compare
  // the two; on by default).
  W._boxEditModel = function (on) {
    boxEditModelOff = !on;
  };
  W._warningsOf = warningsOf;
  W._nodeView = nodeView;
  W._pathView = pathView;
  W.analyze = analyze;
  W.warnings = function (text) {
    return compute(text, {}).warnings;
  };
})(Werkbaum);

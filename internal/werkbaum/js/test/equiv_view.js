'use strict';
// equivView(X, text, show) runs the model passes of the namespace X the way 50_analyze.js
// does and copies out every value the other scripts read: the model's columns, the path,
// the loads (key order included: a JSON string), mixedGate and the final warnings with their
// texts. model_equiv.test.js compares it for the current passes and the reference under
// Node, TestModelPassesEqualTheReferenceInGoja does the same in goja with this very file, so
// it is plain ES5 and needs nothing from Node. A given model (e.g. from X._modelBoxEdit)
// is viewed instead of X._model(X.parse(text)).
function equivView(X, text, show, model) {
  var m = model || X._model(X.parse(text), { showDiscarded: show });
  var doc = m.doc;
  var p = X._cheapPath(m);
  var l = X._loads(m, p);
  var mixed = X._mixedGate(m);
  var N = doc.all.length;
  function col(a) {
    var out = [];
    for (var i = 0; i < N; i++) out.push(a[i]);
    return out;
  }
  var over = [];
  if (l.overloadedAssignee) {
    var o = { type: 'assigneeOverload' };
    for (var k in l.overloadedAssignee) o[k] = l.overloadedAssignee[k];
    over.push(o);
  }
  var warnings = X._finalWarnings(doc.warnings, p.exact ? [] : [{ type: 'cheapApprox' }], over, mixed);
  return {
    model: JSON.parse(JSON.stringify({
      roots: m.roots.map(function (n) { return n.index; }),
      showDiscarded: m.showDiscarded,
      dropped: m.discardedRootsDropped,
      inView: col(m.inView),
      byId: idsOf(m.byId).map(function (id) { return [id, m.byId[id].index]; }),
      assumed: col(m.assumed),
      ownCost: col(m.ownCost),
      eff: col(m.eff),
      taiga: col(m.taiga),
      ticket: col(m.ticket),
      collapsed: col(m.collapsed)
    })),
    path: JSON.parse(JSON.stringify({
      exact: p.exact,
      choice: p.choice,
      inSet: col(p.inSet),
      cost: p.cost,
      station: col(p.station),
      coupled: p.P.coupled.length
    })),
    loads: JSON.stringify(l),
    mixed: JSON.stringify(mixed),
    warnings: JSON.stringify(warnings.map(function (w) { return [w, X._warningText(w)]; }))
  };
}

// idsOf lists the ids of a byId map, sorted: for-in, since a status edit's map is layered
// over the old one (10_parse.js byIdWith).
function idsOf(byId) {
  var ids = [];
  for (var id in byId) ids.push(id);
  return ids.sort();
}

if (typeof module !== 'undefined') module.exports = equivView;

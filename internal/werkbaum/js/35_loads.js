// Assignee loads and the overloaded assignee (NOTATION.md §21).
(function (W) {
  'use strict';

  var NONE = Object.freeze([]);

  // ownersOf: the tags of the nearest node with tags, the node itself first (§21: a node's
  // own tags, else the inherited owners); none above a root.
  function ownersOf(all, i) {
    for (var x = i; x >= 0; x = all[x].parent) {
      var t = all[x].tags;
      if (t.length) return t;
    }
    return NONE;
  }

  // ownersColumn is the model's column of ownersOf, filled as the loads ask for nodes. A
  // status edit changes no tags and no parent, so the models modelBoxEdit makes share it
  // with the model they start from (20_model.js): a write's loads then read most owners
  // instead of walking up to them (the walks were a tenth of a write's script time on a
  // 10,000-node plan).
  function ownersColumn(m) {
    if (m.owners === null) m.owners = new Array(m.N);
    return m.owners;
  }

  // loads(model, path) → {assigneeLoads, unassignedLoad, assigneeStations, totalStations,
  // total, overloadedAssignee}. Loads are accumulated in pre-order (JavaScript doubles, the
  // same order as the reference), keys in first-contribution order. Only the needed nodes
  // with a margin or a station contribute: path.hot lists them (reverse document order) with
  // path.margin, so nothing else is visited.
  W._loads = function (m, path) {
    var all = m.all;
    var hot = path.hot;
    var margin = path.margin;
    var station = path.station;
    var loads = {};
    var loadOrder = [];
    var stationsBy = {};
    var total = 0;
    var unassigned = 0;
    var totalStations = 0;
    var owners = ownersColumn(m);
    var j;
    for (var h = hot.length - 1; h >= 0; h--) {
      var i = hot[h];
      var o = owners[i];
      if (o === undefined) o = owners[i] = ownersOf(all, i);
      var mg = margin[i];
      if (mg > 0) {
        total += mg;
        if (!o.length) unassigned += mg;
        for (j = 0; j < o.length; j++) {
          var t = o[j];
          if (loads[t] === undefined) {
            loads[t] = 0;
            loadOrder.push(t);
          }
          loads[t] += mg / o.length;
        }
      }
      if (station[i] === 1) {
        totalStations++;
        for (j = 0; j < o.length; j++) stationsBy[o[j]] = (stationsBy[o[j]] || 0) + 1;
      }
    }
    var people = 0;
    var top = null;
    for (j = 0; j < loadOrder.length; j++) {
      var k = loadOrder[j];
      if (loads[k] > 0) people++;
      if (top === null || loads[k] > loads[top]) top = k;
    }
    var over = null;
    if (people >= 2 && total > 0 && loads[top] * 2 > total) {
      over = {
        tag: top,
        share: Math.round((loads[top] / total) * 100),
        stations: stationsBy[top] || 0,
        totalStations: totalStations
      };
    }
    return {
      assigneeLoads: loads,
      unassignedLoad: unassigned,
      assigneeStations: stationsBy,
      totalStations: totalStations,
      total: total,
      overloadedAssignee: over
    };
  };
})(Werkbaum);

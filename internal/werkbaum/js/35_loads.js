// Assignee loads and the overloaded assignee (NOTATION.md §21).
(function (W) {
  'use strict';

  // loads(model, path) → {assigneeLoads, unassignedLoad, assigneeStations, totalStations,
  // total, overloadedAssignee}. Loads are accumulated in pre-order (JavaScript doubles, the
  // same order as the reference), keys in first-contribution order.
  W._loads = function (m, path) {
    var all = m.all;
    var P = path.P;
    var inSet = path.inSet;
    var owners = new Array(all.length);
    var loads = {};
    var loadOrder = [];
    var stationsBy = {};
    var total = 0;
    var unassigned = 0;
    var totalStations = 0;
    for (var i = 0; i < all.length; i++) {
      if (!m.inView[i]) continue;
      var n = all[i];
      var o = n.tags.length ? n.tags : n.parent >= 0 ? owners[n.parent] : [];
      owners[i] = o;
      if (!inSet[i]) continue;
      var mg = P.own[i];
      var kids = P.pc[i];
      for (var j = 0; j < kids.length; j++) if (inSet[kids[j]]) mg -= P.own[kids[j]];
      if (mg < 0) mg = 0;
      total += mg;
      if (mg > 0) {
        if (!o.length) unassigned += mg;
        for (j = 0; j < o.length; j++) {
          if (loads[o[j]] === undefined) {
            loads[o[j]] = 0;
            loadOrder.push(o[j]);
          }
          loads[o[j]] += mg / o.length;
        }
      }
      if (path.station[i]) {
        totalStations++;
        for (j = 0; j < o.length; j++) stationsBy[o[j]] = (stationsBy[o[j]] || 0) + 1;
      }
    }
    var people = 0;
    var top = null;
    for (i = 0; i < loadOrder.length; i++) {
      var t = loadOrder[i];
      if (loads[t] > 0) people++;
      if (top === null || loads[t] > loads[top]) top = t;
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

// Assignee loads and the overloaded assignee (NOTATION.md §21).
(function (W) {
  'use strict';

  var NONE = Object.freeze([]);

  // ownersColumn is the model's column of owners, filled as the loads ask for nodes: per
  // node its owners as numbers of the column's tags (`tags`, numbered in the order the
  // loads first met them). A status edit changes no tags and no parent, so the models
  // modelBoxEdit makes share it with the model they start from (20_model.js): a write's
  // loads then read most owners instead of walking up to them (the walks were a tenth of a
  // write's script time on a 10,000-node plan), and add into arrays by number instead of
  // objects by name.
  function ownersColumn(m) {
    if (m.owners === null) m.owners = { of: new Array(m.N), number: Object.create(null), tags: [], one: Object.create(null) };
    return m.owners;
  }

  // ownersAt is node i's owners (§21: the tags of the nearest node with tags, the node
  // itself first; none above a root) as tag numbers of the column col. The nodes on the
  // way up to that node inherit the same owners and get the same entry: the loads ask for
  // many nodes below the same owner, and each walked up to it on its own and made its own
  // list (a fresh model's loads took 10–15 ms of a 10,000-node plan's first inspect in
  // goja). A list of one tag is one array per tag.
  function ownersAt(col, all, i) {
    var of = col.of;
    var o;
    var x = i;
    for (;;) {
      o = of[x];
      if (o !== undefined) break;
      var tags = all[x].tags;
      if (tags.length) {
        o = tags.length === 1 ? col.one[tags[0]] || (col.one[tags[0]] = [numberOf(col, tags[0])]) : numbersOf(col, tags);
        of[x] = o;
        break;
      }
      x = all[x].parent;
      if (x < 0) {
        o = NONE;
        break;
      }
    }
    for (var y = i; y !== x; y = all[y].parent) of[y] = o;
    return o;
  }

  // numberOf is the number of a tag in the column col, given when first met.
  function numberOf(col, tag) {
    var k = col.number[tag];
    if (k === undefined) {
      k = col.number[tag] = col.tags.length;
      col.tags.push(tag);
    }
    return k;
  }

  function numbersOf(col, tags) {
    var o = new Array(tags.length);
    for (var j = 0; j < tags.length; j++) o[j] = numberOf(col, tags[j]);
    return o;
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
    var col = ownersColumn(m);
    var of = col.of;
    var sum = []; // by tag number: the load so far (undefined before its first contribution)
    var count = []; // by tag number: the stations so far
    var loadOrder = []; // tag numbers in first-contribution order
    var stationOrder = [];
    var total = 0;
    var unassigned = 0;
    var totalStations = 0;
    var j, k;
    for (var h = hot.length - 1; h >= 0; h--) {
      var i = hot[h];
      var o = of[i];
      if (o === undefined) o = ownersAt(col, all, i);
      var mg = margin[i];
      if (mg > 0) {
        total += mg;
        if (!o.length) unassigned += mg;
        for (j = 0; j < o.length; j++) {
          k = o[j];
          if (sum[k] === undefined) {
            sum[k] = 0;
            loadOrder.push(k);
          }
          sum[k] += mg / o.length;
        }
      }
      if (station[i] === 1) {
        totalStations++;
        for (j = 0; j < o.length; j++) {
          k = o[j];
          if (count[k] === undefined) {
            count[k] = 0;
            stationOrder.push(k);
          }
          count[k]++;
        }
      }
    }
    var tags = col.tags;
    var loads = {};
    var stationsBy = {};
    for (j = 0; j < loadOrder.length; j++) loads[tags[loadOrder[j]]] = sum[loadOrder[j]];
    for (j = 0; j < stationOrder.length; j++) stationsBy[tags[stationOrder[j]]] = count[stationOrder[j]];
    var people = 0;
    var top = null;
    for (j = 0; j < loadOrder.length; j++) {
      var t = tags[loadOrder[j]];
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

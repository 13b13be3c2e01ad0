// The model of a parsed plan (NOTATION.md §8–§19): the editor's view (discarded roots
// dropped), effective status through the dependency closure, assumed sizes and own costs,
// taiga slugs, ticket references and the initially collapsed set.
//
// Werkbaum._model(doc, opts) → model; all per-node values are arrays indexed by node.index
// (doc.all order). opts.showDiscarded keeps discarded roots (editor option, default off).
(function (W) {
  'use strict';

  var T = W._text;
  var TICKET_ID_RE = /^(?:US|T)-\d+$/;
  var TICKET_LABEL_RE = /[ ]#((?:US|T)-\d+)[ ]/;

  function isDiscarded(n) {
    return n.status !== null && n.status.code === '-';
  }
  function rankOf(n) {
    return n.status === null ? 0 : n.status.rank;
  }
  // isDone: [x] or [^]; isRealized: [~] [/] [x] [^]; isStarted: realized but not done.
  function isDone(n) {
    return n.status !== null && n.status.rank >= 4;
  }
  function isRealized(n) {
    return n.status !== null && n.status.rank >= 2;
  }
  function isStarted(n) {
    return n.status !== null && (n.status.rank === 2 || n.status.rank === 3);
  }
  function isDisjunctive(kids) {
    return kids.length > 0 && (kids[0].type === 'or' || kids[0].type === 'xor');
  }

  // ticketRefOf: an id of the form US-n / T-n, else the first free-standing #US-n / #T-n
  // inside the label (§12–16).
  function ticketRefOf(n) {
    if (n.id !== null) {
      var c = n.id.charCodeAt(0); // U or T: skip the regexp for every other id
      if ((c === 85 || c === 84) && TICKET_ID_RE.test(n.id)) return n.id;
    }
    if (n.label.indexOf('#') < 0) return null;
    var m = TICKET_LABEL_RE.exec(' ' + n.label + ' ');
    return m ? m[1] : null;
  }

  function ownTaiga(n) {
    for (var i = 0; i < n.marks.length; i++) {
      var k = n.marks[i];
      if (k.length > 6 && k.slice(0, 6) === 'taiga.') return k.slice(6);
    }
    return null;
  }

  // assumedRanks computes §11 for every node (children first: reverse document order).
  function assumedRanks(all) {
    var rank = new Array(all.length);
    for (var i = all.length - 1; i >= 0; i--) {
      var n = all[i];
      if (n.size !== null) {
        rank[i] = T.SIZE_RANK[n.size];
        continue;
      }
      var counting = [];
      var ch = n.children;
      for (var j = 0; j < ch.length; j++) {
        if (!ch[j].optional && !isDiscarded(ch[j])) counting.push(ch[j]);
      }
      if (!counting.length) {
        rank[i] = 2; // M
        continue;
      }
      var kids = [];
      var disj = isDisjunctive(counting);
      if (disj) {
        var pool = [];
        for (j = 0; j < counting.length; j++) if (isRealized(counting[j])) pool.push(counting[j]);
        if (!pool.length) pool = counting;
        var anyDone = false;
        for (j = 0; j < pool.length; j++) if (isDone(pool[j])) anyDone = true;
        if (!anyDone) kids = pool;
      } else {
        for (j = 0; j < counting.length; j++) if (!isDone(counting[j])) kids.push(counting[j]);
      }
      if (!kids.length) {
        rank[i] = 0; // everything named is done ⇒ XS
        continue;
      }
      var r;
      if (disj) {
        r = 5;
        for (j = 0; j < kids.length; j++) if (rank[kids[j].index] < r) r = rank[kids[j].index];
      } else {
        var max = -1;
        var k = 0;
        for (j = 0; j < kids.length; j++) {
          var kr = rank[kids[j].index];
          if (kr > max) {
            max = kr;
            k = 1;
          } else if (kr === max) k++;
        }
        r = max + (k >= 3 ? 1 : 0);
        if (r > 5) r = 5;
      }
      rank[i] = r;
    }
    return rank;
  }

  // effectiveRanks computes §19 over the nodes in view: eff(n) = the minimum progress rank
  // over everything n reaches through resolvable dependencies (itself included). Solved
  // bottom-up by rank (a bottleneck search over reversed edges), linear in nodes + deps.
  function effectiveRanks(all, inView, byId) {
    var eff = new Array(all.length);
    var dependents = new Array(all.length);
    var buckets = [[], [], [], [], [], []];
    var i, j;
    for (i = 0; i < all.length; i++) {
      if (!inView[i]) {
        eff[i] = -1;
        continue;
      }
      eff[i] = rankOf(all[i]);
      var deps = all[i].deps;
      for (j = 0; j < deps.length; j++) {
        var t = byId[deps[j]];
        if (t === undefined) continue;
        (dependents[t.index] || (dependents[t.index] = [])).push(i);
      }
    }
    // Only nodes that others depend on propagate: they start in the bucket of their rank,
    // and a lowered node joins the bucket of its new rank when others depend on it.
    for (i = 0; i < all.length; i++) if (dependents[i]) buckets[eff[i]].push(i);
    for (var r = 0; r < 6; r++) {
      var b = buckets[r];
      for (var q = 0; q < b.length; q++) {
        var x = b[q];
        if (eff[x] !== r) continue;
        var ds = dependents[x];
        if (!ds) continue;
        for (j = 0; j < ds.length; j++) {
          if (eff[ds[j]] > r) {
            eff[ds[j]] = r;
            if (dependents[ds[j]]) b.push(ds[j]);
          }
        }
      }
    }
    return eff;
  }

  // initialCollapsed implements §17 on the roots in view (focus rescues too): 1 = collapsed.
  function initialCollapsed(all, inView) {
    var set = new Uint8Array(all.length);
    var targets = [];
    var focused = [];
    var i;
    for (i = 0; i < all.length; i++) {
      if (!inView[i]) continue;
      if (all[i].fold === '>') set[i] = 1;
      if (all[i].fold === '<') targets.push(i);
      if (all[i].focus) focused.push(i);
    }
    targets = targets.concat(focused);
    for (var t = 0; t < targets.length; t++) {
      var path = [];
      for (var x = targets[t]; x >= 0; x = all[x].parent) path.push(x);
      path.reverse();
      for (var p = 0; p < path.length - 1; p++) {
        var a = path[p];
        if (!set[a]) continue;
        set[a] = 0;
        var ch = all[a].children;
        for (var c = 0; c < ch.length; c++) {
          if (ch[c].index !== path[p + 1] && ch[c].children.length) set[ch[c].index] = 1;
        }
      }
      set[targets[t]] = 0;
    }
    return set;
  }

  function model(doc, opts) {
    var all = doc.all;
    var showDiscarded = !!(opts && opts.showDiscarded);
    var roots = [];
    var dropped = 0;
    var inView = new Array(all.length);
    var i;
    for (i = 0; i < doc.roots.length; i++) {
      if (!showDiscarded && isDiscarded(doc.roots[i])) dropped++;
      else roots.push(doc.roots[i]);
    }
    // byId over the nodes in view (first per id, pre-order); parent is in view iff child is.
    var byId = Object.create(null);
    var taiga = new Array(all.length);
    var ticket = new Array(all.length);
    for (i = 0; i < all.length; i++) {
      var n = all[i];
      if (n.parent < 0) inView[i] = showDiscarded || !isDiscarded(n);
      else inView[i] = inView[n.parent];
      if (inView[i] && n.id !== null && byId[n.id] === undefined) byId[n.id] = n;
      var own = n.marks.length ? ownTaiga(n) : null;
      taiga[i] = own !== null ? own : n.parent >= 0 ? taiga[n.parent] : null;
      ticket[i] = ticketRefOf(n);
    }
    var assumed = assumedRanks(all);
    var ownCost = new Array(all.length);
    for (i = 0; i < all.length; i++) ownCost[i] = isDone(all[i]) ? 0 : assumed[i] + 1;
    return {
      doc: doc,
      all: all,
      roots: roots,
      showDiscarded: showDiscarded,
      discardedRootsDropped: dropped,
      inView: inView,
      byId: byId,
      assumed: assumed,
      ownCost: ownCost,
      eff: effectiveRanks(all, inView, byId),
      taiga: taiga,
      ticket: ticket,
      collapsed: initialCollapsed(all, inView)
    };
  }

  W._model = model;
  W._status = {
    isDiscarded: isDiscarded,
    isDone: isDone,
    isRealized: isRealized,
    isStarted: isStarted,
    isDisjunctive: isDisjunctive,
    rankOf: rankOf
  };
})(Werkbaum);

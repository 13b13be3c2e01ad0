// The cheapest path (NOTATION.md §20): needed set, exact search over coupled choice groups,
// stations.
//
// The reference enumerates every assignment of the coupled groups (first group slowest,
// options in pool order) and keeps the first strictly cheaper one. W._cheapPath returns the
// same assignment faster by splitting the coupled groups into independent components:
//
//   * R0 = nodes needed under every assignment (closure from the roots that stops at the
//     options of coupled groups). R(g,o) = closure from option o of group g, minus R0,
//     again stopping at coupled groups (whose parents it reaches: "activation").
//   * needed(a) = R0 ∪ ⋃ R(g, a_g) over the active groups (parent needed), so the cost
//     Σ max(0, own(n) − Σ own(needed path children)) splits into one term per node that
//     depends only on the groups whose R sets contain the node or one of its path children.
//   * Groups are united when an R set of one activates the other, when their R sets share a
//     node, or when one node's term depends on both. Components are then independent: the
//     total cost is a base plus one cost per component, so the reference's lexicographically
//     first minimum of the product is the product of each component's lexicographically first
//     minimum: found by a memoised search over the component's groups in an order in which
//     activations run forwards, or, when they form a cycle, by enumerating the component in
//     the reference's order.
// W._naivePath is the literal reference (tests compare the two on many generated plans).
(function (W) {
  'use strict';

  var LIMIT = 20000;
  var NONE = Object.freeze([]); // shared empty list

  // The searches read the model directly (P and m below are the model): its reverse pass
  // (20_model.js) already built the path children (first/next), the local choice of every
  // alternative group (pick), the resolvable dependency targets (depT/depLists), the coupled
  // groups in pre-order (coupled, coupledOf) and the indices of the roots in view (rootIdx).

  // neededSet: §20.4 with choice[ci] = chosen child per coupled group (null → local).
  // A node is marked when it is queued, so it is queued once and the queue is one typed
  // array (in goja a push is a native call, several times an indexed write).
  function neededSet(m, choice) {
    var first = m.first;
    var next = m.next;
    var pick = m.pick;
    var depT = m.depT;
    var depLists = m.depLists;
    var cOf = choice ? m.coupledOf : null;
    var inSet = new Uint8Array(m.N);
    var queue = new Int32Array(m.N);
    var tail = 0;
    var roots = m.rootIdx;
    var x, y, q, k;
    for (q = 0; q < roots.length; q++) {
      x = roots[q];
      if (inSet[x] === 0) {
        inSet[x] = 1;
        queue[tail++] = x;
      }
    }
    for (q = 0; q < tail; q++) {
      x = queue[q];
      var pk = pick[x];
      if (pk > 0) {
        var g = cOf !== null ? cOf[x] : undefined;
        y = g !== undefined ? choice[g.ci] : pk - 1;
        if (inSet[y] === 0) {
          inSet[y] = 1;
          queue[tail++] = y;
        }
      } else {
        for (y = first[x]; y >= 0; y = next[y]) {
          if (inSet[y] === 0) {
            inSet[y] = 1;
            queue[tail++] = y;
          }
        }
      }
      if (depT !== null && depT[x] !== 0) {
        var d = depLists[depT[x]];
        for (k = 0; k < d.length; k++) {
          y = d[k];
          if (inSet[y] === 0) {
            inSet[y] = 1;
            queue[tail++] = y;
          }
        }
      }
    }
    return inSet;
  }

  // costOf: §20.5 margin sum.
  function costOf(P, inSet) {
    var first = P.first;
    var next = P.next;
    var own = P.ownCost;
    var total = 0;
    for (var i = 0; i < P.N; i++) {
      if (!inSet[i]) continue;
      var c = own[i];
      for (var k = first[i]; k >= 0; k = next[k]) if (inSet[k]) c -= own[k];
      if (c > 0) total += c;
    }
    return total;
  }

  function product(P) {
    var p = 1;
    for (var i = 0; i < P.coupled.length; i++) p *= P.coupled[i].pool.length;
    return p;
  }

  // result: the needed set of an assignment; finish adds its cost, margins and stations.
  // sens (decomposed only, else null) marks the nodes whose own cost the exact search reads
  // (pathAfterEdit).
  function result(P, choice, exact) {
    return { exact: exact, choice: choice, inSet: neededSet(P, choice), cost: 0, sens: null };
  }

  // naive: the literal reference enumeration (kept for tests).
  function naive(P) {
    var G = P.coupled;
    if (product(P) > LIMIT) return result(P, null, false);
    var idx = [];
    for (var i = 0; i < G.length; i++) idx.push(0);
    var best = null;
    var bestCost = Infinity;
    for (;;) {
      var choice = [];
      for (i = 0; i < G.length; i++) choice.push(G[i].pool[idx[i]]);
      var c = costOf(P, neededSet(P, choice));
      if (c < bestCost) {
        bestCost = c;
        best = choice;
      }
      var k = G.length - 1;
      while (k >= 0 && ++idx[k] === G[k].pool.length) idx[k--] = 0;
      if (k < 0) break;
    }
    return result(P, best, true);
  }

  // closure: the nodes reached from the node start (or the nodes starts when not null),
  // skipping the nodes of R0 (S.base, empty while R0 itself is made) and not entering the
  // options of coupled groups; the coupled groups whose parent it reaches are added to acts.
  // A node is marked with the closure's stamp when it is queued, so the queue (S.queue, one
  // typed array of N entries shared by all closures) holds the answer. For the R set of
  // option number opt of group grp (≥ 0) it also sets the owners, their options and the
  // nodes held by more than one R set (reachSets) as it takes each node.
  function closure(S, start, starts, acts, grp, opt) {
    var m = S.P;
    var first = m.first;
    var next = m.next;
    var pick = m.pick;
    var depT = m.depT;
    var depLists = m.depLists;
    var cOf = m.coupledOf;
    var stop = S.base;
    var owner = S.owner;
    var optOf = S.optOf;
    var multi = S.multi;
    var seen = S.seen;
    var queue = S.queue;
    var stamp = ++S.stamp;
    var tail = 0;
    var x, y, q, k;
    if (starts === null) {
      if (stop[start] === 0) {
        seen[start] = stamp;
        queue[tail++] = start;
      }
    } else {
      for (q = 0; q < starts.length; q++) {
        x = starts[q];
        if (seen[x] !== stamp && stop[x] === 0) {
          seen[x] = stamp;
          queue[tail++] = x;
        }
      }
    }
    for (q = 0; q < tail; q++) {
      x = queue[q];
      if (grp >= 0) {
        var w = owner[x];
        if (w < 0) {
          owner[x] = grp;
          optOf[x] = opt;
        } else {
          multi[x] = 1;
          S.extra.push(x, opt);
          if (w !== grp) union(S.uf, w, grp);
        }
      }
      var pk = pick[x];
      if (pk > 0) {
        var g = cOf !== null ? cOf[x] : undefined;
        if (g !== undefined) acts.push(g.ci);
        else {
          y = pk - 1;
          if (seen[y] !== stamp && stop[y] === 0) {
            seen[y] = stamp;
            queue[tail++] = y;
          }
        }
      } else {
        for (y = first[x]; y >= 0; y = next[y]) {
          if (seen[y] !== stamp && stop[y] === 0) {
            seen[y] = stamp;
            queue[tail++] = y;
          }
        }
      }
      if (depT !== null && depT[x] !== 0) {
        var d = depLists[depT[x]];
        for (k = 0; k < d.length; k++) {
          y = d[k];
          if (seen[y] !== stamp && stop[y] === 0) {
            seen[y] = stamp;
            queue[tail++] = y;
          }
        }
      }
    }
    return queue.slice(0, tail);
  }

  function exactSearch(P) {
    if (!P.coupled.length) return result(P, [], true);
    if (product(P) > LIMIT) return result(P, null, false);
    return decomposed(P);
  }

  // decomposed: the exact search over independent components (file comment), in its steps:
  // the base set R0 (baseSet), the R sets of every option (reachSets), the couplings through
  // shared nodes and node terms (couplings), the components (components), and per component
  // of several groups the memoised search (search, dynamic) or, for activation cycles and
  // single groups, the enumeration in the reference order (enumerate). A Search holds what
  // the steps share; it exists only for calls with coupled groups.
  //
  // The steps keep no list per node: a node's groups are its owner (the first group whose
  // R sets hold it; the others are united with it as they are found) and, in dynamic, the
  // first and last position of its groups, found by a walk over the R sets; path children
  // are walked through the model's first/next. In goja an array costs an allocation and a
  // native call per push, and a read of a hole of a sparse array looks the index up as a
  // string on the prototypes; on the 16,384-assignment plan the per-node lists cost more
  // than a third of the search's time (6.7 → 4.2 ms without them, issue 33).
  function decomposed(P) {
    var S = new Search(P);
    baseSet(S);
    reachSets(S);
    var terms = couplings(S);
    var comps = components(S, terms.nodes);
    var total = terms.baseCost;
    for (var ci = 0; ci < comps.length; ci++) {
      var comp = comps[ci];
      var best = comp.groups.length > 1 ? search(S, comp) : enumerate(S, comp);
      for (var i = 0; i < comp.groups.length; i++) S.choiceIdx[comp.groups[i]] = best.idx[i];
      total += best.cost;
    }
    var choice = [];
    for (var g = 0; g < S.G.length; g++) choice.push(S.G[g].pool[S.choiceIdx[g]]);
    var res = result(P, choice, true);
    res.decomposedCost = total;
    res.sens = terms.sens;
    return res;
  }

  // Search is the state of one exact search over the coupled groups G of the model P.
  function Search(P) {
    var N = P.N;
    var G = P.coupled;
    this.P = P;
    this.G = G;
    this.N = N;
    this.base = new Uint8Array(N); // R0
    this.isBaseActive = new Uint8Array(G.length); // groups active under every assignment
    this.reach = []; // reach[g][o] = R(g, o), an Int32Array
    this.acts = []; // acts[g][o] = the groups R(g, o) activates
    // The options are numbered group by group: option o of group g is optAt[g] + o.
    this.optAt = new Int32Array(G.length + 1);
    for (var j = 0; j < G.length; j++) this.optAt[j + 1] = this.optAt[j] + G[j].pool.length;
    this.optGroup = new Int32Array(this.optAt[G.length]); // the group of an option number
    for (j = 0; j < G.length; j++) for (var o = this.optAt[j]; o < this.optAt[j + 1]; o++) this.optGroup[o] = j;
    // owner[x]: the first coupled group whose R sets hold node x, −1 for none; optOf[x] the
    // option (number) of that R set; multi[x] = 1 when more than one R set holds x, and
    // then extra lists x and the number of each further option whose R set holds it.
    this.owner = new Int32Array(N).fill(-1);
    this.optOf = new Int32Array(N);
    this.multi = new Uint8Array(N);
    this.extra = [];
    // privCost[optAt[g] + o]: the sum of the private terms of R(g, o) (couplings), charged
    // whenever group g is active with option o.
    this.privCost = new Int32Array(this.optAt[G.length]);
    // rel[x] = 1 for the nodes whose marks the memoised search reads: the nodes of the terms
    // that are not private and their path children (couplings), which lists them in
    // relList. A group's parent is one of them when its mark matters: in an R set of another
    // group it is a term node whose path children (the options) are in R sets of their
    // own, unless every option is in R0, and then the group's R sets are empty and its
    // choice changes no cost (in its own group's R set it closes an activation cycle,
    // which enumerate searches).
    this.rel = new Uint8Array(N);
    this.relList = null;
    // The options o of groups g with x in R(g, o): pairs g, o in coverList[coverAt[x] …
    // coverAt[x + 1]); only enumerate reads them, so the first enumerate makes them (coverOf).
    this.coverAt = null;
    this.coverList = null;
    this.uf = new Int32Array(G.length); // union-find over the groups
    for (var i = 0; i < G.length; i++) this.uf[i] = i;
    // A closure marks the nodes it queued, and the evaluation of one assignment its needed
    // nodes, with a new stamp (one counter for both).
    this.seen = new Int32Array(N);
    this.queue = new Int32Array(N);
    this.mark = new Int32Array(N);
    this.stamp = 0;
    this.choiceIdx = new Int32Array(G.length); // the option index chosen per group
    this.listed = new Int32Array(G.length); // termClasses: the stamp of the term that last listed a group
    this.eff = new Int32Array(G.length); // enumerate: the effective option per group, −1 = inactive
    this.effNext = new Int32Array(G.length); // enumerate: the next assignment's eff
    this.classesOf = new Array(G.length); // enumerate: the term classes whose support holds a group
  }

  function find(uf, a) {
    while (uf[a] !== a) {
      uf[a] = uf[uf[a]];
      a = uf[a];
    }
    return a;
  }

  function union(uf, a, b) {
    a = find(uf, a);
    b = find(uf, b);
    if (a !== b) {
      if (a < b) uf[b] = a;
      else uf[a] = b;
    }
  }

  // baseSet computes R0, the nodes needed under every assignment, and the groups it
  // activates.
  function baseSet(S) {
    var acts = [];
    var r0 = closure(S, -1, S.P.rootIdx, acts, -1, -1);
    for (var i = 0; i < r0.length; i++) S.base[r0[i]] = 1;
    for (i = 0; i < acts.length; i++) S.isBaseActive[acts[i]] = 1;
  }

  // reachSets computes R(g, o) and the groups it activates for every option, unites a
  // group with the groups its options activate and with the groups whose R sets share a
  // node with its own, and sets the owners.
  function reachSets(S) {
    var G = S.G;
    var uf = S.uf;
    for (var i = 0; i < G.length; i++) {
      var g = G[i];
      var rs = [];
      var as = [];
      for (var j = 0; j < g.pool.length; j++) {
        var act = [];
        var r = closure(S, g.pool[j], null, act, i, S.optAt[i] + j);
        for (var k = 0; k < act.length; k++) union(uf, i, act[k]);
        rs.push(r);
        as.push(act);
      }
      S.reach.push(rs);
      S.acts.push(as);
    }
  }

  // coverOf makes S.coverAt and S.coverList from the R sets on first use.
  function coverOf(S) {
    if (S.coverAt !== null) return;
    var N = S.N;
    var coverAt = new Int32Array(N + 1);
    var i, j, k, r, nr;
    for (i = 0; i < S.reach.length; i++) {
      for (j = 0; j < S.reach[i].length; j++) {
        r = S.reach[i][j];
        for (k = 0, nr = r.length; k < nr; k++) coverAt[r[k] + 1] += 2;
      }
    }
    for (var x = 0; x < N; x++) coverAt[x + 1] += coverAt[x];
    var coverList = new Int32Array(coverAt[N]);
    var at = coverAt.slice(0, N);
    for (i = 0; i < S.reach.length; i++) {
      for (j = 0; j < S.reach[i].length; j++) {
        r = S.reach[i][j];
        for (k = 0, nr = r.length; k < nr; k++) {
          var p = at[r[k]];
          coverList[p] = i;
          coverList[p + 1] = j;
          at[r[k]] = p + 2;
        }
      }
    }
    S.coverAt = coverAt;
    S.coverList = coverList;
  }

  // couplings unites the groups whose options decide one node's term (its own groups and
  // those of its path children; groups sharing a node are united already), and returns
  // the nodes whose term depends on some group, the cost of the terms that depend on none,
  // and sens: the nodes whose own cost some component's cost reads, the term nodes and
  // their path children. Every other node's own cost enters only the base cost, which is
  // the same for every assignment, so changing it cannot change the choice (pathAfterEdit).
  //
  // A term is private to the option o of group g when its node is in R(g, o) and in no
  // other R set, and each of its path children is in R0, in no R set, or in R(g, o) (the
  // first R set that took it: optOf): the node is needed exactly when g is active and
  // chooses o, and its children then are needed or not whatever the other groups choose,
  // so the term is a constant charged with that choice (S.privCost). Most
  // of a plan's nodes in R sets have such a term (the leaves of an option, the option
  // itself); the searches then read only the few terms that couple choices. In goja every
  // node a search step visits costs tens of interpreted operations (issue 33).
  function couplings(S) {
    var base = S.base;
    var owner = S.owner;
    var optOf = S.optOf;
    var multi = S.multi;
    var privCost = S.privCost;
    var rel = S.rel;
    var uf = S.uf;
    var first = S.P.first;
    var next = S.P.next;
    var own = S.P.ownCost;
    var nodes = new Int32Array(S.N);
    var sens = new Uint8Array(S.N);
    var relList = new Int32Array(S.N);
    var n = 0;
    var nRel = 0;
    var baseCost = 0;
    var cc, c;
    for (var x = 0, N = S.N; x < N; x++) {
      var g0 = owner[x];
      if (g0 < 0) {
        if (base[x] === 0) continue;
        c = first[x];
      } else if ((c = first[x]) < 0) { // in some R set, no path children: its groups decide its term
        sens[x] = 1;
        if (multi[x] === 0) privCost[optOf[x]] += own[x]; // own costs are ≥ 0 (§11): the term is own[x]
        else {
          nodes[n++] = x;
          if (rel[x] === 0) {
            rel[x] = 1;
            relList[nRel++] = x;
          }
        }
        continue;
      }
      // cc: own[x] less its path children in R0 or in an R set, which is x's term when x is
      // private (its children are then needed with it) or needed under every assignment
      // and no child is in an R set.
      var owned = g0 >= 0;
      var dep = owned;
      var priv = owned && multi[x] === 0;
      var ox = priv ? optOf[x] : -1;
      cc = own[x];
      for (; c >= 0; c = next[c]) {
        if (owned) sens[c] = 1;
        var w = owner[c];
        if (w < 0) {
          if (base[c] === 1) cc -= own[c];
          continue;
        }
        cc -= own[c];
        if (optOf[c] !== ox) priv = false;
        dep = true;
        if (g0 < 0) g0 = w;
        else if (w !== g0) union(uf, g0, w);
      }
      if (priv) {
        sens[x] = 1;
        if (cc > 0) privCost[ox] += cc;
      } else if (dep) {
        nodes[n++] = x;
        sens[x] = 1;
        if (rel[x] === 0) {
          rel[x] = 1;
          relList[nRel++] = x;
        }
        for (c = first[x]; c >= 0; c = next[c]) {
          sens[c] = 1;
          if (rel[c] === 0) {
            rel[c] = 1;
            relList[nRel++] = c;
          }
        }
      } else if (cc > 0) baseCost += cc;
    }
    S.relList = relList.slice(0, nRel);
    return { nodes: nodes.slice(0, n), baseCost: baseCost, sens: sens };
  }

  // components returns the components in the order of their first group: each its groups
  // in ascending order and its term nodes (an Int32Array, ascending).
  function components(S, termNodes) {
    var nG = S.G.length;
    var owner = S.owner;
    var first = S.P.first;
    var next = S.P.next;
    var byRoot = new Int32Array(nG).fill(-1); // root group → its component
    var compOf = new Int32Array(nG); // group → its component
    var order = [];
    var i, c;
    for (i = 0; i < nG; i++) {
      var root = find(S.uf, i);
      c = byRoot[root];
      if (c < 0) {
        c = byRoot[root] = order.length;
        order.push({ groups: [], nodes: null });
      }
      order[c].groups.push(i);
      compOf[i] = c;
    }
    if (order.length === 1) {
      order[0].nodes = termNodes;
      return order;
    }
    // A term node's component is that of its owner, or of its first path child's owner.
    var nT = termNodes.length;
    var compOfTerm = new Int32Array(nT);
    var count = new Int32Array(order.length);
    for (i = 0; i < nT; i++) {
      var x = termNodes[i];
      var gi = owner[x];
      for (var y = first[x]; gi < 0 && y >= 0; y = next[y]) gi = owner[y];
      c = compOf[gi];
      compOfTerm[i] = c;
      count[c]++;
    }
    for (c = 0; c < order.length; c++) order[c].nodes = new Int32Array(count[c]);
    count.fill(0);
    for (i = 0; i < nT; i++) {
      c = compOfTerm[i];
      order[c].nodes[count[c]++] = termNodes[i];
    }
    return order;
  }

  // enumerate: the reference order restricted to one component (any activation pattern).
  // An assignment's cost is the sum of the private terms of its active groups' options
  // (couplings) and of the component's other node terms, and a term depends only on the
  // effective options (the chosen one when the group is active, none otherwise) of the few
  // groups whose R sets hold the node or one of its path children: its support.
  // Terms with the same support form a class whose sum is memoised by the effective options
  // of that support, in a table of Π(options + 1) entries kept when it is no larger than the
  // component's number of assignments (else the class is summed every time). An assignment
  // then costs its activation and one look-up per class instead of a walk over every node
  // and its children: 16,384 assignments of a 600-line plan took seconds in goja (issue 33).
  function enumerate(S, comp) {
    var G = S.G;
    var cg = comp.groups;
    var k = cg.length;
    var choiceIdx = S.choiceIdx;
    var eff = S.eff;
    var nx = S.effNext;
    var acts = S.acts;
    var isBaseActive = S.isBaseActive;
    var privCost = S.privCost;
    var optAt = S.optAt;
    var nOpt = new Int32Array(k);
    var assignments = 1;
    var a, g, q;
    for (a = 0; a < k; a++) {
      nOpt[a] = G[cg[a]].pool.length;
      assignments *= nOpt[a];
    }
    var classes = termClasses(S, comp, assignments);
    var nc = classes.length;
    // Only the classes of groups whose effective option changed are looked up again.
    var ofGroup = S.classesOf;
    for (a = 0; a < k; a++) {
      ofGroup[cg[a]] = [];
      eff[cg[a]] = -2; // no assignment yet: every class is looked up first
    }
    for (var c = 0; c < nc; c++) {
      var gs0 = classes[c].groups;
      for (q = 0; q < gs0.length; q++) ofGroup[gs0[q]].push(c);
    }
    var value = new Int32Array(nc);
    var dirtyAt = new Int32Array(nc);
    var dirty = new Int32Array(nc);
    var stack = new Int32Array(k);
    var idx = new Int32Array(k);
    for (a = 0; a < k; a++) choiceIdx[cg[a]] = 0;
    var bestIdx = null;
    var bestCost = Infinity;
    var cost = 0;
    for (var step = 1; ; step++) {
      // Activation: nx[g] = chosen option of an active group, −1 for an inactive one.
      var top = 0;
      for (a = 0; a < k; a++) {
        g = cg[a];
        if (isBaseActive[g]) {
          nx[g] = idx[a];
          stack[top++] = g;
        } else nx[g] = -1;
      }
      while (top > 0) {
        var h = stack[--top];
        var aa = acts[h][nx[h]];
        for (q = 0; q < aa.length; q++) {
          var t = aa[q];
          if (nx[t] === -1) {
            nx[t] = choiceIdx[t];
            stack[top++] = t;
          }
        }
      }
      var nd = 0;
      for (a = 0; a < k; a++) {
        g = cg[a];
        if (nx[g] === eff[g]) continue;
        if (eff[g] >= 0) cost -= privCost[optAt[g] + eff[g]]; // the private terms of the option left
        if (nx[g] >= 0) cost += privCost[optAt[g] + nx[g]];
        eff[g] = nx[g];
        var oc = ofGroup[g];
        for (q = 0; q < oc.length; q++) {
          if (dirtyAt[oc[q]] !== step) {
            dirtyAt[oc[q]] = step;
            dirty[nd++] = oc[q];
          }
        }
      }
      for (var d = 0; d < nd; d++) {
        var ci = dirty[d];
        var v = classValue(S, classes[ci]);
        cost += v - value[ci];
        value[ci] = v;
      }
      if (cost < bestCost) {
        bestCost = cost;
        bestIdx = Array.prototype.slice.call(idx);
      }
      var p = k - 1;
      while (p >= 0 && ++idx[p] === nOpt[p]) {
        idx[p] = 0;
        choiceIdx[cg[p]] = 0;
        p--;
      }
      if (p < 0) break;
      choiceIdx[cg[p]] = idx[p];
    }
    return { idx: bestIdx, cost: bestCost };
  }

  // classValue: the sum of a class's terms under S.eff, from its table when it has one.
  function classValue(S, cl) {
    var tab = cl.table;
    if (tab === null) return classCost(S, cl.nodes);
    var eff = S.eff;
    var gs = cl.groups;
    var st = cl.strides;
    var at = 0;
    for (var q = 0; q < gs.length; q++) at += (eff[gs[q]] + 1) * st[q];
    var v = tab[at];
    if (v < 0) v = tab[at] = classCost(S, cl.nodes);
    return v;
  }

  // termClasses pools the term nodes of a component by their support (enumerate): each
  // class with its groups, the strides of its table index and its table (or null).
  function termClasses(S, comp, assignments) {
    coverOf(S);
    var first = S.P.first;
    var next = S.P.next;
    var byKey = Object.create(null);
    var classes = [];
    for (var q = 0, nT = comp.nodes.length; q < nT; q++) {
      var x = comp.nodes[q];
      var stamp = ++S.stamp;
      var gs = [];
      coverGroups(S, x, stamp, gs);
      for (var y = first[x]; y >= 0; y = next[y]) coverGroups(S, y, stamp, gs);
      gs.sort(byNumber);
      var key = gs.join(',');
      var cl = byKey[key];
      if (cl === undefined) {
        cl = byKey[key] = { groups: gs, strides: null, nodes: [], table: null };
        classes.push(cl);
      }
      cl.nodes.push(x);
    }
    for (var c = 0; c < classes.length; c++) {
      var cls = classes[c];
      var size = 1;
      var strides = [];
      for (var j = 0; j < cls.groups.length && size <= assignments; j++) {
        strides.push(size);
        size *= S.G[cls.groups[j]].pool.length + 1;
      }
      if (size > assignments) continue;
      cls.strides = strides;
      cls.table = new Int32Array(size).fill(-1);
    }
    return classes;
  }

  // coverGroups adds to gs the groups with an R set that holds node y and that no call with
  // the same stamp listed before.
  function coverGroups(S, y, stamp, gs) {
    var cl = S.coverList;
    var seen = S.listed;
    for (var i = S.coverAt[y], end = S.coverAt[y + 1]; i < end; i += 2) {
      var g = cl[i];
      if (seen[g] !== stamp) {
        seen[g] = stamp;
        gs.push(g);
      }
    }
  }

  // isNeeded: node y is in the needed set under the effective options S.eff (enumerate).
  function isNeeded(S, y) {
    if (S.base[y] === 1) return true;
    var cl = S.coverList;
    var eff = S.eff;
    for (var i = S.coverAt[y], end = S.coverAt[y + 1]; i < end; i += 2) if (eff[cl[i]] === cl[i + 1]) return true;
    return false;
  }

  // classCost: the sum of the margin terms of the given nodes under S.eff.
  function classCost(S, nodes) {
    var own = S.P.ownCost;
    var first = S.P.first;
    var next = S.P.next;
    var total = 0;
    for (var q = 0; q < nodes.length; q++) {
      var x = nodes[q];
      if (!isNeeded(S, x)) continue;
      var cc = own[x];
      for (var y = first[x]; y >= 0; y = next[y]) if (isNeeded(S, y)) cc -= own[y];
      if (cc > 0) total += cc;
    }
    return total;
  }

  // search: the optimum of a component of several groups. When its activations form no
  // cycle, the groups are taken in an order in which every activation runs forwards (the
  // reference order when it is one) and the memoised search (dynamic) applies; cycles are
  // enumerated. A plan of 14 groups that activate backwards took seconds in goja (issue 33).
  function search(S, comp) {
    var order = activationOrder(S, comp);
    if (order === null) return enumerate(S, comp);
    var cg = comp.groups;
    var res = dynamic(S, comp, order);
    var optOf = new Int32Array(S.G.length);
    for (var p = 0; p < order.length; p++) optOf[order[p]] = res.idx[p];
    var idx = [];
    for (var a = 0; a < cg.length; a++) idx.push(optOf[cg[a]]);
    return { idx: idx, cost: res.cost };
  }

  // activationOrder returns the component's groups in an order in which every activation
  // (of a group not active anyway) runs from an earlier group to a later one, preferring
  // the reference order (Kahn's algorithm, the earliest ready group first), or null when
  // the activations form a cycle.
  function activationOrder(S, comp) {
    var cg = comp.groups;
    var k = cg.length;
    var posOf = new Int32Array(S.G.length);
    var a, o, q;
    for (a = 0; a < k; a++) posOf[cg[a]] = a;
    var indeg = new Int32Array(k);
    var out = [];
    for (a = 0; a < k; a++) {
      var targets = [];
      var acts = S.acts[cg[a]];
      for (o = 0; o < acts.length; o++) {
        for (q = 0; q < acts[o].length; q++) {
          var h = acts[o][q];
          if (S.isBaseActive[h]) continue;
          if (h === cg[a]) return null;
          var ph = posOf[h];
          if (targets.indexOf(ph) < 0) {
            targets.push(ph);
            indeg[ph]++;
          }
        }
      }
      out.push(targets);
    }
    var order = [];
    var done = new Uint8Array(k);
    while (order.length < k) {
      for (a = 0; a < k && (done[a] || indeg[a] > 0); a++);
      if (a === k) return null; // a cycle
      done[a] = 1;
      order.push(cg[a]);
      for (q = 0; q < out[a].length; q++) indeg[out[a][q]]--;
    }
    return order;
  }

  // chargeTerms charges every term of the component (but the private ones, see couplings) to
  // the last position (in the search's order cg) whose group can change it (termPos). Of the
  // terms of position p, those whose node only the group of p can mark are read from its R
  // sets (reach: their nodes the search reads) by dynamic; the others, whose
  // node is in R0 or may have been marked before p, are termList[termAt[p] … termAt[p + 1])
  // (counted, then placed). keys[p] lists the nodes whose marks, made by groups before p,
  // terms of p or later still read (the state of dynamic's search at p).
  // It is a function of its own, not part of dynamic, so that its variables stay on goja's
  // stack: a variable a nested function (solve) reads lives in a heap scope.
  function chargeTerms(S, comp, cg) {
    var G = S.G;
    var first = S.P.first;
    var next = S.P.next;
    var isBaseActive = S.isBaseActive;
    var k = cg.length;
    var a, q, o, x, y, c, last;
    // firstP[y], lastP[y]: the first and last position of the groups whose R sets hold
    // node y (−1: none; all of them are in this component, being united), for the nodes
    // whose marks the search reads (S.relList; −1 for the others), from the first R set
    // that took each (owner, optOf) and the further ones (S.extra): no walk over the R
    // sets. relOf[relAt[i] … relAt[i + 1]): those nodes of the R set of option number i
    // (of this component's groups), the only nodes the search marks.
    var owner = S.owner;
    var optOf = S.optOf;
    var optGroup = S.optGroup;
    var extra = S.extra;
    var rel = S.rel;
    var relList = S.relList;
    var nRel = relList.length;
    var nE = extra.length;
    var posOf = new Int32Array(G.length).fill(-1);
    for (a = 0; a < k; a++) posOf[cg[a]] = a;
    var firstP = new Int32Array(S.N).fill(-1);
    var lastP = new Int32Array(S.N).fill(-1);
    var relAt = new Int32Array(S.optAt[G.length] + 1);
    for (q = 0; q < nRel; q++) {
      y = relList[q];
      if (owner[y] < 0 || (a = posOf[owner[y]]) < 0) continue;
      firstP[y] = lastP[y] = a;
      relAt[optOf[y] + 1]++;
    }
    for (q = 0; q < nE; q += 2) {
      y = extra[q];
      if (rel[y] === 0 || (a = posOf[owner[y]]) < 0) continue;
      o = extra[q + 1];
      a = posOf[optGroup[o]];
      if (a < firstP[y]) firstP[y] = a;
      if (a > lastP[y]) lastP[y] = a;
      relAt[o + 1]++;
    }
    for (q = 1; q < relAt.length; q++) relAt[q] += relAt[q - 1];
    var relOf = new Int32Array(relAt[relAt.length - 1]);
    var at = relAt.slice(0, relAt.length - 1);
    for (q = 0; q < nRel; q++) {
      y = relList[q];
      if (firstP[y] >= 0) relOf[at[optOf[y]]++] = y;
    }
    for (q = 0; q < nE; q += 2) {
      y = extra[q];
      if (rel[y] === 1 && firstP[y] >= 0) relOf[at[extra[q + 1]]++] = y;
    }
    // maxUse[y]: the last position whose terms read node y's mark when that is after the
    // first position that can mark it, −1 until set; used lists the nodes with a maxUse.
    var nodes = comp.nodes;
    var nT = nodes.length;
    var termPos = new Int32Array(S.N).fill(-1);
    var termAt = new Int32Array(k + 1);
    var maxUse = new Int32Array(S.N).fill(-1);
    var used = [];
    var nPinned = 0;
    for (q = 0; q < nT; q++) {
      x = nodes[q];
      last = lastP[x];
      c = first[x];
      if (c < 0) { // no path children: the term reads x alone
        termPos[x] = last;
        if (firstP[x] !== last) {
          termAt[last + 1]++;
          nPinned++;
          if (maxUse[x] < last) { // its mark is carried from firstP[x] on
            if (maxUse[x] < 0) used.push(x);
            maxUse[x] = last;
          }
        }
        continue;
      }
      for (; c >= 0; c = next[c]) if (lastP[c] > last) last = lastP[c];
      termPos[x] = last;
      if (firstP[x] !== last) { // in R0 (firstP −1: in no R set) or marked before last
        termAt[last + 1]++;
        nPinned++;
      }
      for (y = x; y >= 0; y = y === x ? first[x] : next[y]) { // the node, then its path children
        if (lastP[y] >= 0 && firstP[y] < last && maxUse[y] < last) {
          if (maxUse[y] < 0) used.push(y);
          maxUse[y] = last;
        }
      }
    }
    for (a = 0; a < k; a++) termAt[a + 1] += termAt[a];
    var termList = new Int32Array(nPinned);
    at = termAt.slice(0, k);
    for (q = 0; q < nT; q++) {
      x = nodes[q];
      if (firstP[x] !== termPos[x]) termList[at[termPos[x]]++] = x;
    }
    // A group that is not always active reads its parent's mark at its own level.
    for (a = 0; a < k; a++) {
      if (isBaseActive[cg[a]]) continue;
      y = G[cg[a]].parent;
      if (lastP[y] < 0) continue; // never reachable: the group is never active
      if (firstP[y] < a && maxUse[y] < a) {
        if (maxUse[y] < 0) used.push(y);
        maxUse[y] = a;
      }
    }
    var keys = [];
    for (a = 0; a <= k; a++) keys.push([]);
    for (q = 0; q < used.length; q++) {
      y = used[q];
      for (a = firstP[y] + 1; a <= maxUse[y]; a++) keys[a].push(y);
    }
    for (a = 0; a <= k; a++) if (keys[a].length > 1) keys[a].sort(byNumber);
    return { termAt: termAt, termList: termList, termPos: termPos, firstP: firstP, keys: keys, relAt: relAt, relOf: relOf };
  }

  // dynamic: the memoised search over the groups of a component in the given order, in
  // which every group is either active in every assignment (its parent is in R0) or
  // activated only by groups that come earlier (e.g. a group nested in an option of an
  // earlier group). Each term is charged to the last group (in that order) that can change
  // it, a private term (couplings) with its option; only the nodes the terms read are
  // marked (chargeTerms' reach). After choosing groups 0…p−1 the rest depends only on which of the nodes still used
  // by later terms are marked ("state"). best(p, state) is the cheapest choice of groups
  // p…k−1 and among equally cheap ones the first in the reference order (the groups
  // compared in reference order). Two assignments that agree on groups 0…p−1 compare in
  // the reference's order exactly so, so memoising best(p, state) yields the reference's
  // lexicographically first optimum. Returns {idx (options in the given order), cost}.
  // The tables are typed arrays indexed by group or node, not objects keyed by numbers: in
  // goja every such key is a number made into a string and a map access, and the setup of
  // the 16,384-assignment plan took a third of its search (issue 33).
  function dynamic(S, comp, cg) {
    var G = S.G;
    var isBaseActive = S.isBaseActive;
    var k = cg.length;
    // byRef: the positions (in the given order) sorted by the groups' reference order.
    var byRef = [];
    for (var a = 0; a < k; a++) byRef.push(a);
    byRef.sort(function (u, v) { return cg[u] - cg[v]; });
    var charged = chargeTerms(S, comp, cg);
    var termAt = charged.termAt;
    var termList = charged.termList;
    var termPos = charged.termPos;
    var firstP = charged.firstP;
    var keys = charged.keys;
    var relAt = charged.relAt;
    var relOf = charged.relOf;
    var memo = Object.create(null);
    // before: the completion of option o at position p and the best completion sub of
    // positions p + 1… (null after the last) comes before that of option bo with bsub in
    // reference order.
    function before(o, sub, bo, bsub, p) {
      for (var r = 0; r < k; r++) {
        var q = byRef[r];
        if (q < p) continue;
        if (q === p) {
          if (o !== bo) return o < bo;
        } else if (sub.opts[q] !== bsub.opts[q]) return sub.opts[q] < bsub.opts[q];
      }
      return false;
    }
    // solve(p, marked): best(p, state), the state being the marked nodes of keys[p]. The
    // margin terms (max(0, own − Σ own of the marked path children)) are summed inline: a
    // call per term costs more than the term in goja.
    function solve(p, marked) {
      var id = marked.length === 0 ? p : p + '|' + marked.join(',');
      var hit = memo[id];
      if (hit) return hit;
      var mark = S.mark;
      var first = S.P.first;
      var next = S.P.next;
      var base = S.base;
      var own = S.P.ownCost;
      var terms = termList;
      var tPos = termPos;
      var fP = firstP;
      var g = cg[p];
      var grp = G[g];
      var always = isBaseActive[g] === 1;
      var rels = relOf;
      var q0 = S.optAt[g]; // option number of the group's first option
      var t0 = termAt[p];
      var t1 = termAt[p + 1];
      var kn = keys[p + 1];
      // The best option so far, its cost and the best completion after it: its options
      // are copied once, for the best (in goja a typed array's slice is a native call that
      // first reads "slice" and "constructor" as numbers).
      var bestO = -1;
      var bestCost = 0;
      var bestSub = null;
      for (var o = 0; o < grp.pool.length; o++) {
        var stamp = ++S.stamp;
        var t;
        for (t = 0; t < marked.length; t++) mark[marked[t]] = stamp;
        var active = always || mark[grp.parent] === stamp;
        var r0 = relAt[q0 + o];
        var r1 = relAt[q0 + o + 1];
        if (active) for (t = r0; t < r1; t++) mark[rels[t]] = stamp;
        var cost = active ? S.privCost[q0 + o] : 0;
        var tx, cc, c;
        for (t = t0; t < t1; t++) {
          tx = terms[t];
          if (base[tx] === 0 && mark[tx] !== stamp) continue;
          cc = own[tx];
          for (c = first[tx]; c >= 0; c = next[c]) if (base[c] === 1 || mark[c] === stamp) cc -= own[c];
          if (cc > 0) cost += cc;
        }
        // The terms only this group marks: the nodes of the chosen option's R set charged here
        // (the private ones are in cost already).
        if (active) {
          for (t = r0; t < r1; t++) {
            tx = rels[t];
            if (tPos[tx] !== p || fP[tx] !== p) continue;
            cc = own[tx];
            for (c = first[tx]; c >= 0; c = next[c]) if (base[c] === 1 || mark[c] === stamp) cc -= own[c];
            if (cc > 0) cost += cc;
          }
        }
        var nextMarked = [];
        for (t = 0; t < kn.length; t++) if (mark[kn[t]] === stamp) nextMarked.push(kn[t]);
        var sub = null;
        if (p + 1 < k) {
          sub = solve(p + 1, nextMarked);
          cost += sub.cost;
        }
        if (bestO < 0 || cost < bestCost || (cost === bestCost && before(o, sub, bestO, bestSub, p))) {
          bestO = o;
          bestCost = cost;
          bestSub = sub;
        }
      }
      var opts = bestSub !== null ? bestSub.opts.slice() : new Int32Array(k);
      opts[p] = bestO;
      var best = { cost: bestCost, opts: opts };
      memo[id] = best;
      return best;
    }
    var res = solve(0, []);
    return { idx: res.opts, cost: res.cost };
  }

  function byNumber(u, v) {
    return u - v;
  }

  // finish walks the needed set once, children before parents, and adds to the result:
  //   cost      §20.5 (= the total of §21),
  //   margin    per needed node max(0, own − Σ own of its needed path children) (§20.5, §21),
  //   station   §20: needed, not done, no open needed node anywhere below (all descendants),
  //   hot       the needed nodes with a margin or a station, in reverse document order:
  //             the only nodes 35_loads.js has to visit.
  function finish(m, res) {
    var all = m.all;
    var first = m.first;
    var next = m.next;
    var rk = m.rank;
    var own = m.ownCost;
    var inSet = res.inSet;
    var N = m.N;
    var openBelow = new Uint8Array(N);
    var station = new Uint8Array(N);
    var margin = new Int32Array(N);
    var hot = [];
    var cost = 0;
    for (var i = N - 1; i >= 0; i--) {
      var p;
      if (inSet[i] === 0) {
        if (openBelow[i] === 1) {
          p = all[i].parent;
          if (p >= 0) openBelow[p] = 1;
        }
        continue;
      }
      var c = own[i];
      for (var k = first[i]; k >= 0; k = next[k]) if (inSet[k] === 1) c -= own[k];
      var open = rk[i] < 4;
      var st = open && openBelow[i] === 0;
      if (c > 0) {
        margin[i] = c;
        cost += c;
        hot.push(i);
      } else if (st) hot.push(i);
      if (st) station[i] = 1;
      if (open || openBelow[i] === 1) {
        p = all[i].parent;
        if (p >= 0) openBelow[p] = 1;
      }
    }
    res.cost = cost;
    res.margin = margin;
    res.station = station;
    res.hot = hot;
    res.openBelow = openBelow;
    res.P = m;
    return res;
  }

  // ---- The path of a status edit ------------------------------------------------------
  // A status edit of node x whose model modelBoxEdit (20_model.js) made from the old one
  // shares the old dependency lists and roots (the very arrays) and path children (but
  // those of x's parent when x started or stopped being one of them), and changes the rank
  // of x and the own costs and local choices (pick) of x and its ancestors (the chain)
  // only: every other node reads only columns of nodes off the chain (a node's children are
  // off the chain unless it is on it). So when the path children and the chain's picks are the old
  // ones (but those of coupled group parents when the search chose for every group) and
  // the coupled groups are the same groups with the same pools (or too many assignments
  // before and after: the path is the local choices'), the closures of
  // neededSet and of the exact search are the old ones; and when no node whose own cost
  // changed is one the search's component costs read (path.sens), each component's costs
  // are the old ones, and so is its first cheapest assignment: the choice, and with it the
  // needed set, are the old ones. Otherwise the search runs (its needed set may differ from
  // the old one in a few nodes). finish's columns then change only on the chain (own costs,
  // x's rank, the path children of x's parent) and around the nodes whose needed flag
  // changed (finishAfterEdit): a walk of those instead of all nodes. pathAfterEdit answers
  // that path, or null for a model it cannot follow (the caller runs the path in full).
  // js/test/write_path.test.js and TestBoxEditPathEqualsFullPath (goja) hold it to the full
  // path on generated edits.
  var afterEditOff = false;
  function pathAfterEdit(prev, m, index) {
    var P0 = prev.P;
    if (afterEditOff || P0 === undefined || m.N !== P0.N || m.depT !== P0.depT || m.depLists !== P0.depLists ||
        m.rootIdx !== P0.rootIdx) return null;
    var res = sameChoice(prev, m, index)
      ? { exact: prev.exact, choice: prev.choice, inSet: prev.inSet, cost: 0, sens: prev.sens }
      : exactSearch(m);
    var changed = res.inSet === prev.inSet ? NONE : changedNodes(prev.inSet, res.inSet);
    return changed === null ? finish(m, res) : finishAfterEdit(m, prev, res, index, changed);
  }

  // sameChoice: the search would choose what it chose for prev (see above).
  function sameChoice(prev, m, index) {
    var P0 = prev.P;
    if (m.first !== P0.first || m.next !== P0.next) return false;
    // An approximate path (too many assignments, §20 step 7: the local choices) stays one
    // while the assignments are too many, and then reads no group at all.
    var approx = prev.choice === null && product(m) > LIMIT;
    if (!approx && !sameGroups(m.coupled, P0.coupled)) return false;
    var all = m.all;
    var O = m.ownCost;
    var sens = prev.sens;
    // With a choice per coupled group the search reads a group parent's pick only as
    // "disjunctive" (pick > 0), which it stays, so its local choice may change.
    var cOf = prev.choice !== null ? m.coupledOf : null;
    for (var x = index; x >= 0; x = all[x].parent) {
      if (m.pick[x] !== P0.pick[x] && (cOf === null || cOf[x] === undefined)) return false;
      if (sens !== null && O[x] !== P0.ownCost[x] && sens[x] === 1) return false;
    }
    return true;
  }

  // changedNodes lists the nodes in one needed set and not the other, or null when they are
  // so many that finish in full costs less than following them.
  var CHANGED_MAX = 1024;
  function changedNodes(a, b) {
    var out = [];
    for (var i = 0, n = a.length; i < n; i++) {
      if (a[i] !== b[i]) {
        if (out.length === CHANGED_MAX) return null;
        out.push(i);
      }
    }
    return out;
  }

  // sameGroups: the coupled groups a and b have the same parents and pools, in order.
  function sameGroups(a, b) {
    if (a.length !== b.length) return false;
    for (var i = 0; i < a.length; i++) {
      var pa = a[i].pool;
      var pb = b[i].pool;
      if (a[i].parent !== b[i].parent || pa.length !== pb.length) return false;
      for (var j = 0; j < pa.length; j++) if (pa[j] !== pb[j]) return false;
    }
    return true;
  }

  // finishAfterEdit is finish(m, res) from the old path's columns, for a needed set that
  // differs from the old one in the nodes `changed` (besides the chain's own costs, x's rank
  // and the path children of x's parent, which the model may have relinked). openBelow (an
  // open needed node somewhere below) changes only above the nodes that became or stopped
  // being open needed nodes; a margin only for those, the nodes of `changed`, their parents
  // and the chain; a station only for those and the nodes whose openBelow changed.
  function finishAfterEdit(m, prev, res, index, changed) {
    var all = m.all;
    var inSet = res.inSet;
    var oldIn = prev.inSet;
    var oldRk = prev.P.rank;
    var rk = m.rank;
    // The nodes whose "open needed node" changed.
    var flips = [];
    if ((inSet[index] === 1 && rk[index] < 4) !== (oldIn[index] === 1 && oldRk[index] < 4)) flips.push(index);
    var k, x;
    for (k = 0; k < changed.length; k++) {
      x = changed[k];
      if (x !== index && (inSet[x] === 1 && rk[x] < 4) !== (oldIn[x] === 1 && oldRk[x] < 4)) flips.push(x);
    }
    var openBelow = prev.openBelow;
    var above = NONE; // the nodes whose openBelow was looked at again
    if (flips.length) {
      openBelow = openBelow.slice();
      above = flips.length === 1 ? openAbove(all, inSet, rk, openBelow, flips[0]) : openAboveAll(m, inSet, rk, openBelow, flips);
    }
    var st = {
      m: m,
      inSet: inSet,
      openBelow: openBelow,
      margin: prev.margin.slice(),
      station: prev.station.slice(),
      hot: prev.hot,
      copied: false,
      cost: prev.cost
    };
    for (x = index; x >= 0; x = all[x].parent) refresh(st, x);
    for (k = 0; k < changed.length; k++) {
      x = changed[k];
      refresh(st, x);
      if (all[x].parent >= 0) refresh(st, all[x].parent);
    }
    for (k = 0; k < above.length; k++) refresh(st, above[k]);
    res.cost = st.cost;
    res.margin = st.margin;
    res.station = st.station;
    res.hot = st.hot;
    res.openBelow = openBelow;
    res.P = m;
    return res;
  }

  // openAbove updates openBelow above node x, the only one whose "open needed node"
  // changed: set up to the first ancestor that has it when x became one; recomputed from
  // the children up to the first ancestor that keeps it when x stopped being one. Returns
  // the ancestors it changed.
  function openAbove(all, inSet, rk, openBelow, x) {
    var on = inSet[x] === 1 && rk[x] < 4;
    var out = [];
    for (var a = all[x].parent; a >= 0; a = all[a].parent) {
      var ob = on ? 1 : openAmong(all[a].children, inSet, rk, openBelow);
      if (openBelow[a] === ob) break;
      openBelow[a] = ob;
      out.push(a);
    }
    return out;
  }

  // openAboveAll recomputes openBelow of every ancestor of the nodes xs from its children,
  // children first (a descendant's index is larger), and returns those ancestors.
  function openAboveAll(m, inSet, rk, openBelow, xs) {
    var all = m.all;
    var seen = new Uint8Array(m.N);
    var ups = [];
    for (var k = 0; k < xs.length; k++) {
      for (var a = all[xs[k]].parent; a >= 0 && seen[a] === 0; a = all[a].parent) {
        seen[a] = 1;
        ups.push(a);
      }
    }
    ups.sort(byNumber);
    for (k = ups.length - 1; k >= 0; k--) openBelow[ups[k]] = openAmong(all[ups[k]].children, inSet, rk, openBelow);
    return ups;
  }

  // refresh recomputes finish's margin, station and hot membership of node x (in st, the
  // columns being updated) and the cost with it; a second refresh of a node changes nothing.
  function refresh(st, x) {
    var m = st.m;
    var inSet = st.inSet;
    var own = m.ownCost;
    var next = m.next;
    var mg = 0;
    var sn = 0;
    if (inSet[x] === 1) {
      var c = own[x];
      for (var k = m.first[x]; k >= 0; k = next[k]) if (inSet[k] === 1) c -= own[k];
      if (c > 0) mg = c;
      if (m.rank[x] < 4 && st.openBelow[x] === 0) sn = 1;
    }
    var margin = st.margin;
    var station = st.station;
    var was = margin[x] > 0 || station[x] === 1;
    var is = mg > 0 || sn === 1;
    st.cost += mg - margin[x];
    margin[x] = mg;
    station[x] = sn;
    if (is !== was) {
      if (!st.copied) {
        st.hot = W._copyOf(st.hot);
        st.copied = true;
      }
      toggleHot(st.hot, x, is);
    }
  }

  // openAmong: some child is an open needed node or has one below (finish's openBelow).
  function openAmong(kids, inSet, rk, openBelow) {
    for (var i = 0; i < kids.length; i++) {
      var c = kids[i].index;
      if ((inSet[c] === 1 && rk[c] < 4) || openBelow[c] === 1) return 1;
    }
    return 0;
  }

  // toggleHot inserts node x into hot (descending node indices) or removes it.
  function toggleHot(hot, x, on) {
    var lo = 0;
    var hi = hot.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (hot[mid] > x) lo = mid + 1;
      else hi = mid;
    }
    if (on) hot.splice(lo, 0, x);
    else hot.splice(lo, 1);
  }

  // cheapPath(model) → {exact, inSet (Uint8Array by node index), cost, station (Uint8Array),
  // choice, margin, hot, P}.
  W._cheapPath = function (m) {
    return finish(m, exactSearch(m));
  };
  // _cheapPathAfterEdit(prevPath, model, index): the cheap path of a status edit of node
  // index whose model modelBoxEdit made from prevPath's, from prevPath, or null (see
  // pathAfterEdit). _boxEditPath(on) switches it on or off (tests; on by default).
  W._cheapPathAfterEdit = pathAfterEdit;
  W._boxEditPath = function (on) {
    afterEditOff = !on;
  };
  W._naivePath = function (m) {
    return finish(m, naive(m));
  };
})(Werkbaum);

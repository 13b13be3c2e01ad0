// The model of a parsed plan (NOTATION.md §8–§19): the editor's view (discarded roots
// dropped), effective status through the dependency closure, assumed sizes and own costs,
// taiga slugs, ticket references, the initially collapsed set and the renderer's mixedGate
// warnings.
//
// Werkbaum._model(doc, opts) → model; all per-node values are arrays indexed by node.index
// (doc.all order). opts.showDiscarded keeps discarded roots (editor option, default off).
//
// Cost model (goja): every property read, array access or call is an interpreted operation
// of 0.1–0.3 µs (an index or number of 256 and more is also a small allocation), and every
// object or array an allocation. So the model is ONE pass over doc.all (pre-order: a parent
// before its children) that writes per-node columns, with no per-node objects or lists: view,
// progress rank, taiga, ticket, fold marks, the renderer's mixedGate walk, dependencies, the
// assumed size and own cost of nodes with a stated size, and the path children of every node
// as linked columns (first[i], next[c], in document order). What needs the children first
// works on short lists afterwards: the assumed size of unsized nodes (reverse pre-order),
// §20.2 touches (marked upwards from the nodes that touch by themselves) and the local choice
// and coupling of the choice groups. 30_path.js and 35_loads.js read these columns.
(function (W) {
  'use strict';

  var T = W._text;
  var SIZE_RANK = T.SIZE_RANK;
  var TICKET_ID_RE = /^(?:US|T)-\d+$/;
  var TICKET_LABEL_RE = /[ ]#((?:US|T)-\d+)[ ]/;
  var NONE = Object.freeze([]);

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

  // Ticket refs (§12–16): an id of the form US-n / T-n, else the first free-standing
  // #US-n / #T-n inside the label. The forward pass tests the id (only ids that start with
  // T or U: a string comparison is far cheaper than a regexp in goja) and calls
  // ticketInLabel for labels that contain '#'.
  function ticketInLabel(label) {
    var m = TICKET_LABEL_RE.exec(' ' + label + ' ');
    return m ? m[1] : null;
  }

  function ownTaiga(marks) {
    for (var i = 0; i < marks.length; i++) {
      var k = marks[i];
      if (k.length > 6 && k.slice(0, 6) === 'taiga.') return k.slice(6);
    }
    return null;
  }

  // NO_COUNTING is the assumed size rank of a node without counting children: M (§11).
  var NO_COUNTING = 2;

  // assumedUnsized computes §11 steps 2–6 for a node without a stated size from its path
  // children (first/next): the counting children (not optional, not discarded) are exactly
  // the path children that are not optional.
  function assumedUnsized(all, rk, A, next, fk) {
    var c = fk;
    while (c >= 0 && all[c].optional) c = next[c];
    if (c < 0) return NO_COUNTING;
    var r, a;
    if (all[c].type !== 'and') {
      // Disjunctive: pool = realized counting children, else all; a done pool member ⇒ XS.
      var cntR = 0;
      var doneR = false;
      var minR = 5;
      var doneAll = false;
      var minAll = 5;
      for (; c >= 0; c = next[c]) {
        if (all[c].optional) continue;
        r = rk[c];
        a = A[c];
        if (r >= 2) {
          cntR++;
          if (r >= 4) doneR = true;
          if (a < minR) minR = a;
        }
        if (r >= 4) doneAll = true;
        if (a < minAll) minAll = a;
      }
      if (cntR) return doneR ? 0 : minR;
      return doneAll ? 0 : minAll;
    }
    // Conjunctive: the largest rank among the open counting children, +1 if three share it.
    var max = -1;
    var k = 0;
    for (; c >= 0; c = next[c]) {
      if (rk[c] >= 4 || all[c].optional) continue;
      a = A[c];
      if (a > max) {
        max = a;
        k = 1;
      } else if (a === max) k++;
    }
    if (max < 0) return 0; // everything named is done ⇒ XS
    r = max + (k >= 3 ? 1 : 0);
    return r > 5 ? 5 : r;
  }

  // effectiveRanks computes §19 over the nodes in view: eff(n) = the minimum progress rank
  // over everything n reaches through resolvable dependencies (itself included). Solved
  // bottom-up by rank (a bottleneck search over reversed edges), linear in nodes + deps.
  // targets lists the nodes others depend on (any, discarded included), depOn[dependents[t]]
  // the nodes in view that depend on t; the result does not depend on the order of targets.
  function effectiveRanks(eff, targets, dependents, depOn) {
    var buckets = [[], [], [], [], [], []];
    var j;
    // Only targets propagate: they start in the bucket of their rank, and a lowered node
    // joins the bucket of its new rank when others depend on it.
    for (j = 0; j < targets.length; j++) buckets[eff[targets[j]]].push(targets[j]);
    for (var r = 0; r < 6; r++) {
      var b = buckets[r];
      for (var q = 0; q < b.length; q++) {
        var x = b[q];
        if (eff[x] !== r) continue;
        var ds = depOn[dependents[x]];
        for (j = 0; j < ds.length; j++) {
          var d = ds[j];
          if (eff[d] > r) {
            eff[d] = r;
            if (dependents[d] !== 0) b.push(d);
          }
        }
      }
    }
  }

  // touches computes §20.2 for the nodes in view: a node touches if it has dependencies,
  // if some dependency names its id, or if a descendant touches. The nodes named by an id
  // are byId's node (the first in view) and the later nodes with the same id, which the
  // parser reports as duplicateId warnings (their line is the node's first line; all is
  // sorted by line), so no node's id has to be looked up. Each such node marks itself and
  // its ancestors up to the first one already marked (2 = marked with all its ancestors).
  // A marked duplicate outside the view only marks ancestors outside the view, and touches
  // are only read for options of groups in view.
  function touches(doc, byId, depNodes, referenced, refIds) {
    var all = doc.all;
    var touch = new Uint8Array(all.length);
    var i;
    for (i = 0; i < depNodes.length; i++) up(all, touch, depNodes[i]);
    for (i = 0; i < refIds.length; i++) {
      var t = byId[refIds[i]];
      if (t !== undefined) up(all, touch, t.index);
    }
    var ws = doc.warnings;
    for (i = 0; i < ws.length; i++) {
      var w = ws[i];
      if (w.type !== 'duplicateId' || referenced[w.id] !== true) continue;
      var dup = W._nodeAtLine(doc, w.line);
      if (dup !== null) up(all, touch, dup.index);
    }
    return touch;
  }

  function up(all, touch, x) {
    for (; x >= 0 && touch[x] !== 2; x = all[x].parent) touch[x] = 2;
  }

  function byParent(a, b) {
    return a.parent - b.parent;
  }

  // rescue implements the rescue part of §17 for the targets — '<' nodes and focused nodes
  // (in view) in ONE list in document order, interleaved as they come, as the reference
  // does: every ancestor on the root-to-target path that is collapsed at that moment is
  // opened and its other children that have children are collapsed instead; the target
  // itself is opened.
  function rescue(all, set, targets) {
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
  }

  // minusOnes returns an Int32Array of n entries -1. A native call on a typed array costs
  // about as much as filling a few dozen entries in script.
  function minusOnes(n) {
    var a = new Int32Array(n);
    if (n > 48) a.fill(-1);
    else for (var i = 0; i < n; i++) a[i] = -1;
    return a;
  }

  function byIndex(a, b) {
    return a - b;
  }

  // The model runs in phases over the columns: the forward pass (one walk in pre-order,
  // see the cost model above), then on the short lists it collected: the assumed size of
  // unsized nodes (§11), dependencies and effective status (§19, §20.2), the choice groups
  // (§20.3), the initial folding's rescues (§17) and the renderer's mixedGate warnings.
  function model(doc, opts) {
    var m = newModel(doc, !!(opts && opts.showDiscarded));
    var w = forwardPass(doc, m);
    m.pass = w;
    if (w.unsized !== null) assumeUnsized(m, w.unsized);
    if (w.depNodes !== null) dependencies(doc, m, w.depNodes);
    if (w.groupsAt !== null) choiceGroups(m, w.groupsAt, m.touch);
    if (w.rescues !== null) rescue(m.all, m.collapsed, w.rescues);
    if (w.mixedAt !== null) m.mixed = mixedWarnings(m, w.mixedAt);
    return m;
  }

  // modelBoxEdit is model(doc, {}) for a document that parseBoxEdit (10_parse.js) made from
  // prev.doc by a status edit of node `index`, computed from prev, the model of the text
  // before the edit (default view), or null when the edit changes what it cannot follow: a
  // root discarded before or after (the view changes), or a node others depend on (its
  // dependents' lists hold only targets not discarded). Then the forward pass reads the same
  // from every node but that one's rank, whether it is a path child (§20: not discarded, not
  // optional unless started) and whether it hides its subtree from the mixedGate walk
  // (discarded), and what follows from those is recomputed:
  // - its parent's path children, local choice and membership of the choice groups, when
  //   the node starts or stops being a path child;
  // - the node's own cost, and §11 for every unsized node on its path to the root (each
  //   reads only its path children, and of those only the one on that path changed);
  // - the effective ranks (§19) of the node and the nodes that reach it through
  //   dependencies (no other node reaches it);
  // - the choice groups (§20.3: local choice and coupling read ranks and own costs) of the
  //   node's ancestors (no other group has a member whose rank or own cost changed);
  // - the mixedGate groups of its parent and its subtree, when it is discarded or no longer
  //   is, and the mixedGate warnings (new records: the final warning list gives them texts).
  // The rest (view, byId, taiga, tickets, fold state, path children, dependency lists, the
  // loads' owners) is shared with prev: models are read-only once made (the owners column
  // is filled as asked, with values a status edit does not change). js/test/fastpath.test.js,
  // js/test/edit_chain.js and boxedit_test.go prove the result equal to model(doc, {}).
  function modelBoxEdit(prev, doc, index) {
    var o = prev.all[index];
    var n = doc.all[index];
    if (prev.showDiscarded || prev.pass === null || doc.all.length !== prev.N || !o || !n) return null;
    var linked = isPathChild(o) !== isPathChild(n);
    var hiding = isDiscarded(o) !== isDiscarded(n);
    if (hiding && (n.parent < 0 || (prev.dependents !== null && prev.dependents[index] !== 0))) return null;
    var all = doc.all;
    var pass = prev.pass;
    var m = Object.assign({}, prev);
    var rk = prev.rank.slice();
    rk[index] = rankOf(n);
    m.doc = doc;
    m.all = all;
    m.roots = [];
    for (var i = 0; i < prev.roots.length; i++) m.roots.push(all[prev.roots[i].index]);
    m.byId = prev.discardedRootsDropped === 0 ? doc.byId : byIdAfterEdit(prev, all, index);
    m.rank = rk;
    m.eff = prev.discardedRootsDropped === 0 ? rk : viewRanks(rk, m.inView);
    m.pick = prev.pick.slice();
    if (linked && n.parent >= 0) {
      var groupsAt = relink(m, all, n.parent, pass.groupsAt);
      if (hiding) pass = new Pass(pass.unsized, pass.depNodes, pass.rescues, groupsAt, mixedAfterHiding(all, index, pass.mixedAt));
      else pass = new Pass(pass.unsized, pass.depNodes, pass.rescues, groupsAt, pass.mixedAt);
    } else if (hiding) {
      pass = new Pass(pass.unsized, pass.depNodes, pass.rescues, pass.groupsAt, mixedAfterHiding(all, index, pass.mixedAt));
    }
    m.pass = pass;
    var A = (m.assumed = prev.assumed.slice());
    var O = (m.ownCost = prev.ownCost.slice());
    for (var x = index; x >= 0; x = all[x].parent) {
      if (all[x].size === null) A[x] = assumedUnsized(all, rk, A, m.next, m.first[x]);
      O[x] = ownCost(rk[x], A[x]);
    }
    if (pass.depNodes !== null) m.eff = effAfterEdit(prev, m, index);
    if (pass.groupsAt !== null) groupsAfterEdit(m, prev, index, pass.groupsAt);
    else {
      m.coupled = NONE;
      m.coupledOf = null;
    }
    m.mixed = pass.mixedAt !== null ? mixedWarnings(m, pass.mixedAt) : NONE;
    return m;
  }

  // effAfterEdit is the effective ranks (§19) after an edit of node x: only x and the nodes
  // that reach x through dependencies (its dependents, theirs, …: `reach`) reach a node
  // whose rank changed, so every other node keeps its effective rank. Those of `reach`
  // start from their ranks lowered by their targets outside `reach` (final already), and
  // effectiveRanks' bottleneck search runs among them.
  function effAfterEdit(prev, m, x) {
    var eff = prev.eff.slice();
    if (m.inView[x] !== true) return eff;
    var dependents = prev.dependents;
    var depOn = prev.depOn;
    var all = m.all;
    var rk = m.rank;
    var inReach = new Uint8Array(m.N);
    var reach = [x];
    inReach[x] = 1;
    for (var q = 0; q < reach.length; q++) {
      var ds = depOn[dependents[reach[q]]];
      for (var j = 0; j < ds.length; j++) {
        if (inReach[ds[j]] === 0) {
          inReach[ds[j]] = 1;
          reach.push(ds[j]);
        }
      }
    }
    var byId = m.byId;
    for (q = 0; q < reach.length; q++) {
      var y = reach[q];
      var e = rk[y];
      var deps = all[y].deps;
      for (j = 0; j < deps.length; j++) {
        var t = byId[deps[j]];
        if (t !== undefined && inReach[t.index] === 0 && eff[t.index] < e) e = eff[t.index];
      }
      eff[y] = e;
    }
    var buckets = [[], [], [], [], [], []];
    for (q = 0; q < reach.length; q++) buckets[eff[reach[q]]].push(reach[q]);
    for (var r = 0; r < 6; r++) {
      var b = buckets[r];
      for (q = 0; q < b.length; q++) {
        if (eff[b[q]] !== r) continue;
        ds = depOn[dependents[b[q]]];
        for (j = 0; j < ds.length; j++) {
          var d = ds[j];
          if (eff[d] > r) {
            eff[d] = r;
            b.push(d);
          }
        }
      }
    }
    return eff;
  }

  // groupsAfterEdit settles the choice groups (choiceGroups) after an edit of node x: only
  // a group whose parent is x or an ancestor of x has a member whose rank, own cost or path
  // children changed, so the other groups and their local choices are the old ones. When
  // the coupled groups are then the old parents, the old list is kept with the chain's
  // groups replaced (their ci stays); otherwise choiceGroups settles every group.
  function groupsAfterEdit(m, prev, x, groupsAt) {
    var all = m.all;
    var first = m.first;
    var next = m.next;
    var allIn = m.discardedRootsDropped === 0;
    var coupled = prev.coupled;
    var coupledOf = prev.coupledOf;
    var replaced = false;
    for (var a = x; a >= 0; a = all[a].parent) {
      var fk = first[a];
      var isGroup = fk >= 0 && all[fk].type !== 'and' && next[fk] >= 0 && (allIn || m.inView[a]);
      var old = coupledOf === null ? undefined : coupledOf[a];
      var g = isGroup ? settleGroup(m, a, m.touch) : null;
      if ((g === null) !== (old === undefined)) {
        choiceGroups(m, groupsAt, m.touch);
        return;
      }
      if (g === null) continue;
      g.ci = old.ci;
      if (!replaced) {
        coupled = W._copyOf(coupled);
        coupledOf = Object.assign(Object.create(null), coupledOf);
        replaced = true;
      }
      coupled[g.ci] = g;
      coupledOf[a] = g;
    }
    m.coupled = coupled;
    m.coupledOf = coupledOf;
  }

  // relink gives parent p of the edited node its path children anew (the forward pass's
  // first/next, in document order, and the local choice it sets: the first path child when
  // that is disjunctive), in copies of the columns, and returns the choice-group parents
  // (the forward pass's groupsAt: the first path child disjunctive and a second one) with p
  // in or out. Their order does not matter: choiceGroups sorts the coupled groups by parent.
  function relink(m, all, p, groupsAt) {
    var first = (m.first = m.first.slice());
    var next = (m.next = m.next.slice());
    var kids = all[p].children;
    var last = -1;
    first[p] = -1;
    for (var i = 0; i < kids.length; i++) {
      var c = kids[i];
      next[c.index] = -1;
      if (!isPathChild(c)) continue;
      if (last < 0) first[p] = c.index;
      else next[last] = c.index;
      last = c.index;
    }
    var fk = first[p];
    m.pick[p] = fk >= 0 && all[fk].type !== 'and' ? fk + 1 : 0;
    var out = [];
    if (groupsAt !== null) for (i = 0; i < groupsAt.length; i++) if (groupsAt[i] !== p) out.push(groupsAt[i]);
    if (m.pick[p] > 0 && next[fk] >= 0) out.push(p);
    return out.length ? out : null;
  }

  // mixedAfterHiding is the forward pass's mixedAt (parents whose visible children mix
  // gates) after node x was discarded or no longer is: x hides its subtree from the walk,
  // so the groups of its parent and of its subtree are looked at again (none when an
  // ancestor hides them anyway). mixedWarnings sorts the list.
  function mixedAfterHiding(all, x, mixedAt) {
    var p = all[x].parent;
    for (var a = p; a >= 0; a = all[a].parent) if (isDiscarded(all[a])) return mixedAt;
    var end = x;
    while (all[end].children.length) end = all[end].children[all[end].children.length - 1].index;
    var out = [];
    if (mixedAt !== null) for (var i = 0; i < mixedAt.length; i++) if (mixedAt[i] !== p && (mixedAt[i] < x || mixedAt[i] > end)) out.push(mixedAt[i]);
    if (gatesMixed(all[p].children)) out.push(p);
    var hide = -1;
    for (i = x; i <= end; i++) {
      var n = all[i];
      if (hide >= 0) {
        if (n.depth > hide) continue;
        hide = -1;
      }
      if (isDiscarded(n)) hide = n.depth;
      else if (n.children.length > 1 && gatesMixed(n.children)) out.push(i);
    }
    return out.length ? out : null;
  }

  // gatesMixed: the children not discarded have more than one gate.
  function gatesMixed(kids) {
    var g = null;
    for (var i = 0; i < kids.length; i++) {
      if (isDiscarded(kids[i])) continue;
      var t = kids[i].type;
      if (g === null) g = t;
      else if (t !== g) return true;
    }
    return false;
  }

  // byIdAfterEdit is the model's byId (first node per id among the nodes in view) with the
  // nodes parseBoxEdit copied (the edited node and its ancestors) in place of the old ones.
  function byIdAfterEdit(prev, all, index) {
    var byId = prev.byId;
    var out = null;
    for (var x = index; x >= 0; x = all[x].parent) {
      var id = all[x].id;
      if (id === null || byId[id] !== prev.all[x]) continue;
      if (out === null) out = Object.assign(Object.create(null), byId);
      out[id] = all[x];
    }
    return out === null ? byId : out;
  }

  // isPathChild is the §20 rule for a node under a parent: not discarded, and not optional
  // unless started. The forward pass inlines it (one call per node costs a few ms in goja).
  function isPathChild(n) {
    var r = rankOf(n);
    return !isDiscarded(n) && (r === 2 || r === 3 || !n.optional);
  }

  // ownCost is §11's own cost of a node of progress rank r and assumed size rank a: a done
  // node costs nothing more.
  function ownCost(r, a) {
    return r >= 4 ? 0 : a + 1;
  }

  // viewRanks is the effective rank's starting point when nodes are out of view: they have
  // none (-1).
  function viewRanks(rk, inView) {
    var eff = new Int32Array(rk.length);
    for (var i = 0; i < rk.length; i++) eff[i] = inView[i] ? rk[i] : -1;
    return eff;
  }

  // newModel returns the model with its roots in view and every column allocated.
  function newModel(doc, show) {
    var all = doc.all;
    var N = all.length;
    var roots = [];
    var rootIdx = [];
    var dropped = 0;
    for (var i = 0; i < doc.roots.length; i++) {
      var n = doc.roots[i];
      if (!show && n.status !== null && n.status.code === '-') dropped++;
      else {
        roots.push(n);
        rootIdx.push(n.index);
      }
    }
    var rk = new Int32Array(N); // progress rank (§9; neutral and discarded 0)
    return {
      doc: doc,
      all: all,
      roots: roots,
      showDiscarded: show,
      discardedRootsDropped: dropped,
      inView: new Array(N),
      // With no dropped root every node is in view and doc.byId (first node per id) is the
      // model's byId; otherwise byId holds the first node per id among the nodes in view.
      byId: dropped === 0 ? doc.byId : Object.create(null),
      assumed: new Int32Array(N), // assumed size rank (§11)
      ownCost: new Int32Array(N), // own cost (§11)
      eff: rk, // effective rank (§19): rk itself while nothing lowers it
      taiga: new Array(N),
      ticket: new Array(N),
      collapsed: new Uint8Array(N),
      // Columns for 30_path.js, 35_loads.js and 40_warnings.js.
      N: N,
      rootIdx: rootIdx,
      rank: rk,
      first: minusOnes(N), // first path child (§20), -1 if none
      next: minusOnes(N), // next path child of the same parent, -1 at the end
      pick: new Int32Array(N), // disjunctive nodes: local choice + 1 (§20.3); else 0
      depT: null, // depT[i] > 0: depLists[depT[i]] = resolvable, not discarded targets of i
      depLists: null,
      coupled: NONE,
      coupledOf: null, // parent index → coupled group
      mixed: NONE,
      // What modelBoxEdit reuses: the forward pass's lists and the dependency graph.
      pass: null,
      targets: NONE, // nodes others depend on
      dependents: null, // dependents[t] > 0: depOn[dependents[t]] = the nodes in view that depend on t
      depOn: null,
      touch: null, // §20.2 touches (null: the document has no dependencies)
      owners: null // 35_loads.js: the owners of the nodes the loads asked for (shared by modelBoxEdit)
    };
  }

  // Pass is what the forward pass collected for the later phases (each null when empty).
  function Pass(unsized, depNodes, rescues, groupsAt, mixedAt) {
    this.unsized = unsized; // nodes without a stated size
    this.depNodes = depNodes; // nodes in view with dependencies
    this.rescues = rescues; // '<' targets and focused nodes, in document order (§17)
    this.groupsAt = groupsAt; // parents with two or more path children, the first disjunctive
    this.mixedAt = mixedAt; // parents whose visible children mix gates
  }

  // forwardPass is the one walk over the nodes in pre-order (a parent before its children):
  // view, rank, taiga, ticket, the stated sizes, the path children, fold marks and the
  // renderer's mixedGate walk.
  function forwardPass(doc, m) {
    var all = m.all;
    var N = m.N;
    var show = m.showDiscarded;
    var allIn = m.discardedRootsDropped === 0;
    var byId = m.byId;
    var inView = m.inView;
    var rk = m.rank;
    var taiga = m.taiga;
    var ticket = m.ticket;
    var collapsed = m.collapsed;
    var A = m.assumed;
    var O = m.ownCost;
    var first = m.first;
    var next = m.next;
    var pick = m.pick;
    var last = minusOnes(N); // last path child so far
    // mixedGate: visGate[p] = gate code of p's first visible child; 0 = none yet, -1 =
    // already reported.
    var visGate = new Int8Array(N);
    var mixedAt = null;
    // The two long lists are filled by index, with their lengths in locals: a push is a
    // native call, and a length a property read, in goja.
    var depNodes = [];
    var nDepNodes = 0;
    var rescues = null;
    var unsized = [];
    var nUnsized = 0;
    var groupsAt = null;
    var hideDepth = -1; // depth of the hidden (discarded, not shown) subtree being walked
    var inV = true;
    // Columns most nodes leave at one value are filled natively first and written below
    // only where a node differs: in goja a write into a new array's hole costs a few
    // operations (it looks for a setter up the prototype chain), a native fill none.
    if (allIn) inView.fill(true);
    ticket.fill(null);
    for (var i = 0; i < N; i++) {
      var n = all[i];
      var p = n.parent;
      var st = n.status;
      var r = 0;
      var disc = false;
      if (st !== null) {
        r = st.rank;
        disc = r === 0 && st.code === '-';
      }
      rk[i] = r;
      if (!allIn) {
        inV = p < 0 ? !disc : inView[p];
        if (inV && n.id !== null && byId[n.id] === undefined) byId[n.id] = n;
        inView[i] = inV;
      }
      var marks = n.marks;
      var own = marks.length ? ownTaiga(marks) : null;
      taiga[i] = own !== null ? own : p >= 0 ? taiga[p] : null;
      // ticketRefOf, inlined: only ids starting with T or U can be refs.
      var id = n.id;
      if (id !== null && id >= 'T' && id < 'V' && TICKET_ID_RE.test(id)) ticket[i] = id;
      else if (!n._plainLabel) {
        var label = n.label;
        if (label.indexOf('#') >= 0) ticket[i] = ticketInLabel(label);
      }
      // §11 for a stated size; the others after the pass.
      var size = n.size;
      if (size !== null) {
        var a = SIZE_RANK[size];
        A[i] = a;
        O[i] = ownCost(r, a);
      } else unsized[nUnsized++] = i;
      // §20 path children (isPathChild: not discarded, not optional unless started), appended in
      // document order; a parent whose first path child is disjunctive gets that child as
      // its pick, and becomes a choice group with its second path child.
      if (p >= 0 && !disc && (r === 2 || r === 3 || !n.optional)) {
        var lk = last[p];
        if (lk < 0) {
          first[p] = i;
          if (n.type !== 'and') pick[p] = i + 1;
        } else {
          next[lk] = i;
          if (pick[p] === lk + 1 && first[p] === lk) (groupsAt || (groupsAt = [])).push(p);
        }
        last[p] = i;
      }
      if (!inV) continue;
      if (n.deps.length) depNodes[nDepNodes++] = i;
      var fold = n.fold;
      if (fold === '>') collapsed[i] = 1;
      // A node with both '<' and a focus mark is one target: a second pass over the same
      // path right after the first changes nothing.
      if (fold === '<' || n.focus) (rescues || (rescues = [])).push(i);
      // mixedGate: the rendered tree hides discarded children (and their subtrees) unless
      // discarded nodes are shown; roots are never compared with each other.
      if (hideDepth >= 0) {
        if (n.depth > hideDepth) continue;
        hideDepth = -1;
      }
      if (p < 0) continue;
      if (disc && !show) {
        hideDepth = n.depth;
        continue;
      }
      var type = n.type;
      var gc = type === 'and' ? 1 : type === 'or' ? 2 : 3;
      var vg = visGate[p];
      if (vg === 0) visGate[p] = gc;
      else if (vg > 0 && vg !== gc) {
        (mixedAt || (mixedAt = [])).push(p);
        visGate[p] = -1; // reported once
      }
    }
    if (!allIn) m.eff = viewRanks(rk, inView);
    return new Pass(nUnsized ? unsized : null, nDepNodes ? depNodes : null, rescues, groupsAt, mixedAt);
  }

  // assumeUnsized applies §11 to the nodes without a stated size, children before parents:
  // their children come later in pre-order, so the reverse of the list will do.
  function assumeUnsized(m, unsized) {
    var all = m.all;
    var rk = m.rank;
    var A = m.assumed;
    var O = m.ownCost;
    var next = m.next;
    var first = m.first;
    for (var j = unsized.length - 1; j >= 0; j--) {
      var i = unsized[j];
      var fk = first[i];
      // A node without path children (most unsized nodes are leaves) has no counting
      // children: no call, which costs more than the rest of the loop in goja.
      var au = fk < 0 ? NO_COUNTING : assumedUnsized(all, rk, A, next, fk);
      A[i] = au;
      O[i] = ownCost(rk[i], au);
    }
  }

  // dependencies resolves the dependencies of the nodes in view against byId (complete
  // only now: forward references), lowers the effective ranks (§19) and keeps the
  // dependency graph and the §20.2 touches in the model.
  function dependencies(doc, m, depNodes) {
    var all = m.all;
    var N = m.N;
    var byId = m.byId;
    var referenced = Object.create(null);
    var refIds = []; // the keys of referenced (for-in is slow in goja)
    var depT = new Int32Array(N);
    var depLists = [NONE];
    var targets = [];
    // dependents[t] > 0: depOn[dependents[t]] = the nodes in view that depend on t.
    var dependents = new Int32Array(N);
    var depOn = [NONE];
    if (m.eff === m.rank) m.eff = m.rank.slice();
    for (var q = 0; q < depNodes.length; q++) {
      var i = depNodes[q];
      var deps = all[i].deps;
      var t = [];
      for (var j = 0; j < deps.length; j++) {
        if (referenced[deps[j]] !== true) {
          referenced[deps[j]] = true;
          refIds.push(deps[j]);
        }
        var target = byId[deps[j]];
        if (target === undefined) continue;
        var ti = target.index;
        var ds = dependents[ti];
        if (ds === 0) {
          dependents[ti] = depOn.length;
          depOn.push([i]);
          targets.push(ti);
        } else depOn[ds].push(i);
        if (!isDiscarded(target)) t.push(ti);
      }
      if (t.length) {
        depT[i] = depLists.length;
        depLists.push(t);
      }
    }
    m.depT = depT;
    m.depLists = depLists;
    m.targets = targets;
    m.dependents = dependents;
    m.depOn = depOn;
    effectiveRanks(m.eff, targets, dependents, depOn);
    m.touch = touches(doc, byId, depNodes, referenced, refIds);
  }

  // choiceGroups settles the choice groups (§20.3): local choice = cheapest of the pool
  // (realized path children if any, else all), ties to the earliest; coupled if the
  // document has dependencies (touch is not null), the pool has more than one member and
  // one of them touches.
  function choiceGroups(m, groupsAt, touch) {
    var allIn = m.discardedRootsDropped === 0;
    var inView = m.inView;
    var coupled = null;
    var coupledOf = null;
    for (var j = 0; j < groupsAt.length; j++) {
      var i = groupsAt[j];
      if (!allIn && !inView[i]) continue;
      var g = settleGroup(m, i, touch);
      if (g === null) continue;
      (coupled || (coupled = [])).push(g);
      (coupledOf || (coupledOf = Object.create(null)))[i] = g;
    }
    m.coupled = NONE;
    m.coupledOf = null;
    if (coupled === null) return;
    // groupsAt is in the order of the second children: back to pre-order of the parents.
    if (coupled.length > 1) coupled.sort(byParent);
    for (j = 0; j < coupled.length; j++) coupled[j].ci = j;
    m.coupled = coupled;
    m.coupledOf = coupledOf;
  }

  // settleGroup sets the local choice of the group under parent i (m.pick) and returns the
  // group when it is coupled (its ci still to be set), else null.
  function settleGroup(m, i, touch) {
    var O = m.ownCost;
    var rk = m.rank;
    var next = m.next;
    var pick = m.pick;
    var anyDep = touch !== null;
    var fk = m.first[i];
    var lAll = fk;
    var oAll = O[fk];
    var lR = -1;
    var oR = 0;
    var nAll = 0;
    var nR = 0;
    var tAll = false;
    var tR = false;
    for (var c = fk; c >= 0; c = next[c]) {
      var oc = O[c];
      nAll++;
      if (oc < oAll) {
        lAll = c;
        oAll = oc;
      }
      var tc = anyDep && touch[c] !== 0;
      if (tc) tAll = true;
      if (rk[c] >= 2) {
        nR++;
        if (lR < 0 || oc < oR) {
          lR = c;
          oR = oc;
        }
        if (tc) tR = true;
      }
    }
    pick[i] = (nR ? lR : lAll) + 1;
    if (!(anyDep && (nR ? nR : nAll) > 1 && (nR ? tR : tAll))) return null;
    var pool = [];
    for (c = fk; c >= 0; c = next[c]) if (!nR || rk[c] >= 2) pool.push(c);
    return { parent: i, pool: pool, local: pick[i] - 1, coupled: true, ci: -1 };
  }

  // mixedWarnings returns the renderer's mixedGate warnings (§23), in pre-order of the
  // parents.
  function mixedWarnings(m, mixedAt) {
    var all = m.all;
    var mixed = [];
    if (mixedAt.length > 1) mixedAt.sort(byIndex);
    for (var i = 0; i < mixedAt.length; i++) {
      var n = all[mixedAt[i]];
      mixed.push({ type: 'mixedGate', line: all[firstVisOf(all, mixedAt[i], m.showDiscarded)].line, label: n.label });
    }
    return mixed;
  }

  // firstVisOf returns the first visible child of a parent whose group mixes gates (rare:
  // one lookup per warning instead of a column written for every parent).
  function firstVisOf(all, p, show) {
    var ch = all[p].children;
    for (var i = 0; i < ch.length; i++) if (show || !isDiscarded(ch[i])) return ch[i].index;
    return -1;
  }

  W._model = model;
  W._modelBoxEdit = modelBoxEdit;
  W._status = {
    isDiscarded: isDiscarded,
    isDone: isDone,
    isRealized: isRealized,
    isStarted: isStarted,
    isDisjunctive: isDisjunctive,
    rankOf: rankOf
  };
})(Werkbaum);

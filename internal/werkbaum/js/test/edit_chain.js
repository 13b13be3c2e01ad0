'use strict';
// editChainSame(X, text, seed, edits) walks a chain of random status edits of text, each on
// the text the last one made, the way the write path does (the old text analysed, the verb,
// the analysis of the new text), and holds every analysis made from the old one to the
// plain one:
// * the path of each edit (50_analyze.js: W._cheapPathAfterEdit when it can) to the full
//   search and finish on the same model, column by column, and the loads made from it;
// * the model of each edit made from the old one (20_model.js modelBoxEdit) to the full
//   model in the columns the path reads and the forward pass's lists the next edit starts
//   from (equiv_view.js compares the rest);
// * the ids of each edited document (byId, layered over the old map: 10_parse.js byIdWith)
//   to the full parse's, each naming the edited document's own node;
// * every seventh edit, the whole analysis (analyze's JSON) to the one made with the
//   model's and the path's status-edit shortcuts off and the memo emptied (the plain path
//   of every part); the chain goes on from that plain analysis, so the chains between are
//   long enough for byIdWith to flatten its layers.
// It answers {fast, full, analyses, models, relinked, hidden, differ}: fast counts the edits
// whose path was taken from the old one (the old needed set is shared), models those whose
// model was (the old view is shared), relinked and hidden those of them whose node started
// or stopped being a path child or being discarded; differ lists what differed. Plain ES5: the
// Node test (write_path.test.js) and the goja test (boxedit_test.go) run this very file.
function editChainSame(X, text, seed, edits) {
  var statuses = ['done', 'progress', 'planned', 'idea', 'highrisk', 'blocked', 'review', 'prod', 'discarded', null];
  var s = seed >>> 0;
  function rnd() {
    s = (s * 1103515245 + 12345) >>> 0;
    return s / 4294967296;
  }
  function col(a, n) {
    var out = [];
    for (var i = 0; i < n; i++) out.push(a[i]);
    return JSON.stringify(out);
  }
  function pathOf(p, n) {
    return [p.exact, JSON.stringify(p.choice), col(p.inSet, n), p.cost, col(p.margin, n), col(p.station, n),
      JSON.stringify(p.hot), col(p.openBelow, n)].join('\n');
  }
  function ids(doc) {
    var list = [];
    for (var id in doc.byId) list.push(id + '=' + doc.byId[id].index + (doc.byId[id] === doc.all[doc.byId[id].index] ? '' : ' stale'));
    return list.sort().join(',');
  }
  function sorted(list) {
    return list === null ? 'null' : JSON.stringify(Array.prototype.slice.call(list).sort(function (a, b) { return a - b; }));
  }
  function modelOf(m, n) {
    var groups = [];
    for (var g = 0; g < m.coupled.length; g++) {
      var grp = m.coupled[g];
      groups.push(grp.parent + ':' + grp.pool.join('/') + ':' + grp.local + ':' + grp.ci + (m.coupledOf[grp.parent] === grp ? '' : ' not in coupledOf'));
    }
    return [col(m.first, n), col(m.next, n), col(m.pick, n), col(m.rank, n), col(m.eff, n), sorted(m.pass.groupsAt), sorted(m.pass.mixedAt),
      groups.join(' '), JSON.stringify(Array.prototype.map.call(m.mixed, function (w) { return [w.line, w.label]; }))].join('\n');
  }
  var out = { fast: 0, full: 0, analyses: 0, models: 0, relinked: 0, hidden: 0, differ: [] };
  for (var k = 0; k < edits; k++) {
    var before = X._compute(text, {});
    var N = before.doc.all.length;
    if (!N) break;
    var n = before.doc.all[Math.floor(rnd() * N)];
    var st = statuses[Math.floor(rnd() * statuses.length)];
    var next;
    try {
      next = X.edit.setStatus(text, 'line:' + n.line, st);
    } catch (e) {
      continue;
    }
    if (next === text) continue;
    var r = X._compute(next, {});
    if (r.path.inSet === before.path.inSet) out.fast++;
    else out.full++;
    var what = 'edit ' + k + ': line ' + n.line + ' to ' + st;
    if (r.m.inView === before.m.inView) {
      out.models++;
      if (r.m.first !== before.m.first) out.relinked++;
      if (r.m.pass.mixedAt !== before.m.pass.mixedAt) out.hidden++;
      if (modelOf(r.m, N) !== modelOf(X._model(X._parseFresh(next), {}), N)) out.differ.push(what + ': model');
    }
    var plain = X._cheapPath(r.m);
    if (pathOf(r.path, N) !== pathOf(plain, N)) out.differ.push(what + ': path');
    else if (JSON.stringify(r.loads) !== JSON.stringify(X._loads(r.m, plain))) out.differ.push(what + ': loads');
    if (ids(r.doc) !== ids(X._parseFresh(next))) out.differ.push(what + ': ids');
    if (k % 7 === 6) {
      out.analyses++;
      var got = JSON.stringify(X.analyze(next, {}));
      X._boxEditModel(false);
      X._boxEditPath(false);
      X._clearMemo();
      try {
        if (JSON.stringify(X.analyze(next, {})) !== got) out.differ.push(what + ': analysis');
      } finally {
        X._boxEditModel(true);
        X._boxEditPath(true);
      }
    }
    text = next;
  }
  return out;
}

if (typeof module !== 'undefined') module.exports = editChainSame;

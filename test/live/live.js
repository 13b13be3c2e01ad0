// A small live client of the Werkbaum document protocol (../shared/werkbaum/DOCUMENTS.md),
// for browsers and Node: the test stand-in for the editor's live.js. It keeps a shadow copy
// of the document (the text the server has at the shadow's version) and the local text
// the user sees; local edits go out as PATCH …/content with the diff of computeOps
// against the shadow, (clientId, seq) and the shadow's checksum; a long poll on
// GET …/changes brings other writers' changes. The line rules come from the notation's
// js/58_lines.js (Werkbaum.doc), the same code the server runs.
//
// Rules it follows (DOCUMENTS.md):
// * 200 {version, opsSinceBase}: the server applied our ops after the foreign ones since
//   our base, so the new shadow is applyOps(applyOps(shadow, opsSinceBase), rebase(ops,
//   opsSinceBase)) — exactly the server's text, whatever the order of equal-index inserts.
// * 409 {currentVersion, opsSinceBase}: nothing was applied; the shadow moves to the
//   current version, local changes that overlap the foreign ones are dropped (the other
//   writer was first), the rest is sent again.
// * 422: reload the document once (GET) and carry the local changes over it.
// * Feed: apply ops only when fromVersion equals the shadow version, take content when
//   fromVersion is absent, skip answers whose currentVersion is not newer.
// * A PATCH that fails on the network is sent again with the same (clientId, seq): the
//   server answers a repeat with the answer it gave, so nothing is applied twice.
// All changes of the shadow happen one after another in one lane (a promise chain), so a
// feed answer never interleaves with a PATCH answer: while a PATCH is out, feed answers
// wait, and are then skipped by the fromVersion rule if the PATCH answer covered them.
//
// API: var c = TalkLive.create({doc: Werkbaum.doc, displayName, clientId?, wait?, fetch?,
// subtle?, dom?}); await c.open(url); await c.edit(lineIndex, newLine);
// await c.insert(lineIndex, line); await c.milestone(); await c.restore(version);
// await c.history(); c.text(); c.events(); c.state(); await c.settled(); c.close(). In a page, dom (a document) gets the state written into #live-text,
// #live-version, #live-events and #live-log after every change, for --dump-dom.
(function (root) {
  'use strict';

  function create(opts) {
    opts = opts || {};
    var D = opts.doc || (root.Werkbaum && root.Werkbaum.doc);
    if (!D) throw new Error('TalkLive needs the line rules (Werkbaum.doc from 58_lines.js)');
    var fetchFn = opts.fetch || (typeof fetch === 'function' ? fetch.bind(root) : null);
    if (!fetchFn) throw new Error('TalkLive needs fetch');
    var subtle = opts.subtle || (root.crypto && root.crypto.subtle);
    if (!subtle) throw new Error('TalkLive needs crypto.subtle (a secure context: https or 127.0.0.1)');
    var clientId = opts.clientId || 'live-' + randomId();
    var displayName = opts.displayName || 'Live page';
    var waitSeconds = opts.wait === undefined ? 25 : opts.wait;
    var dom = opts.dom || null;
    var headers = opts.headers || {};

    var docUrl = null;
    var shadow = null; // server text at version
    var version = 0;
    var local = null; // what the user sees
    var seq = 0;
    var lane = Promise.resolve();
    var events = [];
    var seenEvents = {};
    var log = [];
    var patches = []; // {seq, status, version?, milestone?}
    var restores = []; // {version, status, newVersion?}
    var history = null; // the last GET …/history, trimmed
    var conflicts = 0;
    var closed = false;
    var feedAbort = null;
    var flushing = null;
    var waiters = [];

    // note logs a line; a log line is a change too (waiters may wait for one).
    function note(msg) {
      log.push(msg);
      if (log.length > 200) log.shift();
      changed();
    }

    // inLane runs fn after everything queued before it; its result is the lane's.
    function inLane(fn) {
      var p = lane.then(fn);
      lane = p.catch(function (e) {
        note('error: ' + (e && e.message ? e.message : String(e)));
      });
      return p;
    }

    function changed() {
      render();
      var ws = waiters;
      waiters = [];
      for (var i = 0; i < ws.length; i++) ws[i]();
    }

    // carry brings the local changes made on top of from over to the new shadow next:
    // local ops that overlap what changed from → next are dropped (counted as conflicts),
    // the others are shifted over it.
    function carry(from, next) {
      if (local === from) return next;
      var mine = D.computeOps(from, local);
      var theirs = D.computeOps(from, next);
      var kept = [];
      for (var i = 0; i < mine.length; i++) {
        if (D.conflicts([mine[i]], theirs)) {
          conflicts++;
          note('local change at line ' + mine[i].index + ' dropped: it overlaps a change by another writer');
        } else {
          kept.push(mine[i]);
        }
      }
      var r = D.rebase(kept, theirs);
      return D.applyOps(next, r.ops);
    }

    function request(method, url, body) {
      var h = { Accept: 'application/json' };
      for (var k in headers) if (Object.prototype.hasOwnProperty.call(headers, k)) h[k] = headers[k];
      var init = { method: method, headers: h };
      if (body !== undefined) {
        h['Content-Type'] = 'application/json';
        init.body = JSON.stringify(body);
      }
      return fetchFn(url, init);
    }

    function readJSON(resp) {
      return resp.text().then(function (t) {
        if (!t) return null;
        try {
          return JSON.parse(t);
        } catch (e) {
          throw new Error(resp.status + ' answer is not JSON: ' + t.slice(0, 200));
        }
      });
    }

    function load() {
      return request('GET', docUrl).then(function (resp) {
        return readJSON(resp).then(function (body) {
          if (resp.status !== 200) throw new Error('GET ' + docUrl + ': ' + resp.status + ' ' + problem(body));
          return body;
        });
      });
    }

    function open(url) {
      docUrl = documentURL(url);
      return inLane(function () {
        return load().then(function (d) {
          shadow = D.normalize(d.content);
          local = shadow;
          version = d.version;
          note('opened ' + docUrl + ' at version ' + version);
          changed();
          feed();
        });
      });
    }

    // edit replaces line lineIndex of the local text and sends the change.
    function edit(lineIndex, newLine) {
      var ls = D.lines(local);
      if (lineIndex < 0 || lineIndex >= ls.length) throw new Error('no line ' + lineIndex + ' (' + ls.length + ' lines)');
      ls[lineIndex] = newLine;
      local = ls.join('\n');
      changed();
      return flush();
    }

    // insert puts line before lineIndex (lineIndex = number of lines appends).
    function insert(lineIndex, line) {
      var ls = D.lines(local);
      if (lineIndex < 0 || lineIndex > ls.length) throw new Error('no place ' + lineIndex + ' (' + ls.length + ' lines)');
      ls.splice(lineIndex, 0, line);
      local = ls.join('\n');
      changed();
      return flush();
    }

    // flush sends local changes until the local text equals the shadow (or closed).
    function flush() {
      if (flushing) return flushing;
      flushing = inLane(function loop() {
        if (closed || local === shadow) return null;
        return sendOnce().then(loop);
      }).then(function () {
        flushing = null;
      }, function (e) {
        flushing = null;
        throw e;
      });
      return flushing;
    }

    // sendOnce sends one PATCH of everything local and handles its answer (in the lane).
    function sendOnce() {
      var base = shadow;
      var sent = local;
      var ops = D.computeOps(base, sent);
      var body = {
        baseVersion: version, clientId: clientId, seq: ++seq, displayName: displayName,
        milestone: false, ops: ops
      };
      return checksum(base).then(function (sum) {
        body.checksum = sum;
        return patchWithRetry(body, 0);
      }).then(function (res) {
        var status = res.status;
        var ans = res.body || {};
        patches.push({ seq: body.seq, status: status, version: ans.version || ans.currentVersion || null });
        if (status === 200) {
          var since = ans.opsSinceBase || [];
          var next = D.applyOps(base, ops);
          if (since.length) {
            var r = D.rebase(ops, since);
            if (!r.ok) throw new Error('200 with overlapping opsSinceBase: the server rebased what does not rebase');
            next = D.applyOps(D.applyOps(base, since), r.ops);
          }
          local = carry(sent, next);
          shadow = next;
          version = ans.version;
          note('PATCH seq ' + body.seq + ': version ' + version + (since.length ? ' (rebased over ' + since.length + ' foreign ops)' : ''));
        } else if (status === 409) {
          var theirs = D.applyOps(base, ans.opsSinceBase || []);
          local = carry(base, theirs);
          shadow = theirs;
          version = ans.currentVersion;
          note('PATCH seq ' + body.seq + ': 409, now at version ' + version + '; overlapping local changes dropped');
        } else if (status === 422) {
          note('PATCH seq ' + body.seq + ': 422 ' + problem(ans) + '; reloading');
          return load().then(function (d) {
            var fresh = D.normalize(d.content);
            local = carry(base, fresh);
            shadow = fresh;
            version = d.version;
          });
        } else {
          throw new Error('PATCH seq ' + body.seq + ': ' + status + ' ' + problem(ans));
        }
        return null;
      }).then(changed);
    }

    function patchWithRetry(body, attempt) {
      return request('PATCH', docUrl + '/content', body).then(function (resp) {
        return readJSON(resp).then(function (b) {
          return { status: resp.status, body: b };
        });
      }, function (err) {
        if (closed || attempt >= 4) throw err;
        note('PATCH seq ' + body.seq + ' failed (' + err.message + '); sending it again');
        return delay(50 * (attempt + 1)).then(function () {
          return patchWithRetry(body, attempt + 1);
        });
      });
    }

    // milestone sends what is local, then the camera button's PATCH: no ops, milestone
    // true, against the shadow; the server marks its current version.
    function milestone() {
      return flush().then(function () {
        return inLane(function () {
          var body = { baseVersion: version, clientId: clientId, seq: ++seq, displayName: displayName, milestone: true, ops: [] };
          return checksum(shadow).then(function (sum) {
            body.checksum = sum;
            return patchWithRetry(body, 0);
          }).then(function (res) {
            var ans = res.body || {};
            patches.push({ seq: body.seq, status: res.status, version: ans.version || null, milestone: true });
            if (res.status !== 200) throw new Error('milestone PATCH seq ' + body.seq + ': ' + res.status + ' ' + problem(ans));
            note('milestone: version ' + ans.version + ' marked');
          });
        });
      });
    }

    // restore asks the server to bring version v back (POST …/restore {version, clientId});
    // its answer, the Document at the new version, becomes the shadow, local changes
    // carried over it.
    function restore(v) {
      return flush().then(function () {
        return inLane(function () {
          return request('POST', docUrl + '/restore', { version: v, clientId: clientId }).then(function (resp) {
            return readJSON(resp).then(function (d) {
              restores.push({ version: v, status: resp.status, newVersion: d && d.version });
              if (resp.status !== 200) throw new Error('restore of version ' + v + ': ' + resp.status + ' ' + problem(d));
              var next = D.normalize(d.content);
              local = carry(shadow, next);
              shadow = next;
              version = d.version;
              note('restored version ' + v + ' as version ' + version);
              changed();
            });
          });
        });
      });
    }

    // loadHistory fetches GET …/history into state().history.
    function loadHistory() {
      return request('GET', docUrl + '/history').then(function (resp) {
        return readJSON(resp).then(function (list) {
          if (resp.status !== 200) throw new Error('history: ' + resp.status + ' ' + problem(list));
          history = list.map(function (e) {
            return { version: e.version, changeType: e.changeType, displayName: e.displayName, clientId: e.clientId,
              milestone: e.milestone, markedBy: e.markedBy, restoredFrom: e.restoredFrom, content: e.content };
          });
          note('history: ' + history.length + ' entries');
        });
      });
    }

    // feed long-polls the changes until closed; answers are handled in the lane.
    function feed() {
      if (closed) return;
      var since = version;
      var ctrl = typeof AbortController === 'function' ? new AbortController() : null;
      feedAbort = ctrl;
      var url = docUrl + '/changes?since=' + since + '&wait=' + waitSeconds;
      var init = { method: 'GET', headers: { Accept: 'application/json' } };
      for (var k in headers) if (Object.prototype.hasOwnProperty.call(headers, k)) init.headers[k] = headers[k];
      if (ctrl) init.signal = ctrl.signal;
      fetchFn(url, init).then(function (resp) {
        if (resp.status === 204) return null;
        return readJSON(resp).then(function (body) {
          if (resp.status !== 200) throw new Error('feed: ' + resp.status + ' ' + problem(body));
          return inLane(function () {
            take(body);
          });
        });
      }).then(function () {
        feed();
      }, function (err) {
        if (closed) return;
        note('feed: ' + err.message + '; polling again');
        delay(200).then(feed);
      });
    }

    // take applies one feed answer to the shadow (DOCUMENTS.md ChangeFeed rules). Its
    // events are kept even when its text is skipped: a version that reached the shadow
    // through a PATCH answer's opsSinceBase is news the page has not shown yet.
    function take(f) {
      if (!f) return;
      var evs = f.events || [];
      for (var i = 0; i < evs.length; i++) {
        var key = evs[i].version + '/' + evs[i].changeType;
        if (seenEvents[key]) continue;
        seenEvents[key] = true;
        events.push(evs[i]);
      }
      if (f.currentVersion <= version) {
        note('feed answer for version ' + f.currentVersion + ' skipped: not newer than ' + version);
        return;
      }
      var next;
      if (f.fromVersion !== undefined && f.fromVersion !== null) {
        if (f.fromVersion !== version) {
          note('feed answer from version ' + f.fromVersion + ' skipped: the shadow is at ' + version);
          return;
        }
        next = D.applyOps(shadow, f.ops || []);
      } else if (typeof f.content === 'string') {
        next = D.normalize(f.content);
      } else {
        note('feed answer without ops or content skipped');
        return;
      }
      local = carry(shadow, next);
      shadow = next;
      version = f.currentVersion;
      note('feed: version ' + version);
      if (local !== shadow) flush();
    }

    // settled waits until nothing local is unsent and the lane is idle.
    function settled() {
      return flush().then(function () {
        return lane;
      });
    }

    // until waits (at most ms) for pred() to hold after some change.
    function until(pred, ms) {
      return new Promise(function (resolve, reject) {
        var done = false;
        var timer = setTimeout(function () {
          done = true;
          reject(new Error('timed out after ' + ms + ' ms'));
        }, ms);
        function check() {
          if (done) return;
          if (pred()) {
            done = true;
            clearTimeout(timer);
            resolve();
          } else {
            waiters.push(check);
          }
        }
        check();
      });
    }

    function close() {
      closed = true;
      if (feedAbort) feedAbort.abort();
    }

    function state() {
      return {
        url: docUrl, clientId: clientId, displayName: displayName, version: version,
        text: local, shadow: shadow, pending: local !== shadow, seq: seq,
        patches: patches.slice(), conflicts: conflicts, events: events.slice(), log: log.slice(),
        restores: restores.slice(), history: history
      };
    }

    function render() {
      if (!dom) return;
      set('live-text', local === null ? '' : local);
      set('live-version', String(version));
      set('live-events', events.map(function (e) {
        return 'v' + e.version + ' ' + e.changeType + (e.displayName ? ' changed by ' + e.displayName : '');
      }).join('\n'));
      set('live-log', log.join('\n'));
    }

    function set(id, text) {
      var el = dom.getElementById(id);
      if (el) el.textContent = text;
    }

    function checksum(text) {
      var bytes = typeof TextEncoder === 'function' ? new TextEncoder().encode(text) : null;
      return subtle.digest('SHA-256', bytes).then(function (buf) {
        var a = new Uint8Array(buf);
        var hex = '';
        for (var i = 0; i < a.length; i++) hex += (a[i] < 16 ? '0' : '') + a[i].toString(16);
        return 'sha256:' + hex;
      });
    }

    return {
      open: open, edit: edit, insert: insert, text: function () { return local; },
      events: function () { return events.slice(); }, state: state, settled: settled,
      until: until, close: close, checksum: checksum,
      milestone: milestone, restore: restore, history: loadHistory
    };
  }

  // documentURL turns a shared link (…/documents/<uuid>, or an editor link with
  // ?live=<that>) into the document URL: query, fragment and trailing slashes dropped.
  function documentURL(link) {
    var m = /[?&]live=([^&#]+)/.exec(link);
    if (m) link = decodeURIComponent(m[1]);
    link = link.replace(/[?#].*$/, '').replace(/\/+$/, '');
    if (!/^https?:\/\//i.test(link)) throw new Error('not an http(s) document link: ' + link);
    return link;
  }

  function problem(body) {
    if (!body) return '';
    return body.detail || body.title || JSON.stringify(body);
  }

  function delay(ms) {
    return new Promise(function (resolve) { setTimeout(resolve, ms); });
  }

  function randomId() {
    var s = '';
    for (var i = 0; i < 16; i++) s += Math.floor(Math.random() * 16).toString(16);
    return s;
  }

  var api = { create: create, documentURL: documentURL };
  if (typeof module === 'object' && module.exports) module.exports = api;
  root.TalkLive = api;
})(typeof globalThis !== 'undefined' ? globalThis : this);

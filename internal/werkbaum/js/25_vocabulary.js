// The notation's vocabulary (NOTATION.md §3, §9, §10) as one exported value: the statuses
// with their English key, German key, box code and progress rank, the words that mean "no
// box", the sizes in order and the gate characters. Hosts read it once, through
// Werkbaum.vocabulary(), instead of keeping copies: the Go engine (engine.go, as the typed
// werkbaum.Vocabulary the MCP tool schemas and messages are built from) and `go generate`
// for the talk CLI (internal/werkbaum/vocab). The status, box alias and size tables
// themselves live in 05_text.js (the gates too); the flags come from the model's own predicates (20_model.js), so this file
// adds no second copy of a rule.
(function (W) {
  'use strict';

  var T = W._text;
  var S = W._status;

  // NEUTRAL are the status arguments that remove the box (status = null); the first is the
  // one the tools document.
  var NEUTRAL = ['neutral', 'none'];

  // GATES: the gate characters of a node line and what the parser makes of each (05_text.js;
  // 10_parse.js setGate reads the same table).
  var GATES = T.GATES;

  var BOX_ALIASES = T.BOX_ALIASES; // `[X]` is `x`

  // vocabulary returns a fresh plain object (callers may keep or change it).
  function vocabulary() {
    var statuses = [];
    for (var c in T.STATUS_BY_CODE) {
      var e = T.STATUS_BY_CODE[c];
      var codes = [e.code];
      for (var a in BOX_ALIASES) if (BOX_ALIASES[a] === e.code) codes.push(a);
      var n = { status: e };
      statuses.push({
        key: e.key,
        german: e.name,
        code: e.code,
        codes: codes,
        rank: e.rank,
        realized: S.isRealized(n),
        done: S.isDone(n),
        started: S.isStarted(n)
      });
    }
    var gates = [];
    for (var i = 0; i < GATES.length; i++) {
      gates.push({ code: GATES[i].code, type: GATES[i].type, optional: GATES[i].optional });
    }
    return {
      statuses: statuses,
      neutral: NEUTRAL.slice(),
      sizes: T.SIZES.slice(),
      gates: gates
    };
  }

  // statusHelp is the sentence of every bad-status message: the English keys, the box
  // characters and the neutral word.
  function statusHelp() {
    var keys = [];
    var codes = [];
    for (var c in T.STATUS_BY_CODE) {
      keys.push(T.STATUS_BY_CODE[c].key);
      codes.push(c === ' ' ? 'space' : c);
    }
    return 'use one of ' + keys.join(', ') + ' (or the box characters ' + codes.join(' ') + '), or ' +
      NEUTRAL[0] + ' to remove the box';
  }

  // sizeHelp is the sentence of every bad-size message: "XS, S, M, L, XL or XXL".
  function sizeHelp() {
    var s = T.SIZES;
    return 'use ' + s.slice(0, -1).join(', ') + ' or ' + s[s.length - 1] + ', or null to remove it';
  }

  W.vocabulary = vocabulary;
  W._vocab = {
    NEUTRAL: NEUTRAL,
    GATES: GATES,
    statusHelp: statusHelp,
    sizeHelp: sizeHelp
  };
})(Werkbaum);

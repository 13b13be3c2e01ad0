'use strict';
// Small kernels of the kinds of work the notation engine does, timed in goja and in Node by
// BenchmarkKernelRatio (bench_ratio_test.go): how much slower goja is depends on the kind of
// work, not on the plan. Each kernel runs `rounds` times and returns a checksum.
//   node internal/werkbaum/testdata/bench/kernels.js NAME ROUNDS  → {wallMs, cpuMs, sum}
// The same file is loaded unchanged into a goja runtime, where KERNELS is read directly.
var KERNELS = (function () {
  var N = 1000;
  var marks = new Int32Array(N);
  var order = [];
  for (var i = 0; i < N; i++) order.push((i * 7919) % N);
  var line = '      - [x] Straße bauen 0.8 (M) @li.wei &ops #t455 :#t340';
  var LINE_RE = /^( *)- \[(.)\] ([^@&#(]*?) \((XS|S|M|L|XL|XXL)\)((?: [@&#:][^ ]+)*)$/u;
  var keep = new Array(N); // the objects stay reachable, so no engine can skip making them
  // 200 entries: the indices stay below 256, so only the values differ between the two
  var small = new Int32Array(200); // values below 256
  var large = new Int32Array(200); // values above 256 (node indices of a plan of some size)
  for (i = 0; i < 200; i++) {
    small[i] = i & 127;
    large[i] = i + 1000;
  }
  var P = function () {};
  P.prototype = { line: 0, label: '', id: null, size: null };
  return {
    // an integer loop (the path search's shape): a sum over an index range
    sum: function (rounds) {
      var k = 0;
      for (var r = 0; r < rounds; r++) for (var i = 0; i < N; i++) k += i & 7;
      return k;
    },
    // marking through an index list into a typed array, then reading it back
    mark: function (rounds) {
      var k = 0;
      for (var r = 0; r < rounds; r++) {
        for (var i = 0; i < N; i++) marks[order[i]] = r;
        for (i = 0; i < N; i++) if (marks[i] === r) k++;
      }
      return k;
    },
    // reading a typed array whose values are below 256 (the exact search's group and
    // position numbers), its length read once; k stays small too
    readSmall: function (rounds) {
      var k = 0;
      for (var r = 0; r < rounds; r++) {
        for (var j = 0; j < 5; j++) for (var i = 0, n = small.length; i < n; i++) if (small[i] === 100) k++;
      }
      return k;
    },
    // the same with values above 256: goja boxes every such number it reads into an
    // interface, an allocation (Go's runtime has static boxes for 0…255 only)
    readLarge: function (rounds) {
      var k = 0;
      for (var r = 0; r < rounds; r++) {
        for (var j = 0; j < 5; j++) for (var i = 0, n = large.length; i < n; i++) if (large[i] === 1100) k++;
      }
      return k;
    },
    // readSmall with the length read in the loop's condition: in goja a named property of a
    // typed array is first tried as a number (strconv parses "length" and fails, twice)
    lengthInLoop: function (rounds) {
      var k = 0;
      for (var r = 0; r < rounds; r++) {
        for (var j = 0; j < 5; j++) for (var i = 0; i < small.length; i++) if (small[i] === 100) k++;
      }
      return k;
    },
    // objects: one per item with three own fields on a shared prototype (the parse's nodes)
    objects: function (rounds) {
      var k = 0;
      for (var r = 0; r < rounds; r++) {
        for (var i = 0; i < N; i++) {
          var o = new P();
          o.line = i;
          o.label = 'x';
          o.id = 'n' + (i & 3);
          keep[i] = o;
          k += o.line;
          if (o.size === null) k++;
        }
      }
      return k;
    },
    // one regexp split of a node line per item (the parse's fast line)
    split: function (rounds) {
      var k = 0;
      for (var r = 0; r < rounds; r++) for (var i = 0; i < N / 10; i++) k += line.split(LINE_RE).length;
      return k;
    },
    // the same line read by a hand-written scanner (charCodeAt per character)
    scan: function (rounds) {
      var k = 0;
      for (var r = 0; r < rounds; r++) {
        for (var i = 0; i < N / 10; i++) {
          for (var p = 0, n = line.length; p < n; p++) {
            var c = line.charCodeAt(p);
            if (c === 64 || c === 35 || c === 38 || c === 40) k++;
          }
        }
      }
      return k;
    }
  };
})();

if (typeof module !== 'undefined' && require.main === module) {
  var name = process.argv[2];
  var rounds = +process.argv[3];
  var fn = KERNELS[name];
  if (!fn) throw new Error('unknown kernel ' + name);
  for (var w = 0; w < 5; w++) fn(rounds); // warm-up (JIT)
  var c0 = process.cpuUsage();
  var t0 = process.hrtime.bigint();
  var sum = fn(rounds);
  var wall = Number(process.hrtime.bigint() - t0) / 1e6;
  var c = process.cpuUsage(c0);
  process.stdout.write(JSON.stringify({ wallMs: wall, cpuMs: (c.user + c.system) / 1000, sum: sum }) + '\n');
}

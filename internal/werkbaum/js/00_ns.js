// The Werkbaum notation as engine-neutral JavaScript.
//
// Every file in this folder is a plain script (no modules, no Node, DOM or goja APIs) that
// adds to the one global namespace object below. Hosts run the files in the order listed in
// order.json, in one scope: the Go engine (goja), Node's vm for tests (test/load.js), or a
// browser with one <script> tag per file in that order. Text goes in, plain JSON-able objects come out.
var Werkbaum = {};

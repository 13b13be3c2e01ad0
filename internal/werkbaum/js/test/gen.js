'use strict';
// Deterministic generators of random plans for the path-equality tests and timings.

// rng returns a small deterministic PRNG (mulberry32).
function rng(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SIZES = ['XS', 'S', 'M', 'L', 'XL', 'XXL'];
const BOXES = ['', '', '[ ] ', '[?] ', '[!] ', '[~] ', '[/] ', '[x] ', '[^] ', '[-] '];

// randomPlan builds a plan of about `size` nodes full of choice groups, optional nodes,
// statuses and dependencies (ids n0…; some deps unknown, some cyclic).
function randomPlan(seed, size) {
  const r = rng(seed);
  const pick = (a) => a[Math.floor(r() * a.length)];
  const lines = [];
  let count = 0;
  function node(depth, gate) {
    const id = count++;
    let line = '  '.repeat(depth) + gate + (gate ? ' ' : '') + pick(BOXES) + 'N' + id + ' #n' + id;
    if (r() < 0.6) line += ' (' + pick(SIZES) + ')';
    if (r() < 0.3) {
      const deps = [];
      const k = 1 + Math.floor(r() * 2);
      for (let i = 0; i < k; i++) deps.push('#n' + Math.floor(r() * (size + 2)));
      line += ' :' + deps.join(',');
    }
    if (r() < 0.2) line += ' @' + pick(['ann', 'bo', 'cy']);
    lines.push(line);
    if (depth < 4 && count < size && r() < 0.55) {
      const kids = 1 + Math.floor(r() * 3);
      const kind = r();
      for (let i = 0; i < kids && count < size; i++) {
        let g;
        if (kind < 0.4) g = pick(['|', '|', '|', '=']);
        else if (kind < 0.45) g = pick(['-', '|']);
        else g = pick(['-', '-', '+', '']);
        if (kind < 0.4 && kind > 0.3) g = '=';
        node(depth + 1, g);
      }
    }
  }
  while (count < size) node(0, pick(['', '', '-', '+']));
  return lines.join('\n') + '\n';
}

// coupledPlan builds `groups` two-way alternative groups whose first options all depend on
// one shared pool node (a fully coupled component), plus `independent` separate groups.
function coupledPlan(groups, independent) {
  const out = ['Ship (XXL)'];
  for (let i = 0; i < groups; i++) {
    out.push('  - Pick ' + i);
    out.push('    | A' + i + ' (S) :#db');
    out.push('    | B' + i + ' (M)');
  }
  for (let i = 0; i < (independent || 0); i++) {
    out.push('  - Own ' + i);
    out.push('    | C' + i + ' (XS) :#x' + i);
    out.push('    | D' + i + ' (S)');
    out.push('  + #x' + i + ': X' + i + ' (L)');
  }
  out.push('  + Pool');
  out.push('    - #db: DB (L)');
  return out.join('\n') + '\n';
}

// bigPlan builds a realistic plan of about n nodes (ids, sizes, tags, some deps).
function bigPlan(n, seed) {
  const r = rng(seed || 7);
  const lines = [];
  let i = 0;
  while (i < n) {
    lines.push('[~] #r' + i + ': Area ' + i + ' (XL) @ann &taiga.area' + i);
    i++;
    for (let a = 0; a < 6 && i < n; a++) {
      lines.push('  - [ ] #t' + i + ': Task ' + i + ' (M) @bo :#r0');
      i++;
      for (let b = 0; b < 4 && i < n; b++) {
        const box = ['[ ]', '[x]', '[~]', '[?]'][Math.floor(r() * 4)];
        lines.push('    ' + (b % 2 ? '|' : '|') + ' ' + box + ' #s' + i + ': Step ' + i + ' (S) @cy');
        i++;
      }
      lines.push('    " A short description of task ' + i);
    }
  }
  return lines.join('\n') + '\n';
}

// coupledRandomPlan builds 2–8 choice groups under one root whose options depend on a
// small shared pool of ids (so the groups form larger coupled components), with random
// sizes, statuses, optional extras and occasionally a nested group inside an option.
function coupledRandomPlan(seed) {
  const r = rng(seed);
  const pick = (a) => a[Math.floor(r() * a.length)];
  const pool = 1 + Math.floor(r() * 3);
  const groups = 2 + Math.floor(r() * 7);
  const out = ['Root (' + pick(SIZES) + ')'];
  let id = 0;
  const dep = () => (r() < 0.5 ? ' :#p' + Math.floor(r() * pool) : '');
  for (let g = 0; g < groups; g++) {
    out.push('  - ' + (r() < 0.8 ? '' : pick(['[~] ', '[x] '])) + 'G' + g + (r() < 0.3 ? ' (' + pick(SIZES) + ')' : ''));
    const gate = r() < 0.8 ? '|' : '=';
    const opts = 2 + Math.floor(r() * 2);
    for (let o = 0; o < opts; o++) {
      out.push('    ' + gate + ' ' + (r() < 0.85 ? '' : pick(['[~] ', '[x] ', '[-] ', '[ ] '])) + 'O' + g + '.' + o + ' #o' + id++ +
        (r() < 0.8 ? ' (' + pick(SIZES) + ')' : '') + dep() + dep());
      if (r() < 0.15) {
        out.push('      | I' + g + '.' + o + 'a (' + pick(SIZES) + ')' + dep());
        out.push('      | I' + g + '.' + o + 'b (' + pick(SIZES) + ')' + dep());
      }
      if (r() < 0.1) out.push('      - K' + g + '.' + o + ' (' + pick(SIZES) + ')' + dep());
    }
  }
  out.push('  + Pool');
  for (let i = 0; i < pool; i++) {
    out.push('    - ' + pick(['', '[x] ', '[~] ']) + '#p' + i + ': P' + i + ' (' + pick(SIZES) + ')' + (r() < 0.3 ? ' :#p' + Math.floor(r() * pool) : ''));
  }
  if (r() < 0.3) out.push('  - Fixed (XS) :#p0');
  return out.join('\n') + '\n';
}

// richPlan builds a random plan with every input the model reads: discarded roots and
// children, optional started nodes, all gates (mixed too), fold marks and focus, taiga
// marks (also the bare "taiga."), ticket ids and label refs, duplicate ids, several and
// repeated assignees, unsized parents and dependencies into dropped subtrees.
function richPlan(seed, size) {
  const r = rng(seed);
  const pick = (a) => a[Math.floor(r() * a.length)];
  const SIZES = ['XS', 'S', 'M', 'L', 'XL', 'XXL'];
  const BOXES = ['', '', '[ ] ', '[?] ', '[!] ', '[~] ', '[/] ', '[x] ', '[^] ', '[-] '];
  const lines = [];
  let count = 0;
  function id() {
    const k = Math.floor(r() * (size + 2));
    const x = r();
    if (x < 0.1) return 'T-' + k;
    if (x < 0.15) return 'US-' + k;
    if (x < 0.2) return 'Tn' + k;
    return 'n' + k;
  }
  function node(depth, gate) {
    count++;
    let line = '  '.repeat(depth) + gate + (gate ? ' ' : '') + pick(BOXES);
    const f = r();
    if (f < 0.08) line += '> ';
    else if (f < 0.12) line += '< ';
    if (r() < 0.8) line += '#' + id() + ': ';
    line += 'N' + count;
    if (r() < 0.1) line += ' see #US-' + Math.floor(r() * 9) + ' and';
    if (r() < 0.05) line += ' #T-' + Math.floor(r() * 9);
    if (r() < 0.6) line += ' (' + pick(SIZES) + ')';
    if (r() < 0.3) {
      const deps = [];
      const k = 1 + Math.floor(r() * 2);
      for (let i = 0; i < k; i++) deps.push('#' + id());
      line += ' :' + deps.join(',');
    }
    const t = r();
    if (t < 0.2) line += ' @' + pick(['ann', 'bo', 'cy']);
    else if (t < 0.3) line += ' @' + pick(['ann', 'bo']) + ' @' + pick(['bo', 'cy']);
    const k = r();
    if (k < 0.1) line += ' &taiga.p' + Math.floor(r() * 4);
    else if (k < 0.13) line += ' &taiga. &taiga.q';
    else if (k < 0.16) line += ' &misc';
    if (r() < 0.05) line += ' !!!';
    lines.push(line);
    if (depth < 4 && count < size && r() < 0.55) {
      const kids = 1 + Math.floor(r() * 4);
      const kind = r();
      for (let i = 0; i < kids && count < size; i++) {
        let g;
        if (kind < 0.35) g = pick(['|', '|', '=']);
        else if (kind < 0.45) g = pick(['-', '|', '=', '+']);
        else g = pick(['-', '-', '+', '']);
        node(depth + 1, g);
      }
    }
  }
  while (count < size) node(0, pick(['', '', '-', '+']));
  return lines.join('\n') + '\n';
}

// chainPlan is the shape of package gen's Coupled (issue 33) with random sizes, statuses
// and, per option, a dependency on the previous group's optional parent (so the groups
// activate backwards, which keeps the search from the order-by-order solution), on a
// shared node, on both or on none; `width` steps below each option. `sizes` narrows the
// sizes drawn (e.g. ['S', 'M'] makes equally cheap assignments, so ties, common).
function chainPlan(seed, k, width, sizes) {
  const r = rng(seed);
  const pick = (a) => a[Math.floor(r() * a.length)];
  const SIZES = sizes || ['XS', 'S', 'M', 'L', 'XL', 'XXL'];
  const out = ['[~] Ship #ship (' + pick(SIZES) + ') :#g' + (k - 1)];
  out.push('  - ' + pick(['', '[~] ', '[x] ']) + 'Base (' + pick(SIZES) + ')' + (r() < 0.5 ? ' :#db' : ''));
  out.push('  + Pool');
  out.push('    - ' + pick(['', '[x] ']) + '#db: DB (' + pick(SIZES) + ')');
  for (let i = 0; i < k; i++) {
    out.push('  + #g' + i + ': Part ' + i + (r() < 0.7 ? ' (' + pick(SIZES) + ')' : ''));
    const opts = r() < 0.8 ? 2 : 3;
    for (let o = 0; o < opts; o++) {
      const deps = [];
      if (i > 0 && r() < 0.6) deps.push('#g' + (i - 1));
      if (r() < 0.4) deps.push('#db');
      if (r() < 0.1) deps.push('#g' + Math.floor(r() * k));
      out.push('    | ' + (r() < 0.85 ? '' : pick(['[~] ', '[x] '])) + 'O' + i + '.' + o + (r() < 0.8 ? ' (' + pick(SIZES) + ')' : '') +
        (deps.length ? ' :' + deps.join(',') : ''));
      for (let j = 0; j < width; j++) out.push('      - ' + pick(BOXES) + 'S' + i + '.' + o + '.' + j + ' (' + pick(SIZES) + ')');
    }
  }
  return out.join('\n') + '\n';
}

module.exports = { rng, randomPlan, richPlan, coupledPlan, coupledRandomPlan, chainPlan, bigPlan };

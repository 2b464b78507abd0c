// The attention lab: one query and five keys in the plane, and what catalogue mechanisms make of them — five score
// functions, Luong's local-p window, hard (argmax / sampled) versus soft attention, and two-head attention — each
// with its formula. The ops are microseconds each, so they run on the main thread through the public API.
import { attention, tensor } from '../wasm/index.js';

const KEY_COUNT = 5;
const RANGE = 2.2; // the plane shows [-RANGE, RANGE]²
// Toy weights: general W [2×2]; additive W [3×2], U [3×2], v [3] (Bahdanau's vᵀ tanh(W q + U k)).
const W_GENERAL = tensor([1.0, 0.6, -0.6, 1.0], [2, 2]);
const W_ADD = tensor([1.2, 0.0, 0.0, 1.2, 0.8, -0.8], [3, 2]);
const U_ADD = tensor([1.0, 0.3, -0.3, 1.0, 0.5, 0.5], [3, 2]);
const V_ADD = tensor([1.5, 1.5, -1.0], [3]);
// Two heads over E = 2 (d_h = 1): head 1 looks at x, head 2 at y (in_proj rows: Wq, Wk, Wv).
const IN_PROJ = tensor([2, 0, 0, 2, 2, 0, 0, 2, 1, 0, 0, 1], [6, 2]);
const OUT_PROJ = tensor([1, 0, 0, 1], [2, 2]);

const soft = (scores) => attention.alignSoft({ scores }).weights.data;

const MECHANISMS = [
  { name: 'dot', formula: 's(q, k) = qᵀk;  α = softmax(s)', paper: 'Luong 2015',
    series: (q, k) => [soft(attention.scoreDot({ q, keys: k }).scores)] },
  { name: 'scaled dot', formula: 's(q, k) = qᵀk / √d;  α = softmax(s)', paper: 'Vaswani 2017',
    series: (q, k) => [soft(attention.scoreScaledDot({ q, keys: k }).scores)] },
  { name: 'cosine', formula: 's(q, k) = qᵀk / (‖q‖‖k‖);  α = softmax(s)', paper: 'Graves 2014',
    series: (q, k) => [soft(attention.scoreCosine({ q, keys: k }).scores)] },
  { name: 'general', formula: 's(q, k) = qᵀ W k;  α = softmax(s)', paper: 'Luong 2015',
    series: (q, k) => [soft(attention.scoreGeneral({ q, w: W_GENERAL, keys: k }).scores)] },
  { name: 'additive', formula: 's(q, k) = vᵀ tanh(W q + U k);  α = softmax(s)', paper: 'Bahdanau 2014',
    series: (q, k) => [soft(attention.scoreAdditive({ q, keys: k, w: W_ADD, u: U_ADD, v: V_ADD }).scores)] },
  { name: 'local-p window', formula: 'local-m: α = softmax(s) over [t − D, t + D], t = round(p);  local-p: α_s = softmax(s)_s · exp(−(s − p)² / 2σ²),  σ = D/2  (s: scaled dot)', paper: 'Luong 2015',
    legend: ['soft', 'local-m', 'local-p'], numbers: 2,
    controls: [
      { id: 'p', label: 'p', min: 0, max: KEY_COUNT - 1, step: 0.1, value: 2 },
      { id: 'D', label: 'D', min: 1, max: 3, step: 1, value: 1 },
    ],
    series: (q, k, c) => {
      const scores = attention.scoreScaledDot({ q, keys: k }).scores;
      const flat = tensor(scores.data, [KEY_COUNT]);
      return [soft(scores), attention.alignLocalM({ scores: flat }, { t: Math.round(c.p), D: c.D }).weights.data,
        attention.alignLocalP({ scores: flat }, { p: c.p, D: c.D }).weights.data];
    } },
  { name: 'hard vs soft', formula: 'soft: α = softmax(qᵀk/√d);  hard: onehot(argmax α), or s ~ Multinoulli(α) (share of 400 draws)', paper: 'Xu 2015',
    legend: ['soft', 'argmax', 'sampled'], numbers: 0,
    controls: [{ id: 'seed', label: 'seed', min: 0, max: 9, step: 1, value: 1 }],
    series: (q, k, c) => {
      const w = soft(attention.scoreScaledDot({ q, keys: k }).scores);
      const weights = tensor(w, [KEY_COUNT]);
      const hard = attention.alignHardArgmax({ weights }).one_hot.data;
      const draws = 400;
      const samples = attention.alignHardSample({ weights }, { draws, seed: c.seed }).samples.data;
      const share = new Float32Array(KEY_COUNT);
      for (const s of samples) share[s] += 1 / draws;
      return [w, hard, share];
    } },
  { name: 'two heads', formula: 'head_i = softmax(q W_iᵠ (K W_iᴷ)ᵀ / √d_h) ;  head 1 reads x, head 2 reads y', paper: 'Vaswani 2017',
    legend: ['head 1', 'head 2'], numbers: 0,
    series: (q, k) => {
      const w = attention.multiHeadAttention(
        { query: q, key: k, value: k, in_proj_weight: IN_PROJ, out_proj_weight: OUT_PROJ }, { num_heads: 2 }).weights.data;
      return [w.subarray(0, KEY_COUNT), w.subarray(KEY_COUNT, 2 * KEY_COUNT)];
    } },
];

export function setupLab() {
  const canvas = document.getElementById('plane');
  const ctx = canvas.getContext('2d');
  const selectedLabel = document.getElementById('selected');
  const panel = document.getElementById('mechanisms');

  // points[0] is the query, points[1..] the keys.
  const points = [[0.9, 0.5], [1.5, 0.2], [0.2, 1.4], [-1.2, 0.6], [-0.5, -1.3], [1.0, -1.1]];
  let selected = 0;
  let dragging = -1;

  const toCanvas = ([x, y]) => [((x + RANGE) / (2 * RANGE)) * canvas.width, ((RANGE - y) / (2 * RANGE)) * canvas.height];
  const fromCanvas = (px, py) => [(px / canvas.width) * 2 * RANGE - RANGE, RANGE - (py / canvas.height) * 2 * RANGE];

  function drawPlane(weights) {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.strokeStyle = '#e9ecef';
    ctx.lineWidth = 1;
    for (let v = -2; v <= 2; v++) {
      const [gx] = toCanvas([v, 0]);
      const [, gy] = toCanvas([0, v]);
      ctx.beginPath(); ctx.moveTo(gx, 0); ctx.lineTo(gx, canvas.height); ctx.stroke();
      ctx.beginPath(); ctx.moveTo(0, gy); ctx.lineTo(canvas.width, gy); ctx.stroke();
    }
    const [ox, oy] = toCanvas([0, 0]);
    const [qx, qy] = toCanvas(points[0]);
    // Lines from the query to each key, as thick as the scaled-dot weight.
    for (let i = 1; i < points.length; i++) {
      const [kx, ky] = toCanvas(points[i]);
      ctx.strokeStyle = 'rgba(28, 126, 214, 0.55)';
      ctx.lineWidth = 1 + 10 * (weights ? weights[i - 1] : 0);
      ctx.beginPath(); ctx.moveTo(qx, qy); ctx.lineTo(kx, ky); ctx.stroke();
    }
    ctx.strokeStyle = '#adb5bd';
    ctx.lineWidth = 1;
    ctx.beginPath(); ctx.arc(ox, oy, 3, 0, 2 * Math.PI); ctx.stroke();
    points.forEach((p, i) => {
      const [x, y] = toCanvas(p);
      ctx.fillStyle = i === 0 ? '#d6336c' : '#1c7ed6';
      ctx.beginPath(); ctx.arc(x, y, i === selected ? 10 : 8, 0, 2 * Math.PI); ctx.fill();
      if (i === selected) { ctx.strokeStyle = '#212529'; ctx.lineWidth = 2; ctx.stroke(); }
      ctx.fillStyle = '#212529';
      ctx.font = '12px system-ui, sans-serif';
      ctx.fillText(i === 0 ? 'q' : `k${i}`, x + 11, y - 9);
    });
  }

  function buildPanels() {
    panel.replaceChildren();
    for (const m of MECHANISMS) {
      const box = document.createElement('article');
      box.className = m.legend ? 'mech-x' : 'mech';
      const part = (tag, className = '') => Object.assign(document.createElement(tag), { className });
      box.append(part('h3'), part('p', 'formula'), part('div', 'knobs'), part('div', 'bars'), part('p', 'legend'));
      box.querySelector('h3').textContent = `${m.name} — ${m.paper}`;
      box.querySelector('.formula').textContent = m.formula;
      m.values = {};
      const knobs = box.querySelector('.knobs');
      for (const c of m.controls ?? []) {
        m.values[c.id] = c.value;
        const label = document.createElement('label');
        const out = document.createElement('output');
        const input = Object.assign(document.createElement('input'), { type: 'range', min: c.min, max: c.max, step: c.step, value: c.value });
        input.setAttribute('aria-label', `${m.name}: ${c.label}`);
        out.textContent = String(c.value);
        input.addEventListener('input', () => { m.values[c.id] = Number(input.value); out.textContent = input.value; update(); });
        label.append(`${c.label} `, input, out);
        knobs.append(label);
      }
      const nSeries = m.legend?.length ?? 1;
      if (m.legend) {
        const note = document.createElement('span');
        note.textContent = `(numbers: ${m.legend[m.numbers ?? 0]})`;
        box.querySelector('.legend').replaceChildren(...m.legend.map((l, s) => {
          const span = document.createElement('span');
          span.className = `key s${s}`;
          span.textContent = l;
          return span;
        }), note);
      }
      const bars = box.querySelector('.bars');
      m.cells = [];
      for (let i = 0; i < KEY_COUNT; i++) {
        const label = document.createElement('span');
        label.textContent = `k${i + 1}`;
        const track = document.createElement('div');
        track.className = 'track';
        const fills = [];
        for (let s = 0; s < nSeries; s++) {
          const fill = document.createElement('div');
          fill.className = `fill s${s}`;
          fill.style.height = `${100 / nSeries}%`;
          track.append(fill);
          fills.push(fill);
        }
        const num = document.createElement('span');
        num.className = 'num';
        bars.append(label, track, num);
        m.cells.push({ fills, num });
      }
      panel.append(box);
    }
  }

  function update() {
    const q = tensor(points[0], [1, 2]);
    const keys = tensor(points.slice(1).flat(), [KEY_COUNT, 2]);
    let lineWeights = null;
    for (const m of MECHANISMS) {
      const series = m.series(q, keys, m.values);
      m.cells.forEach((cell, i) => {
        series.forEach((w, s) => { cell.fills[s].style.width = `${(100 * Math.max(0, Math.min(1, w[i]))).toFixed(1)}%`; });
        cell.num.textContent = series[m.numbers ?? 0][i].toFixed(3);
      });
      if (m.name === 'scaled dot') lineWeights = series[0];
    }
    drawPlane(lineWeights);
    selectedLabel.textContent = `selected: ${selected === 0 ? 'query' : `key ${selected}`} at (${points[selected].map((v) => v.toFixed(2)).join(', ')})`;
  }

  function pointerPos(ev) {
    const r = canvas.getBoundingClientRect();
    return [((ev.clientX - r.left) / r.width) * canvas.width, ((ev.clientY - r.top) / r.height) * canvas.height];
  }

  canvas.addEventListener('pointerdown', (ev) => {
    const [px, py] = pointerPos(ev);
    let best = -1;
    let bestDist = 20 * 20;
    points.forEach((p, i) => {
      const [x, y] = toCanvas(p);
      const d = (x - px) ** 2 + (y - py) ** 2;
      if (d < bestDist) { best = i; bestDist = d; }
    });
    if (best >= 0) {
      dragging = selected = best;
      canvas.setPointerCapture(ev.pointerId);
      update();
    }
  });
  canvas.addEventListener('pointermove', (ev) => {
    if (dragging < 0) return;
    const [x, y] = fromCanvas(...pointerPos(ev));
    points[dragging] = [Math.max(-RANGE, Math.min(RANGE, x)), Math.max(-RANGE, Math.min(RANGE, y))];
    update();
  });
  canvas.addEventListener('pointerup', () => { dragging = -1; });
  canvas.addEventListener('keydown', (ev) => {
    const step = ev.shiftKey ? 0.5 : 0.1;
    const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
    if (ev.key === 'Tab') {
      // Tab cycles through the points while the plane has focus; Escape leaves it.
      selected = (selected + (ev.shiftKey ? points.length - 1 : 1)) % points.length;
    } else if (ev.key === 'Escape') {
      canvas.blur();
      return;
    } else if (moves[ev.key]) {
      const [dx, dy] = moves[ev.key];
      const p = points[selected];
      points[selected] = [Math.max(-RANGE, Math.min(RANGE, p[0] + dx)), Math.max(-RANGE, Math.min(RANGE, p[1] + dy))];
    } else {
      return;
    }
    ev.preventDefault();
    update();
  });

  buildPanels();
  update();
}

// The attention lab, first version: one query and five keys in the plane, and the weights that five score
// functions give them. Uses only the package's public entry (the same import an app makes).
import { init, info, attention, tensor } from '../wasm/index.js';

const KEY_COUNT = 5;
const RANGE = 2.2; // the plane shows [-RANGE, RANGE]²
// Toy weights: general W [2×2]; additive W [3×2], U [3×2], v [3] (Bahdanau's vᵀ tanh(W q + U k)).
const W_GENERAL = tensor([1.0, 0.6, -0.6, 1.0], [2, 2]);
const W_ADD = tensor([1.2, 0.0, 0.0, 1.2, 0.8, -0.8], [3, 2]);
const U_ADD = tensor([1.0, 0.3, -0.3, 1.0, 0.5, 0.5], [3, 2]);
const V_ADD = tensor([1.5, 1.5, -1.0], [3]);

const MECHANISMS = [
  { name: 'dot', formula: 's(q, k) = qᵀk', paper: 'Luong 2015', run: (q, k) => attention.scoreDot({ q, keys: k }) },
  { name: 'scaled dot', formula: 's(q, k) = qᵀk / √d', paper: 'Vaswani 2017', run: (q, k) => attention.scoreScaledDot({ q, keys: k }) },
  { name: 'cosine', formula: 's(q, k) = qᵀk / (‖q‖‖k‖)', paper: 'Graves 2014', run: (q, k) => attention.scoreCosine({ q, keys: k }) },
  { name: 'general', formula: 's(q, k) = qᵀ W k', paper: 'Luong 2015', run: (q, k) => attention.scoreGeneral({ q, w: W_GENERAL, keys: k }) },
  { name: 'additive', formula: 's(q, k) = vᵀ tanh(W q + U k)', paper: 'Bahdanau 2014', run: (q, k) => attention.scoreAdditive({ q, keys: k, w: W_ADD, u: U_ADD, v: V_ADD }) },
];

const canvas = document.getElementById('plane');
const ctx = canvas.getContext('2d');
const status = document.getElementById('status');
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
    box.className = 'mech';
    box.innerHTML = `<h2></h2><p class="formula"></p><div class="bars"></div>`;
    box.querySelector('h2').textContent = `${m.name} — ${m.paper}`;
    box.querySelector('.formula').textContent = `${m.formula};  α = softmax(s)`;
    const bars = box.querySelector('.bars');
    m.cells = [];
    for (let i = 0; i < KEY_COUNT; i++) {
      const label = document.createElement('span');
      label.textContent = `k${i + 1}`;
      const track = document.createElement('div');
      track.className = 'track';
      const fill = document.createElement('div');
      fill.className = 'fill';
      track.append(fill);
      const num = document.createElement('span');
      num.className = 'num';
      bars.append(label, track, num);
      m.cells.push({ fill, num });
    }
    panel.append(box);
  }
}

function update() {
  const q = tensor(points[0], [1, 2]);
  const keys = tensor(points.slice(1).flat(), [KEY_COUNT, 2]);
  let lineWeights = null;
  for (const m of MECHANISMS) {
    const { scores } = m.run(q, keys);
    const { weights } = attention.alignSoft({ scores });
    m.cells.forEach((cell, i) => {
      cell.fill.style.width = `${(100 * weights.data[i]).toFixed(1)}%`;
      cell.num.textContent = weights.data[i].toFixed(3);
      cell.num.title = `score ${scores.data[i].toFixed(3)}`;
    });
    if (m.name === 'scaled dot') lineWeights = weights.data;
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

try {
  await init();
  const { version, simd } = info();
  status.textContent = `attnlens ${version} loaded (kernels: ${simd}).`;
  buildPanels();
  update();
} catch (err) {
  status.textContent = `Could not start attnlens: ${err.message}`;
  status.className = 'error';
  console.error(err);
}

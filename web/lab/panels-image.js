// The lab's visual soft attention (Xu 2015): an 8 × 8 grid over one of the example images, each cell a feature
// a_i = (mean red, green, blue, x, y) in [0, 1]; the decoder state h is the feature of the cell under the draggable
// query, so the attention finds the cells of that colour, nearer ones first. "Keep this step" adds the current α
// to a caption of several steps, over which the doubly stochastic penalty λ Σ_i (1 − Σ_t α_ti)² is computed.
//
// Toy weights, fixed here: d_att = 10, two tanh units per feature k that together make a bump around h_k,
//   bump_k = c_k [tanh(a_k (a_ik − h_k) + b_k) − tanh(a_k (a_ik − h_k) − b_k)]
// (U rows a_k e_k, W rows −a_k e_k, bias ±b_k, v ±c_k) with a = 6, b = 1.5, c = 1 for the colours and a = 4,
// b = 1.2, c = 0.6 for the position; the gate β = σ(w_βᵀ h + b_β) with w_β = (1, 1, 1, 0, 0), b_β = −1.5 opens for
// bright cells.
import { tensor } from '../../wasm/index.js';
import { makePanel, heatmap, values, swatch, el } from './ui.js';

const GRID = 8;
const D = 5;
const IMAGES = [['shapes-2.png', 'shapes: squares and a circle'], ['shapes-1.png', 'shapes: two triangles']];
const BUMP = [[6, 1.5, 1], [6, 1.5, 1], [6, 1.5, 1], [4, 1.2, 0.6], [4, 1.2, 0.6]];
const unit = (k, s) => Array.from({ length: D }, (_, i) => (i === k ? s : 0));
const W = tensor(BUMP.flatMap(([a], k) => [...unit(k, -a), ...unit(k, -a)]), [2 * D, D]);
const U = tensor(BUMP.flatMap(([a], k) => [...unit(k, a), ...unit(k, a)]), [2 * D, D]);
const BIAS = tensor(BUMP.flatMap(([, b]) => [b, -b]));
const V = tensor(BUMP.flatMap(([, , c]) => [c, -c]));
const W_BETA = tensor([1, 1, 1, 0, 0]);
const B_BETA = -1.5;
const MAX_KEPT = 8;

/** Mean colour of each cell of the image, with the cell's centre: [GRID² × 5]. */
function gridFeatures(img) {
  const c = document.createElement('canvas');
  c.width = img.naturalWidth;
  c.height = img.naturalHeight;
  const g = c.getContext('2d', { willReadFrequently: true });
  g.drawImage(img, 0, 0);
  const { data } = g.getImageData(0, 0, c.width, c.height);
  const out = [];
  for (let gy = 0; gy < GRID; gy++) {
    for (let gx = 0; gx < GRID; gx++) {
      const x0 = Math.floor((gx * c.width) / GRID);
      const x1 = Math.floor(((gx + 1) * c.width) / GRID);
      const y0 = Math.floor((gy * c.height) / GRID);
      const y1 = Math.floor(((gy + 1) * c.height) / GRID);
      const sum = [0, 0, 0];
      for (let y = y0; y < y1; y++) {
        for (let x = x0; x < x1; x++) {
          const i = 4 * (y * c.width + x);
          sum[0] += data[i]; sum[1] += data[i + 1]; sum[2] += data[i + 2];
        }
      }
      const n = (x1 - x0) * (y1 - y0) * 255;
      out.push(sum[0] / n, sum[1] / n, sum[2] / n, (gx + 0.5) / GRID, (gy + 0.5) / GRID);
    }
  }
  return out;
}

/** The image, its cells darkened by how little attention `alpha` gives them, and the query's cell ringed. */
function drawGrid(canvas, img, alpha, cell) {
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  if (img) ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
  const cw = canvas.width / GRID;
  if (alpha) {
    const top = Math.max(...alpha);
    alpha.forEach((a, i) => {
      // Cells with little attention are darkened; the most attended cell keeps its colours.
      ctx.fillStyle = `rgba(0, 0, 0, ${(0.8 * (1 - a / top)).toFixed(3)})`;
      ctx.fillRect((i % GRID) * cw, Math.floor(i / GRID) * cw, cw, cw);
    });
  }
  const [gx, gy] = cell;
  ctx.strokeStyle = '#fff';
  ctx.lineWidth = 3;
  ctx.beginPath(); ctx.arc((gx + 0.5) * cw, (gy + 0.5) * cw, cw * 0.32, 0, 2 * Math.PI); ctx.stroke();
  ctx.strokeStyle = '#d6336c';
  ctx.lineWidth = 2;
  ctx.stroke();
  canvas.dataset.cell = JSON.stringify(cell);
}

/** Dragging on the grid or the arrow keys move the query to a cell: moveTo([gx, gy]). */
function wireCellInput(canvas, cell, moveTo) {
  const clamp = (v) => Math.max(0, Math.min(GRID - 1, v));
  const cellAt = (ev) => {
    const r = canvas.getBoundingClientRect();
    return [clamp(Math.floor(((ev.clientX - r.left) / r.width) * GRID)), clamp(Math.floor(((ev.clientY - r.top) / r.height) * GRID))];
  };
  let dragging = false;
  canvas.addEventListener('pointerdown', (ev) => {
    dragging = true;
    canvas.setPointerCapture(ev.pointerId);
    moveTo(cellAt(ev));
  });
  canvas.addEventListener('pointermove', (ev) => { if (dragging) moveTo(cellAt(ev)); });
  canvas.addEventListener('pointerup', () => { dragging = false; });
  canvas.addEventListener('keydown', (ev) => {
    const moves = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    if (!moves[ev.key]) return;
    ev.preventDefault();
    const [dx, dy] = moves[ev.key];
    moveTo([clamp(cell()[0] + dx), clamp(cell()[1] + dy)]);
  });
}

export function setupImagePanel(parent) {
  parent.replaceChildren();
  const panel = makePanel(parent, {
    op: 'visual_soft_attention', ops: ['visual_soft_attention', 'doubly_stochastic_penalty'], title: 'visual soft attention', paper: 'Xu 2015',
    formula: 'e_i = vᵀ tanh(W h + U a_i + b);  α = softmax(e);  β = σ(w_βᵀ h + b_β);  z = β Σ α_i a_i;  penalty λ Σ_i (1 − Σ_t α_ti)², λ = 1',
    note: 'Drag the query (or focus the image and use the arrow keys): h is the colour and place of the cell under it. Each kept step is one word of a caption; the penalty is small when the steps together cover every cell about once.',
  });
  panel.box.classList.add('wide');
  const state = { image: 0, cell: [4, 1], kept: [] };
  let features = null;
  let img = null;

  const select = document.createElement('select');
  select.setAttribute('aria-label', 'visual soft attention: image');
  IMAGES.forEach(([, name], i) => select.append(Object.assign(document.createElement('option'), { value: String(i), textContent: name })));
  const keep = Object.assign(el('button', 'secondary small', 'Keep this step'), { type: 'button' });
  const clear = Object.assign(el('button', 'secondary small', 'Clear steps'), { type: 'button' });
  const imgLabel = el('label', '', 'image ');
  imgLabel.append(select);
  panel.knobs.append(imgLabel, keep, clear);

  const canvas = Object.assign(document.createElement('canvas'), { width: 256, height: 256, tabIndex: 0 });
  canvas.className = 'lab-image';
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', 'Image grid with the attention of the query; arrow keys move the query');
  const view = el('div', 'lab-image-row');
  const side = el('div', 'lab-image-side');
  view.append(canvas, side);
  panel.box.insertBefore(view, panel.drawing);

  let alpha = null;
  const draw = () => drawGrid(canvas, img, alpha, state.cell);

  function update() {
    const rec = panel.render((r, parts) => {
      if (!features) {
        parts.push(el('p', 'msg', 'loading the image…'));
        return;
      }
      const i = state.cell[1] * GRID + state.cell[0];
      const h = tensor(features.slice(i * D, i * D + D));
      const out = r.run('visual_soft_attention', { features: tensor(features, [GRID * GRID, D]), h, w: W, u: U, v: V, bias: BIAS, w_beta: W_BETA },
        { b_beta: B_BETA }, { alpha: 'alpha', beta: 'beta', context: 'context' });
      alpha = Array.from(out.alpha.data);
      const steps = [...state.kept, alpha];
      const pen = r.run('doubly_stochastic_penalty', { alphas: tensor(steps.flat(), [steps.length, GRID * GRID]) }, { lambda: 1 }, { penalty: 'penalty' });
      const cells = Array.from({ length: GRID }, (_, k) => String(k + 1));
      parts.push(heatmap(out.alpha.data, cells, cells, { label: 'alpha', caption: 'α over the 8 × 8 cells (hover for the numbers)' }));
      const z = el('p', 'lab-values');
      z.append('z (colour) = ', swatch(Array.from(out.context.data.subarray(0, 3)), 'the context z: β × the attended mean colour'));
      parts.push(values([{ name: 'β', label: 'beta', data: out.beta.data }]), z,
        values([{ name: 'z', label: 'context', data: out.context.data, count: D }]),
        values([{ name: `penalty over ${steps.length} step${steps.length > 1 ? 's' : ''}`, label: 'penalty', data: pen.penalty.data }]));
    }, { image: IMAGES[state.image][0], cell: state.cell, kept: state.kept.length });
    side.replaceChildren(el('p', 'cap', `query cell (${state.cell[0] + 1}, ${state.cell[1] + 1}); kept steps: ${state.kept.length}`));
    if (features) {
      const i = state.cell[1] * GRID + state.cell[0];
      side.append(swatch(features.slice(i * D, i * D + 3), 'colour of h'), ' h');
    }
    draw();
    return rec;
  }

  function load() {
    const image = new Image();
    image.addEventListener('load', () => {
      img = image;
      features = gridFeatures(image);
      update();
    });
    image.src = new URL(`../examples/${IMAGES[state.image][0]}`, import.meta.url).href;
  }

  wireCellInput(canvas, () => state.cell, (cell) => {
    if (cell[0] === state.cell[0] && cell[1] === state.cell[1]) return;
    state.cell = cell;
    update();
  });
  select.addEventListener('change', () => {
    state.image = Number(select.value);
    state.kept = [];
    features = null;
    alpha = null;
    load();
  });
  keep.addEventListener('click', () => {
    if (alpha && state.kept.length < MAX_KEPT) state.kept.push(alpha);
    update();
  });
  clear.addEventListener('click', () => {
    state.kept = [];
    update();
  });

  update();
  load();
}

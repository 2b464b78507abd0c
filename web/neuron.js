// Neuron view (as bertviz's): for one attention kind, layer, head and query token of a Transformer translation, the
// query vector q, every key vector k_j, their element-wise product q∘k_j, the score Σ(q∘k_j)/√d_head and the
// softmax weight — so a person sees which dimensions make a weight large. The vectors come from the engine
// (translate option output_qk: `qk` maps '<kind>.query' [rows, d_head] and '<kind>.key' [cols, d_head]); the
// weights are recomputed here from them and compared with the engine's map (`check()`), so the view cannot show
// vectors that do not produce the map next to them.
import { fitCanvas } from './draw.js';

const FONT = '12px system-ui, sans-serif';
const BOLD = 'bold 12px system-ui, sans-serif';
const ROW = 16;
const LABEL_W = 84;
const NUM_W = 52;
const BAR_W = 70;
const GAP = 10;

/** Value in [−1, 1] → a diverging colour: blue (negative), white (0), red (positive). */
export function divergingColor(t) {
  const x = Math.max(-1, Math.min(1, Number.isFinite(t) ? t : 0));
  const [r, g, b] = x >= 0 ? [255 - 75 * x, 255 - 200 * x, 255 - 200 * x] : [255 + 200 * x, 255 + 130 * x, 255 + 40 * x];
  return `rgb(${Math.round(r)}, ${Math.round(g)}, ${Math.round(b)})`;
}

/**
 * One head's numbers for query row i: { q (d_head), keys: [{ j, k, prod, score, weight, engine }] } with
 * weight = softmax over the keys the row may see (j ≤ i when causal) and engine = the map's own value.
 */
export function neuronRow({ q, k, dh, cols, causal, map }, i) {
  const n = causal ? Math.min(i + 1, cols) : cols;
  const qi = q.subarray(i * dh, (i + 1) * dh);
  const keys = [];
  for (let j = 0; j < n; j++) {
    const kj = k.subarray(j * dh, (j + 1) * dh);
    const prod = new Float32Array(dh);
    let dot = 0;
    for (let c = 0; c < dh; c++) { prod[c] = qi[c] * kj[c]; dot += prod[c]; }
    keys.push({ j, k: kj, prod, score: dot / Math.sqrt(dh), weight: 0, engine: map ? map[i * cols + j] : NaN });
  }
  const mx = Math.max(...keys.map((x) => x.score));
  let sum = 0;
  for (const x of keys) sum += (x.weight = Math.exp(x.score - mx));
  for (const x of keys) x.weight /= sum;
  return { q: qi, keys };
}

export class NeuronView {
  constructor(canvas, { onRead = () => {} } = {}) {
    this.canvas = canvas;
    this.onRead = onRead;
    this.model = null;
    this.query = 0;
    this.hover = null;
    canvas.tabIndex = 0;
    canvas.addEventListener('mousemove', (ev) => this.pointAt(ev));
    canvas.addEventListener('mouseleave', () => { this.hover = null; this.draw(); this.read(); });
    canvas.addEventListener('keydown', (ev) => this.key(ev));
  }

  /**
   * model: { q, k: Float32Array, dh, rows, cols, causal, map (the engine's [rows × cols] weights), queryLabels,
   * keyLabels, title }; onQuery(i) is called when the keyboard moves the query token.
   */
  set(model, query = 0, { onQuery = () => {} } = {}) {
    this.model = model;
    this.onQuery = onQuery;
    this.hover = null;
    this.show(query);
  }

  clear() {
    this.model = null;
    fitCanvas(this.canvas, 10, 10);
  }

  show(query) {
    if (!this.model) return;
    this.query = Math.max(0, Math.min(this.model.rows - 1, query));
    this.row = neuronRow(this.model, this.query);
    this.draw();
    this.read();
  }

  /** Largest |recomputed weight − engine weight| over every row of the map (0 when the vectors are right). */
  check() {
    let worst = 0;
    for (let i = 0; i < this.model.rows; i++) {
      const r = neuronRow(this.model, i);
      for (const x of r.keys) worst = Math.max(worst, Math.abs(x.weight - x.engine));
    }
    return worst;
  }

  layout() {
    const dh = this.model.dh;
    const avail = (this.canvas.parentElement?.clientWidth || 700) - LABEL_W - 2 * NUM_W - BAR_W - 5 * GAP;
    const cw = Math.max(2, Math.min(6, Math.floor(avail / (2 * dh))));
    const x0 = LABEL_W + GAP;
    const x1 = x0 + cw * dh + GAP;
    const xs = x1 + cw * dh + GAP;
    const xb = xs + NUM_W + GAP;
    return { cw, x0, x1, xs, xb, width: xb + BAR_W + NUM_W, top: 2 * ROW + 10 };
  }

  draw() {
    if (!this.model) return;
    const m = this.model;
    const L = this.layout();
    const keys = this.row.keys;
    const ctx = fitCanvas(this.canvas, L.width, L.top + keys.length * ROW + 6);
    const dark = matchMedia?.('(prefers-color-scheme: dark)').matches;
    const ink = dark ? '#e9ecef' : '#212529';
    const muted = dark ? '#adb5bd' : '#6c757d';
    ctx.clearRect(0, 0, L.width, L.top + keys.length * ROW + 6);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    const absMax = (arrs) => Math.max(1e-12, ...arrs.map((a) => a.reduce((v, x) => Math.max(v, Math.abs(x)), 0)));
    const sq = absMax([this.row.q]);
    const sk = absMax(keys.map((x) => x.k));
    const sp = absMax(keys.map((x) => x.prod));
    const strip = (arr, x, y, scale) => {
      for (let c = 0; c < arr.length; c++) {
        ctx.fillStyle = divergingColor(arr[c] / scale);
        ctx.fillRect(x + c * L.cw, y + 1, L.cw, ROW - 2);
      }
    };
    // Header: the query vector above the key column, column titles above the others.
    ctx.fillStyle = ink;
    ctx.font = BOLD;
    ctx.fillText(this.clip(ctx, `q: ${m.queryLabels[this.query] ?? this.query}`, LABEL_W), 2, ROW / 2);
    ctx.font = FONT;
    strip(this.row.q, L.x0, 0, sq);
    ctx.fillStyle = muted;
    ctx.fillText('keys k', 2, ROW + ROW / 2 + 4);
    ctx.fillText('key k_j', L.x0, ROW + ROW / 2 + 4);
    ctx.fillText('q ∘ k_j', L.x1, ROW + ROW / 2 + 4);
    ctx.fillText('q·k/√d', L.xs, ROW + ROW / 2 + 4);
    ctx.fillText('weight', L.xb, ROW + ROW / 2 + 4);
    const top = keys.reduce((b, x) => (x.weight > b.weight ? x : b), keys[0]);
    keys.forEach((x, r) => {
      const y = L.top + r * ROW;
      if (this.hover?.r === r) {
        ctx.fillStyle = dark ? 'rgba(255,255,255,0.08)' : 'rgba(0,0,0,0.06)';
        ctx.fillRect(0, y, L.width, ROW);
      }
      ctx.fillStyle = ink;
      ctx.font = x === top ? BOLD : FONT;
      ctx.fillText(this.clip(ctx, m.keyLabels[x.j] ?? String(x.j), LABEL_W - 4), 2, y + ROW / 2);
      ctx.font = FONT;
      strip(x.k, L.x0, y, sk);
      strip(x.prod, L.x1, y, sp);
      ctx.fillStyle = ink;
      ctx.fillText(x.score.toFixed(2), L.xs, y + ROW / 2);
      ctx.fillStyle = '#1c7ed6';
      ctx.fillRect(L.xb, y + 3, Math.max(1, x.weight * BAR_W), ROW - 6);
      ctx.fillStyle = ink;
      ctx.fillText(x.weight.toFixed(3), L.xb + BAR_W + 4, y + ROW / 2);
    });
    if (this.hover && this.hover.c !== undefined) {
      const { r, c, strip: s } = this.hover;
      ctx.strokeStyle = ink;
      ctx.strokeRect((s === 'prod' ? L.x1 : L.x0) + c * L.cw + 0.5, L.top + r * ROW + 0.5, L.cw, ROW - 1);
      ctx.strokeRect(L.x0 + c * L.cw + 0.5, 0.5, L.cw, ROW - 1);
    }
  }

  clip(ctx, text, w) {
    if (ctx.measureText(text).width <= w) return text;
    let s = text;
    while (s.length > 1 && ctx.measureText(`${s}…`).width > w) s = s.slice(0, -1);
    return `${s}…`;
  }

  pointAt(ev) {
    if (!this.model) return;
    const rect = this.canvas.getBoundingClientRect();
    const x = ev.clientX - rect.left;
    const y = ev.clientY - rect.top;
    const L = this.layout();
    const r = Math.floor((y - L.top) / ROW);
    if (r < 0 || r >= this.row.keys.length) { this.hover = null; this.draw(); this.read(); return; }
    const inStrip = (x0) => (x >= x0 && x < x0 + L.cw * this.model.dh ? Math.floor((x - x0) / L.cw) : -1);
    const ck = inStrip(L.x0);
    const cp = inStrip(L.x1);
    this.hover = ck >= 0 ? { r, c: ck, strip: 'key' } : cp >= 0 ? { r, c: cp, strip: 'prod' } : { r };
    this.draw();
    this.read();
  }

  key(ev) {
    if (!this.model) return;
    const keys = this.row.keys.length;
    if (ev.key === 'ArrowUp' || ev.key === 'ArrowDown') {
      this.show(this.query + (ev.key === 'ArrowUp' ? -1 : 1));
      this.onQuery?.(this.query);
    } else if (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') {
      const r = this.hover?.r ?? -1;
      const next = Math.max(0, Math.min(keys - 1, r + (ev.key === 'ArrowLeft' ? -1 : 1)));
      this.hover = { r: next };
      this.draw();
      this.read();
    } else {
      return;
    }
    ev.preventDefault();
  }

  /** The read-out line: the hovered key (and dimension), or the query's largest weight. */
  read() {
    if (!this.model) return;
    const m = this.model;
    const qLabel = m.queryLabels[this.query] ?? this.query;
    const h = this.hover;
    if (!h) {
      const top = this.row.keys.reduce((b, x) => (x.weight > b.weight ? x : b), this.row.keys[0]);
      this.onRead(`Query ‘${qLabel}’: the largest weight, ${top.weight.toFixed(3)}, goes to ‘${m.keyLabels[top.j]}’ ` +
        `(score ${top.score.toFixed(2)}). Hover a key or a cell; ArrowUp/ArrowDown change the query token.`);
      return;
    }
    const x = this.row.keys[h.r];
    let text = `‘${qLabel}’ → ‘${m.keyLabels[x.j]}’: score ${x.score.toFixed(3)}, weight ${x.weight.toFixed(4)} ` +
      `(engine's map ${x.engine.toFixed(4)})`;
    if (h.c !== undefined) {
      text += `; dimension ${h.c}: q ${this.row.q[h.c].toFixed(3)} × k ${x.k[h.c].toFixed(3)} = ${x.prod[h.c].toFixed(3)}`;
    }
    this.onRead(text);
  }
}

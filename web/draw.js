// Canvas drawings shared by the demos: a colour ramp, an attention heatmap (rows × columns with labels, hover and
// keyboard cursor) and a bertviz-like head view. Canvas, not SVG/DOM cells, so a 60×60 map stays cheap.

const RAMP = [
  [247, 251, 255], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107],
];

/** Weight in [0, 1] → 'rgb(…)' on a white-to-dark-blue ramp. */
export function rampColor(t) {
  const x = Math.max(0, Math.min(1, Number.isFinite(t) ? t : 0)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x));
  const f = x - i;
  const c = RAMP[i].map((v, k) => Math.round(v + f * (RAMP[i + 1][k] - v)));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

export const HEAD_COLORS = ['#e8590c', '#1c7ed6', '#2f9e44', '#ae3ec9', '#f08c00', '#0c8599', '#c2255c', '#5c940d'];

const FONT = '12px system-ui, sans-serif';
const BOLD = 'bold 12px system-ui, sans-serif';

/** Sets the canvas backing store to css size × devicePixelRatio and returns a context scaled to css pixels. */
export function fitCanvas(canvas, cssWidth, cssHeight) {
  const dpr = Math.min(2, globalThis.devicePixelRatio || 1);
  canvas.style.width = `${cssWidth}px`;
  canvas.style.height = `${cssHeight}px`;
  canvas.width = Math.round(cssWidth * dpr);
  canvas.height = Math.round(cssHeight * dpr);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

function clipLabel(ctx, text, maxWidth) {
  if (ctx.measureText(text).width <= maxWidth) return text;
  let s = text;
  while (s.length > 1 && ctx.measureText(`${s}…`).width > maxWidth) s = s.slice(0, -1);
  return `${s}…`;
}

/**
 * A heatmap of a [rows × cols] matrix (row-major Float32Array) with token labels. Hovering (or moving the cursor
 * with the arrow keys while the canvas has focus) highlights the cell's row and column labels and reports the
 * weight through onCursor(text).
 */
export class Heatmap {
  constructor(canvas, { onCursor = () => {}, maxWidth = () => canvas.parentElement?.clientWidth || 600 } = {}) {
    this.canvas = canvas;
    this.onCursor = onCursor;
    this.maxWidth = maxWidth;
    this.cursor = null;
    this.model = null;
    canvas.tabIndex = 0;
    canvas.addEventListener('pointermove', (ev) => this.#hover(ev));
    canvas.addEventListener('pointerleave', () => {
      if (document.activeElement === canvas) return; // keep the keyboard cursor
      this.cursor = null;
      this.draw();
      this.onCursor('');
    });
    canvas.addEventListener('keydown', (ev) => this.#key(ev));
    canvas.addEventListener('focus', () => { if (!this.cursor && this.model) { this.cursor = [0, 0]; this.draw(); this.#report(); } });
  }

  /** rowLabels.length × colLabels.length values in `data`. */
  set(model) {
    this.model = model;
    this.cursor = null;
    this.draw();
  }

  clear() {
    this.model = null;
    const ctx = this.canvas.getContext('2d');
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
  }

  draw() {
    const m = this.model;
    if (!m) return;
    const rows = m.rowLabels.length;
    const cols = m.colLabels.length;
    const probe = this.canvas.getContext('2d');
    probe.font = BOLD;
    const labelW = (labels) => Math.min(120, Math.max(24, ...labels.map((l) => probe.measureText(l).width)) + 8);
    const left = labelW(m.rowLabels);
    const top = labelW(m.colLabels) * 0.75 + 6;
    const avail = Math.max(160, this.maxWidth() - left - 8);
    const cell = Math.max(16, Math.min(34, Math.floor(avail / Math.max(1, cols)))); // wider maps scroll in their panel
    const width = left + cell * cols + 8;
    const height = top + cell * rows + 4;
    const ctx = fitCanvas(this.canvas, width, height);
    this.geom = { left, top, cell, rows, cols };
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, width, height);
    let max = 0;
    for (const v of m.data) if (v > max) max = v;
    const scale = m.normalise === false || max <= 0 ? 1 : 1 / max;
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        ctx.fillStyle = rampColor(m.data[r * cols + c] * scale);
        ctx.fillRect(left + c * cell, top + r * cell, cell - (cell > 12 ? 1 : 0), cell - (cell > 12 ? 1 : 0));
      }
    }
    const [cr, cc] = this.cursor ?? [-1, -1];
    ctx.textBaseline = 'middle';
    for (let r = 0; r < rows; r++) {
      ctx.font = r === cr ? BOLD : FONT;
      ctx.fillStyle = r === cr ? '#c92a2a' : '#1d2329';
      ctx.textAlign = 'right';
      ctx.fillText(clipLabel(ctx, m.rowLabels[r], left - 8), left - 4, top + r * cell + cell / 2);
    }
    for (let c = 0; c < cols; c++) {
      ctx.save();
      ctx.translate(left + c * cell + cell / 2, top - 4);
      ctx.rotate(-Math.PI / 3);
      ctx.font = c === cc ? BOLD : FONT;
      ctx.fillStyle = c === cc ? '#c92a2a' : '#1d2329';
      ctx.textAlign = 'left';
      ctx.fillText(clipLabel(ctx, m.colLabels[c], (top - 6) / 0.87), 0, 0);
      ctx.restore();
    }
    if (cr >= 0) {
      ctx.strokeStyle = 'rgba(201, 42, 42, 0.55)';
      ctx.lineWidth = 1;
      ctx.strokeRect(left + 0.5, top + cr * cell + 0.5, cols * cell - 1, cell - 1);
      ctx.strokeRect(left + cc * cell + 0.5, top + 0.5, cell - 1, rows * cell - 1);
      ctx.strokeStyle = '#c92a2a';
      ctx.lineWidth = 2;
      ctx.strokeRect(left + cc * cell + 1, top + cr * cell + 1, cell - 2, cell - 2);
    }
  }

  #report() {
    if (!this.cursor || !this.model) return;
    const [r, c] = this.cursor;
    const m = this.model;
    const w = m.data[r * m.colLabels.length + c];
    this.onCursor(`${m.rowName ?? 'row'} “${m.rowLabels[r]}” → ${m.colName ?? 'column'} “${m.colLabels[c]}”: weight ${w.toFixed(3)}`);
  }

  #hover(ev) {
    if (!this.model || !this.geom) return;
    const rect = this.canvas.getBoundingClientRect();
    const { left, top, cell, rows, cols } = this.geom;
    const x = ev.clientX - rect.left;
    const y = ev.clientY - rect.top;
    const c = Math.floor((x - left) / cell);
    const r = Math.floor((y - top) / cell);
    if (r < 0 || c < 0 || r >= rows || c >= cols) return;
    if (this.cursor && this.cursor[0] === r && this.cursor[1] === c) return;
    this.cursor = [r, c];
    this.draw();
    this.#report();
  }

  #key(ev) {
    if (!this.model) return;
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    if (!moves[ev.key]) return;
    ev.preventDefault();
    const [r, c] = this.cursor ?? [0, 0];
    const rows = this.model.rowLabels.length;
    const cols = this.model.colLabels.length;
    this.cursor = [Math.max(0, Math.min(rows - 1, r + moves[ev.key][0])), Math.max(0, Math.min(cols - 1, c + moves[ev.key][1]))];
    this.draw();
    this.#report();
  }
}

/**
 * Head view (after bertviz): query tokens on the left, key tokens on the right, a line per (head, query, key)
 * whose opacity is the weight. `heads` is an array of Float32Array [q × k]; `active` a Set of head indices.
 * Hovering a token (or focusing and using ArrowUp/ArrowDown) shows only that query token's lines.
 */
export class HeadView {
  constructor(canvas) {
    this.canvas = canvas;
    this.model = null;
    this.focusRow = -1;
    canvas.tabIndex = 0;
    canvas.addEventListener('pointermove', (ev) => {
      if (!this.geom) return;
      const rect = this.canvas.getBoundingClientRect();
      const y = ev.clientY - rect.top;
      const x = ev.clientX - rect.left;
      const r = Math.floor((y - this.geom.top) / this.geom.rowH);
      const row = x < rect.width / 2 && r >= 0 && r < this.model.left.length ? r : -1;
      if (row !== this.focusRow) { this.focusRow = row; this.draw(); }
    });
    canvas.addEventListener('pointerleave', () => { this.focusRow = -1; this.draw(); });
    canvas.addEventListener('keydown', (ev) => {
      if (!this.model) return;
      const n = this.model.left.length;
      if (ev.key === 'ArrowDown') this.focusRow = Math.min(n - 1, this.focusRow + 1);
      else if (ev.key === 'ArrowUp') this.focusRow = Math.max(-1, this.focusRow - 1);
      else return;
      ev.preventDefault();
      this.draw();
    });
  }

  set(model) {
    this.model = model;
    this.focusRow = -1;
    this.draw();
  }

  draw() {
    const m = this.model;
    if (!m) return;
    const rowH = 20;
    const top = 8;
    const width = Math.min(520, Math.max(300, (this.canvas.parentElement?.clientWidth || 480) - 8));
    const colW = Math.min(130, width * 0.3);
    const n = Math.max(m.left.length, m.right.length);
    const height = top * 2 + n * rowH;
    const ctx = fitCanvas(this.canvas, width, height);
    this.geom = { top, rowH };
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, width, height);
    const x0 = colW;
    const x1 = width - colW;
    const yOf = (i) => top + i * rowH + rowH / 2;
    const nk = m.right.length;
    ctx.lineWidth = 2;
    m.heads.forEach((w, h) => {
      if (!m.active.has(h)) return;
      ctx.strokeStyle = HEAD_COLORS[h % HEAD_COLORS.length];
      for (let q = 0; q < m.left.length; q++) {
        if (this.focusRow >= 0 && q !== this.focusRow) continue;
        for (let k = 0; k < nk; k++) {
          const a = w[q * nk + k];
          if (a < 0.02) continue;
          ctx.globalAlpha = Math.min(1, a * (this.focusRow >= 0 ? 1 : 0.8));
          ctx.beginPath();
          ctx.moveTo(x0 + 4, yOf(q));
          ctx.lineTo(x1 - 4, yOf(k));
          ctx.stroke();
        }
      }
    });
    ctx.globalAlpha = 1;
    ctx.textBaseline = 'middle';
    m.left.forEach((t, i) => {
      ctx.font = i === this.focusRow ? BOLD : FONT;
      ctx.fillStyle = i === this.focusRow ? '#c92a2a' : '#1d2329';
      ctx.textAlign = 'right';
      ctx.fillText(clipLabel(ctx, t, colW - 10), x0 - 4, yOf(i));
    });
    m.right.forEach((t, i) => {
      ctx.font = FONT;
      ctx.fillStyle = '#1d2329';
      ctx.textAlign = 'left';
      ctx.fillText(clipLabel(ctx, t, colW - 10), x1 + 4, yOf(i));
    });
  }
}

/** True when any pixel of the canvas is not white/transparent (used by the tests through the DOM). */
export function canvasHasInk(canvas) {
  const ctx = canvas.getContext('2d');
  const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
  for (let i = 0; i < data.length; i += 4) {
    if (data[i + 3] > 0 && (data[i] < 240 || data[i + 1] < 240 || data[i + 2] < 240)) return true;
  }
  return false;
}

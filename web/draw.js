// Canvas drawings shared by the demos: a colour ramp, an attention heatmap (rows × columns with labels, hover and
// keyboard cursor) and a bertviz-like head view. Canvas, not SVG/DOM cells, so a 60×60 map stays cheap.

const RAMP = [
  [247, 251, 255], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107],
];

/** Weight in [0, 1] → [r, g, b] on a white-to-dark-blue ramp. */
export function rampRgb(t) {
  const x = Math.max(0, Math.min(1, Number.isFinite(t) ? t : 0)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(x));
  const f = x - i;
  return RAMP[i].map((v, k) => Math.round(v + f * (RAMP[i + 1][k] - v)));
}

/** Weight in [0, 1] → 'rgb(…)' on a white-to-dark-blue ramp. */
export function rampColor(t) {
  const c = rampRgb(t);
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

/** Colour of word links (lines of the link view, dots on heatmaps). */
export const LINK_COLOR = '#e8590c';

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
 * What the heatmap and the link view share: a model drawn on a focusable canvas that reports what the pointer or the
 * keyboard selects through onCursor(text); set(model) draws a model (no selection), clear() empties the canvas and
 * sets its data-* readouts to `blank`.
 */
class CanvasView {
  constructor(canvas, blank, { onCursor = () => {}, maxWidth = () => canvas.parentElement?.clientWidth || 600 } = {}) {
    this.canvas = canvas;
    this.blank = blank;
    this.onCursor = onCursor;
    this.maxWidth = maxWidth;
    this.model = null;
    canvas.tabIndex = 0;
  }

  set(model) {
    this.model = model;
    this.unselect();
    this.draw();
  }

  clear() {
    this.model = null;
    this.boxes = null;
    Object.assign(this.canvas.dataset, this.blank);
    const ctx = this.canvas.getContext('2d');
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
  }
}

/**
 * A heatmap of a [rows × cols] matrix (row-major Float32Array) with token labels. Hovering (or moving the cursor
 * with the arrow keys while the canvas has focus) highlights the cell's row and column labels and reports the
 * weight through onCursor(text).
 */
export class Heatmap extends CanvasView {
  constructor(canvas, options) {
    super(canvas, { dims: '', marks: '0' }, options);
    this.cursor = null;
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

  /** set(model): rowLabels.length × colLabels.length values in `data`. */
  unselect() { this.cursor = null; }

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
    this.canvas.dataset.dims = `${rows}x${cols}`;
    this.canvas.dataset.marks = String(m.marks?.length ?? 0);
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
    // Marks (word links): an orange dot with a white rim, visible on light and dark cells alike.
    if (m.marks?.length) {
      const rad = Math.max(3, cell * 0.2);
      ctx.fillStyle = LINK_COLOR;
      ctx.strokeStyle = '#fff';
      ctx.lineWidth = 1.5;
      for (const [r, c] of m.marks) {
        if (r < 0 || c < 0 || r >= rows || c >= cols) continue;
        ctx.beginPath();
        ctx.arc(left + c * cell + (cell - 1) / 2, top + r * cell + (cell - 1) / 2, rad, 0, 2 * Math.PI);
        ctx.fill();
        ctx.stroke();
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
    const linked = m.marks?.some(([mr, mc]) => mr === r && mc === c) ? ' (linked)' : '';
    this.onCursor(`${m.rowName ?? 'row'} “${m.rowLabels[r]}” → ${m.colName ?? 'column'} “${m.colLabels[c]}”: weight ${w.toFixed(3)}${linked}`);
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
    this.geom = { top, rowH, width, height, colW };
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

/**
 * The head view as it is drawn now (same layout, heads, focused token), as an SVG document: a <line> per
 * (head, query, key) with its opacity, a <text> per token. Tokens are escaped, never markup.
 */
HeadView.prototype.toSvg = function toSvg() {
  const m = this.model;
  if (!m || !this.geom) return null;
  const esc = (s) => String(s).replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]);
  const { top, rowH, width, height, colW } = this.geom;
  const x0 = colW;
  const x1 = width - colW;
  const yOf = (i) => top + i * rowH + rowH / 2;
  const nk = m.right.length;
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
    'font-family="system-ui, sans-serif" font-size="12">', `<rect width="${width}" height="${height}" fill="#fff"/>`];
  m.heads.forEach((w, h) => {
    if (!m.active.has(h)) return;
    out.push(`<g stroke="${HEAD_COLORS[h % HEAD_COLORS.length]}" stroke-width="2">`);
    for (let q = 0; q < m.left.length; q++) {
      if (this.focusRow >= 0 && q !== this.focusRow) continue;
      for (let k = 0; k < nk; k++) {
        const a = w[q * nk + k];
        if (a < 0.02) continue;
        const op = Math.min(1, a * (this.focusRow >= 0 ? 1 : 0.8));
        out.push(`<line x1="${x0 + 4}" y1="${yOf(q)}" x2="${x1 - 4}" y2="${yOf(k)}" stroke-opacity="${op.toFixed(4)}"/>`);
      }
    }
    out.push('</g>');
  });
  m.left.forEach((t, i) => {
    const bold = i === this.focusRow ? ' font-weight="bold" fill="#c92a2a"' : ' fill="#1d2329"';
    out.push(`<text x="${x0 - 4}" y="${yOf(i)}" text-anchor="end" dominant-baseline="middle"${bold}>${esc(t)}</text>`);
  });
  m.right.forEach((t, i) => {
    out.push(`<text x="${x1 + 4}" y="${yOf(i)}" dominant-baseline="middle" fill="#1d2329">${esc(t)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
};

/**
 * Word links between two sentences: source words on one row, target words on another, a line per link. When the
 * rows do not fit the width, the sentences become two columns (source left, target right) instead. Hovering a word,
 * or focusing the canvas and using the arrow keys (along a sentence; across to the other one), highlights its links.
 * model: { source: [text], target: [text], links: [[s, t]], weights?: (s, t) → [0, 1] (line strength),
 *          targetProb?: [p] (a small bar under each target word), sourceName, targetName, targetNote?: (t) → text }
 */
export class LinkView extends CanvasView {
  constructor(canvas, options) {
    super(canvas, { links: '0', pairs: '' }, options);
    this.sel = null; // { side: 'source' | 'target', i }
    canvas.addEventListener('pointermove', (ev) => {
      if (!this.boxes) return;
      const rect = canvas.getBoundingClientRect();
      const hit = this.#hit(ev.clientX - rect.left, ev.clientY - rect.top);
      if (hit && (!this.sel || hit.side !== this.sel.side || hit.i !== this.sel.i)) this.#select(hit);
    });
    canvas.addEventListener('pointerleave', () => {
      if (document.activeElement === canvas) return;
      this.#select(null);
    });
    canvas.addEventListener('focus', () => { if (!this.sel && this.model?.source.length) this.#select({ side: 'source', i: 0 }); });
    canvas.addEventListener('blur', () => this.#select(null));
    canvas.addEventListener('keydown', (ev) => this.#key(ev));
  }

  unselect() { this.sel = null; }

  /** Links of word i of `side`: indices into model.links. */
  linksOf(side, i) {
    const k = side === 'source' ? 0 : 1;
    return this.model.links.flatMap((l, j) => (l[k] === i ? [j] : []));
  }

  draw() {
    const m = this.model;
    if (!m) return;
    const FONT_W = '14px system-ui, sans-serif';
    const BOLD_W = 'bold 14px system-ui, sans-serif';
    const probe = this.canvas.getContext('2d');
    probe.font = BOLD_W;
    const widthOf = (t) => Math.ceil(probe.measureText(t).width) + 10;
    const sw = m.source.map(widthOf);
    const tw = m.target.map(widthOf);
    const gap = 6;
    const rowLen = (ws) => ws.reduce((a, b) => a + b, 0) + gap * Math.max(0, ws.length - 1);
    const avail = Math.max(240, this.maxWidth() - 4);
    const wordH = 24;
    const barH = m.targetProb ? 6 : 0;
    const pad = 6;
    const rows = Math.max(rowLen(sw), rowLen(tw)) + 2 * pad <= avail;
    const boxes = { source: [], target: [] };
    let width;
    let height;
    if (rows) {
      width = avail;
      const span = Math.max(60, Math.min(130, 14 * Math.max(m.source.length, m.target.length)));
      const place = (ws, y, side) => {
        let x = Math.max(pad, (width - rowLen(ws)) / 2);
        for (const w of ws) { boxes[side].push({ x, y, w, h: wordH }); x += w + gap; }
      };
      place(sw, pad, 'source');
      place(tw, pad + wordH + span, 'target');
      height = pad + wordH + span + wordH + barH + pad;
    } else {
      width = avail;
      const colW = Math.min(Math.max(...sw, ...tw, 40), Math.floor(width * 0.36));
      const rowH = wordH + barH + 4;
      m.source.forEach((_, i) => boxes.source.push({ x: pad, y: pad + i * rowH, w: colW, h: wordH }));
      m.target.forEach((_, i) => boxes.target.push({ x: width - pad - colW, y: pad + i * rowH, w: colW, h: wordH }));
      height = pad * 2 + Math.max(m.source.length, m.target.length) * rowH;
    }
    this.boxes = boxes;
    this.layout = rows ? 'rows' : 'columns';
    const ctx = fitCanvas(this.canvas, width, height);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, width, height);

    const anchor = (side, i) => {
      const b = boxes[side][i];
      if (rows) return side === 'source' ? [b.x + b.w / 2, b.y + b.h] : [b.x + b.w / 2, b.y];
      return side === 'source' ? [b.x + b.w, b.y + b.h / 2] : [b.x, b.y + b.h / 2];
    };
    const hot = this.sel ? new Set(this.linksOf(this.sel.side, this.sel.i)) : null;
    const partner = { source: new Set(), target: new Set() };
    if (hot) for (const j of hot) { partner.source.add(m.links[j][0]); partner.target.add(m.links[j][1]); }
    const linked = { source: new Set(m.links.map((l) => l[0])), target: new Set(m.links.map((l) => l[1])) };
    let drawn = 0;
    const order = m.links.map((_, j) => j).sort((a, b) => Number(hot?.has(a) ?? 0) - Number(hot?.has(b) ?? 0));
    ctx.lineCap = 'round';
    for (const j of order) {
      const [s, t] = m.links[j];
      if (!boxes.source[s] || !boxes.target[t]) continue;
      const [x0, y0] = anchor('source', s);
      const [x1, y1] = anchor('target', t);
      const strength = m.weights ? Math.max(0.35, Math.min(1, m.weights(s, t))) : 1;
      const isHot = hot?.has(j);
      ctx.strokeStyle = isHot ? '#c92a2a' : LINK_COLOR;
      ctx.globalAlpha = hot ? (isHot ? 1 : 0.25) : 0.35 + 0.6 * strength;
      ctx.lineWidth = isHot ? 3.5 : 1.5 + 1.5 * strength;
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      if (rows) {
        const my = (y0 + y1) / 2;
        ctx.bezierCurveTo(x0, my, x1, my, x1, y1);
      } else {
        const mx = (x0 + x1) / 2;
        ctx.bezierCurveTo(mx, y0, mx, y1, x1, y1);
      }
      ctx.stroke();
      drawn++;
    }
    ctx.globalAlpha = 1;
    this.canvas.dataset.links = String(drawn);
    this.canvas.dataset.pairs = m.links.map(([s, t]) => `${s}-${t}`).join(' ');
    this.canvas.dataset.layout = this.layout;

    ctx.textBaseline = 'middle';
    for (const side of ['source', 'target']) {
      const words = side === 'source' ? m.source : m.target;
      words.forEach((text, i) => {
        const b = boxes[side][i];
        const selected = this.sel && this.sel.side === side && this.sel.i === i;
        const isPartner = partner[side].has(i);
        ctx.fillStyle = selected ? '#fff4e6' : isPartner ? '#fff5f5' : '#f8f9fa';
        ctx.strokeStyle = selected || isPartner ? '#c92a2a' : linked[side].has(i) ? '#adb5bd' : '#dee2e6';
        ctx.lineWidth = selected ? 2 : 1;
        ctx.beginPath();
        if (ctx.roundRect) ctx.roundRect(b.x + 0.5, b.y + 0.5, b.w - 1, b.h - 1, 4);
        else ctx.rect(b.x + 0.5, b.y + 0.5, b.w - 1, b.h - 1);
        ctx.fill();
        ctx.stroke();
        ctx.font = selected || isPartner ? BOLD_W : FONT_W;
        ctx.fillStyle = selected || isPartner ? '#c92a2a' : linked[side].has(i) ? '#1d2329' : '#868e96';
        ctx.textAlign = rows ? 'center' : side === 'source' ? 'right' : 'left';
        const tx = rows ? b.x + b.w / 2 : side === 'source' ? b.x + b.w - 5 : b.x + 5;
        ctx.fillText(clipLabel(ctx, text, b.w - 8), tx, b.y + b.h / 2);
        if (side === 'target' && m.targetProb) {
          const p = Math.max(0, Math.min(1, m.targetProb[i] ?? 0));
          ctx.fillStyle = '#e9ecef';
          ctx.fillRect(b.x + 2, b.y + b.h + 1, b.w - 4, barH - 2);
          ctx.fillStyle = '#2f9e44';
          ctx.fillRect(b.x + 2, b.y + b.h + 1, (b.w - 4) * p, barH - 2);
        }
      });
    }
  }

  #hit(x, y) {
    for (const side of ['source', 'target']) {
      const i = this.boxes[side].findIndex((b) => x >= b.x - 3 && x <= b.x + b.w + 3 && y >= b.y - 3 && y <= b.y + b.h + 8);
      if (i >= 0) return { side, i };
    }
    return null;
  }

  #select(sel) {
    this.sel = sel;
    this.draw();
    if (!sel || !this.model) { this.onCursor(''); return; }
    const m = this.model;
    const other = sel.side === 'source' ? 'target' : 'source';
    const k = sel.side === 'source' ? 1 : 0;
    const names = { source: m.sourceName ?? 'source', target: m.targetName ?? 'target' };
    const words = { source: m.source, target: m.target };
    const partners = this.linksOf(sel.side, sel.i).map((j) => `“${words[other][m.links[j][k]]}”`);
    const note = sel.side === 'target' && m.targetNote ? ` (${m.targetNote(sel.i)})` : '';
    this.onCursor(`${names[sel.side]} “${words[sel.side][sel.i]}”${note} ↔ ` +
      `${partners.length ? `${names[other]} ${partners.join(', ')}` : 'no link'}`);
  }

  #key(ev) {
    if (!this.model) return;
    const along = this.layout === 'rows' ? ['ArrowLeft', 'ArrowRight'] : ['ArrowUp', 'ArrowDown'];
    const across = this.layout === 'rows' ? ['ArrowUp', 'ArrowDown'] : ['ArrowLeft', 'ArrowRight'];
    const sel = this.sel ?? { side: 'source', i: 0 };
    const n = (side) => (side === 'source' ? this.model.source.length : this.model.target.length);
    let next;
    if (along.includes(ev.key)) {
      const d = ev.key === along[0] ? -1 : 1;
      next = { side: sel.side, i: Math.max(0, Math.min(n(sel.side) - 1, sel.i + d)) };
    } else if (across.includes(ev.key)) {
      const side = ev.key === across[0] ? 'source' : 'target';
      if (side === sel.side) next = sel;
      else {
        // To the first word linked to the current one, else the same position.
        const j = this.linksOf(sel.side, sel.i)[0];
        const i = j !== undefined ? this.model.links[j][side === 'source' ? 0 : 1] : Math.min(n(side) - 1, sel.i);
        next = { side, i: Math.max(0, i) };
      }
    } else if (ev.key === 'Home' || ev.key === 'End') {
      next = { side: sel.side, i: ev.key === 'Home' ? 0 : n(sel.side) - 1 };
    } else {
      return;
    }
    ev.preventDefault();
    if (n(next.side) > 0) this.#select(next);
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

// Model view (after bertviz's): every layer × head of every attention kind of a result as a grid of small maps, one
// block per kind (rows = layers, columns = heads), with six small bars of head statistics under each map
// (headstats.js). Each thumbnail is drawn once into its own canvas when the result arrives (or the grid's width
// changes a lot); hovering only moves a CSS outline and rewrites one line of text, so it stays fluid with dozens of maps.
// Thumbnails are buttons: click or Enter opens the map in the demo's large view (onOpen); the arrow keys move
// between them (one tab stop for the whole grid), Home/End go to the first/last one. A block with `wrap` (the
// captioner: one map per generated word, no layers or heads) lays its maps out in wrapping rows, each under its label.
import { fitCanvas, rampRgb } from './draw.js';
import { headStats, statBars, formatStats, STAT_KEYS, STAT_INFO } from './headstats.js';

const BAR_H = 16;
const BAR_COLOR = '#495057';

/** The css height of a map's drawing in a thumbnail of `size` px (a one-row map, such as a hop, gets 20 px). */
function mapHeight({ rows, cols }, size) {
  return Math.max(rows === 1 ? 20 : 12, Math.round((size / Math.max(rows, cols)) * rows));
}

/** Draws one map and its statistic bars into `canvas` (size: the map's longer side in css px). */
function drawThumb(canvas, map, size) {
  const { rows, cols, data } = map;
  const cell = size / Math.max(rows, cols);
  const w = Math.max(1, Math.round(cell * cols));
  const mapH = mapHeight(map, size);
  const width = Math.max(w, size);
  const height = mapH + 3 + BAR_H;
  const ctx = fitCanvas(canvas, width, height);
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, width, height);
  // The map: one pixel per weight in a small bitmap, scaled up without smoothing (÷ the map's max, as the heatmap).
  // A map with more rows or columns than the thumbnail has pixels (a long paragraph) is max-pooled to the
  // thumbnail's size first, so that its peaks stay visible instead of falling between sampled pixels.
  let max = 0;
  for (let i = 0; i < rows * cols; i++) if (data[i] > max) max = data[i];
  const pw = Math.min(cols, w);
  const ph = Math.min(rows, mapH);
  const pooled = pw === cols && ph === rows ? data : new Float32Array(pw * ph);
  if (pooled !== data) {
    for (let r = 0; r < rows; r++) {
      const pr = Math.min(ph - 1, Math.floor((r * ph) / rows));
      for (let c = 0; c < cols; c++) {
        const pc = Math.min(pw - 1, Math.floor((c * pw) / cols));
        const v = data[r * cols + c];
        if (v > pooled[pr * pw + pc]) pooled[pr * pw + pc] = v;
      }
    }
  }
  const small = new OffscreenCanvas(pw, ph);
  const sctx = small.getContext('2d');
  const px = sctx.createImageData(pw, ph);
  for (let i = 0; i < pw * ph; i++) {
    const [r, g, b] = rampRgb(max > 0 ? pooled[i] / max : 0);
    px.data[i * 4] = r;
    px.data[i * 4 + 1] = g;
    px.data[i * 4 + 2] = b;
    px.data[i * 4 + 3] = 255;
  }
  sctx.putImageData(px, 0, 0);
  ctx.imageSmoothingEnabled = false;
  const x = Math.round((width - w) / 2);
  ctx.drawImage(small, x, 0, w, mapH);
  ctx.strokeStyle = '#ced4da';
  ctx.lineWidth = 1;
  ctx.strokeRect(x + 0.5, 0.5, w - 1, mapH - 1);
  // Six bars: entropy ÷ log₂ n, distance ÷ (n − 1), four shares; a short dash where a statistic does not apply.
  const bars = statBars(map.stats, map.n ?? cols);
  const y0 = mapH + 3;
  const bw = width / STAT_KEYS.length;
  ctx.fillStyle = '#f1f3f5';
  ctx.fillRect(0, y0, width, BAR_H);
  STAT_KEYS.forEach((k, i) => {
    const v = bars[k];
    const bx = i * bw + 1;
    if (v === null) {
      ctx.fillStyle = '#adb5bd';
      ctx.fillRect(bx + bw * 0.25, y0 + BAR_H - 2, bw * 0.5 - 2, 1);
      return;
    }
    const h = Math.max(1, Math.round(v * BAR_H));
    ctx.fillStyle = BAR_COLOR;
    ctx.fillRect(bx, y0 + BAR_H - h, bw - 2, h);
  });
}

/**
 * blocks: [{ name, title, headName ('head' | 'hop' | 'word'), self (bool), wrap (bool), cells (bool: each map is one
 * distribution over its rows × cols cells, an image grid), layers: [{ layer, maps: [{
 * rows, cols, data, rowLabels, colLabels, keys, label }] }] }] — `keys`: the raw column tokens for the statistics;
 * `label`: a wrap block's caption for the map (the word).
 * onOpen(sel): a thumbnail was clicked or Enter pressed; sel = { name, layer, head, map }.
 */
export class ModelView {
  constructor(root, { readout = null, onOpen = () => {} } = {}) {
    this.root = root;
    this.readout = readout;
    this.onOpen = onOpen;
    this.blocks = [];
    this.thumbs = []; // [{ el, b, r, c, map, where }]
    this.selected = null; // { name, layer, head }
    this.size = 0;
    root.addEventListener('keydown', (ev) => this.#key(ev));
    root.addEventListener('pointerleave', () => this.#read(null));
    // Redrawn when the grid's width changes by 40 px or more (a rotated phone, a panel shown after the maps were set).
    this.builtWidth = 0;
    new ResizeObserver(() => {
      const w = this.root.clientWidth;
      if (!this.blocks.length || w === 0 || Math.abs(w - this.builtWidth) < 40) return;
      this.#build();
    }).observe(root);
  }

  set(blocks) {
    this.blocks = blocks.map((b) => ({
      ...b,
      layers: b.layers.map((l) => ({
        ...l,
        maps: l.maps.map((m, head) => {
          // An image grid (`cells`: the captioner's 11 × 11, the shapes model's 7 × 7) is one distribution over all its cells, not one per row.
          const flat = b.cells ? { rows: 1, cols: m.rows * m.cols, data: m.data } : m;
          return { ...m, name: b.name, layer: l.layer, head, n: flat.cols,
            stats: headStats(flat, { keys: b.cells ? null : m.keys ?? m.colLabels, self: b.self }) };
        }),
      })),
    }));
    if (this.selected && !this.find(this.selected)) this.selected = null;
    this.#build();
  }

  clear() {
    this.blocks = [];
    this.thumbs = [];
    this.selected = null;
    this.root.replaceChildren();
    this.root.dataset.thumbs = '0';
    this.#read(null);
  }

  /** Every map, flat, in display order (with name, layer, head, stats). */
  maps() {
    return this.blocks.flatMap((b) => b.layers.flatMap((l) => l.maps));
  }

  find({ name, layer, head }) {
    return this.thumbs.find((t) => t.map.name === name && t.map.layer === layer && t.map.head === head) ?? null;
  }

  /** Marks a map as selected (no open); returns whether it exists. */
  select(sel, { focus = false } = {}) {
    const t = sel && this.find(sel);
    this.selected = t ? { name: t.map.name, layer: t.map.layer, head: t.map.head } : null;
    for (const x of this.thumbs) {
      const on = x === t;
      if (on) x.el.setAttribute('aria-current', 'true'); else x.el.removeAttribute('aria-current');
    }
    this.#roving(t ?? this.thumbs[0]);
    if (t && focus) t.el.focus();
    this.#read(null);
    return Boolean(t);
  }

  /** The selected map (or null). */
  selectedMap() {
    return this.selected ? this.find(this.selected)?.map ?? null : null;
  }

  /** Thumbnail size: the largest (64–96 px; strips to 200) that puts as many blocks side by side as possible, else down to 32 px. */
  #size() {
    const avail = Math.max(200, this.root.clientWidth - 4);
    const grids = this.blocks.filter((b) => !b.wrap);
    if (!grids.length) return Math.max(48, Math.min(80, Math.floor(avail / 4) - 12));
    const maxHeads = Math.max(1, ...grids.map((b) => Math.max(...b.layers.map((l) => l.maps.length))));
    const EXTRA = 9; // a thumbnail's padding and border (6) and the grid gap (3)
    const HEADER = 36; // the layer label column and its gap
    const BETWEEN = 22; // between blocks (1.25rem) and a little slack
    const sizeFor = (perRow) => Math.floor(((avail - (perRow - 1) * BETWEEN) / perRow - HEADER) / maxHeads - EXTRA);
    // One-row maps (the sentiment hops) are strips: they may be wider, so that each word's cell stays visible.
    const cap = grids.every((b) => b.layers.every((l) => l.maps.every((m) => m.rows === 1))) ? 200 : 96;
    for (let perRow = grids.length; perRow >= 1; perRow--) {
      const s = sizeFor(perRow);
      if (s >= 64) return Math.min(cap, s);
    }
    return Math.max(32, Math.min(cap, sizeFor(1)));
  }

  /** One thumbnail button (its canvas drawn now) and its record in this.thumbs. */
  #thumb(b, bi, l, ri, m, ci, size) {
    const el = document.createElement('button');
    el.type = 'button';
    el.className = 'mv-thumb';
    el.tabIndex = -1;
    el.dataset.kind = b.name;
    el.dataset.layer = String(l.layer);
    el.dataset.head = String(m.head);
    el.dataset.dims = `${m.rows}x${m.cols}`;
    el.dataset.stats = JSON.stringify(m.stats);
    const name = b.headName ?? 'head';
    const where = b.wrap
      ? `${b.title}, ${name} ${m.head + 1}${m.label ? ` ‘${m.label}’` : ''}`
      : `${b.title}, ${b.layers.length > 1 ? `layer ${l.layer + 1}, ` : ''}${name} ${m.head + 1}`;
    el.setAttribute('aria-label', `${where} (${m.rows} × ${m.cols}): ${formatStats(m.stats, { applicable: b.cells })}`);
    const canvas = document.createElement('canvas');
    canvas.setAttribute('aria-hidden', 'true');
    drawThumb(canvas, m, size);
    el.append(canvas);
    const t = { el, b: bi, r: ri, c: ci, map: m, where, cells: Boolean(b.cells) };
    el.addEventListener('click', () => this.#open(t));
    el.addEventListener('pointerenter', () => this.#read(t));
    el.addEventListener('focus', () => { this.#roving(t); this.#read(t); });
    this.thumbs.push(t);
    return el;
  }

  #build() {
    this.builtWidth = this.root.clientWidth;
    const size = this.#size();
    this.size = size;
    this.thumbs = [];
    const blocksEl = this.blocks.map((b, bi) => {
      const box = document.createElement('div');
      box.className = b.wrap ? 'mv-block mv-wrap' : 'mv-block';
      box.setAttribute('role', 'group');
      const heads = Math.max(...b.layers.map((l) => l.maps.length));
      const name = b.headName ?? 'head';
      const title = document.createElement('h4');
      const count = `${heads} ${name}${heads > 1 ? 's' : ''}`;
      title.textContent = `${b.title} (${b.layers.length > 1 ? `${b.layers.length} layers × ${count}` : count})`;
      box.setAttribute('aria-label', title.textContent);
      box.dataset.kind = b.name;
      const grid = document.createElement('div');
      if (b.wrap) {
        // One labelled thumbnail per map, in rows that wrap with the width.
        grid.className = 'mv-flow';
        b.layers.forEach((l, ri) => l.maps.forEach((m, ci) => {
          const cell = document.createElement('div');
          cell.className = 'mv-item';
          const lab = document.createElement('span');
          lab.className = 'mv-col';
          lab.textContent = m.label ?? `${ci + 1}`;
          lab.setAttribute('aria-hidden', 'true');
          cell.append(lab, this.#thumb(b, bi, l, ri, m, ci, size));
          grid.append(cell);
        }));
      } else {
        grid.className = 'mv-grid';
        grid.style.gridTemplateColumns = `auto repeat(${heads}, ${size + 6}px)`;
        grid.append(document.createElement('span'));
        for (let h = 0; h < heads; h++) {
          const c = document.createElement('span');
          c.className = 'mv-col';
          c.textContent = `${name === 'head' ? 'H' : name}${h + 1}`;
          c.setAttribute('aria-hidden', 'true');
          grid.append(c);
        }
        b.layers.forEach((l, ri) => {
          const lab = document.createElement('span');
          lab.className = 'mv-row';
          lab.textContent = b.layers.length > 1 || l.layer > 0 ? `L${l.layer + 1}` : '';
          lab.setAttribute('aria-hidden', 'true');
          grid.append(lab);
          l.maps.forEach((m, ci) => grid.append(this.#thumb(b, bi, l, ri, m, ci, size)));
          for (let h = l.maps.length; h < heads; h++) grid.append(document.createElement('span'));
        });
      }
      box.append(title, grid);
      return box;
    });
    this.root.replaceChildren(...blocksEl);
    this.root.dataset.thumbs = String(this.thumbs.length);
    this.select(this.selected);
  }

  #open(t) {
    this.select({ name: t.map.name, layer: t.map.layer, head: t.map.head });
    this.#roving(t);
    this.onOpen({ name: t.map.name, layer: t.map.layer, head: t.map.head, map: t.map });
  }

  #roving(t) {
    for (const x of this.thumbs) x.el.tabIndex = x === t ? 0 : -1;
  }

  /** The read-out line: the hovered/focused map's statistics, else the selected one's, else a hint. */
  #read(t) {
    if (!this.readout) return;
    const s = t ?? (this.selected && this.find(this.selected));
    this.readout.textContent = s ? `${s.where} (${s.map.rows} × ${s.map.cols}): ${formatStats(s.map.stats, { applicable: s.cells })}`
      : this.thumbs.length ? 'Hover or focus a map for its statistics; click it (or press Enter) to open it large.' : '';
  }

  /** In a wrap block: the thumbnail of the visual row above (-1) or below (+1) `t`, nearest in x. */
  #wrapRow(t, dir) {
    const same = this.thumbs.filter((x) => x.b === t.b);
    const box = (x) => x.el.getBoundingClientRect();
    const me = box(t.el);
    const rows = same.filter((x) => (dir > 0 ? box(x.el).top > me.bottom - 2 : box(x.el).bottom < me.top + 2));
    if (!rows.length) return null;
    const edge = dir > 0 ? Math.min(...rows.map((x) => box(x.el).top)) : Math.max(...rows.map((x) => box(x.el).top));
    const row = rows.filter((x) => Math.abs(box(x.el).top - edge) < 2);
    const cx = me.left + me.width / 2;
    return row.reduce((a, x) => (Math.abs(box(x.el).left + box(x.el).width / 2 - cx) < Math.abs(box(a.el).left + box(a.el).width / 2 - cx) ? x : a));
  }

  #key(ev) {
    const i = this.thumbs.findIndex((t) => t.el === document.activeElement);
    if (i < 0) return;
    const t = this.thumbs[i];
    const at = (b, r, c) => this.thumbs.find((x) => x.b === b && x.r === r && x.c === c);
    const wrap = this.blocks[t.b].wrap;
    let next = null;
    if (wrap && (ev.key === 'ArrowRight' || ev.key === 'ArrowLeft')) {
      next = this.thumbs[i + (ev.key === 'ArrowRight' ? 1 : -1)] ?? null;
    } else if (wrap && (ev.key === 'ArrowDown' || ev.key === 'ArrowUp')) {
      const dir = ev.key === 'ArrowDown' ? 1 : -1;
      next = this.#wrapRow(t, dir) ?? this.thumbs.find((x) => x.b === t.b + dir) ?? null;
    } else if (ev.key === 'ArrowRight') next = at(t.b, t.r, t.c + 1) ?? at(t.b + 1, Math.min(t.r, this.blocks[t.b + 1]?.layers.length - 1), 0);
    else if (ev.key === 'ArrowLeft') {
      next = at(t.b, t.r, t.c - 1);
      if (!next && t.b > 0) {
        const pb = this.blocks[t.b - 1];
        const r = Math.min(t.r, pb.layers.length - 1);
        next = at(t.b - 1, r, pb.layers[r].maps.length - 1);
      }
    } else if (ev.key === 'ArrowDown') next = at(t.b, t.r + 1, t.c) ?? at(t.b + 1, 0, Math.min(t.c, this.blocks[t.b + 1]?.layers[0].maps.length - 1));
    else if (ev.key === 'ArrowUp') {
      next = at(t.b, t.r - 1, t.c);
      if (!next && t.b > 0) {
        const pb = this.blocks[t.b - 1];
        const r = pb.layers.length - 1;
        next = at(t.b - 1, r, Math.min(t.c, pb.layers[r].maps.length - 1));
      }
    } else if (ev.key === 'Home') next = this.thumbs[0];
    else if (ev.key === 'End') next = this.thumbs[this.thumbs.length - 1];
    else return;
    ev.preventDefault();
    if (next) next.el.focus();
  }

  /** All thumbnails with their titles and labels in one canvas (the PNG export), under `heading` (model and input). */
  toCanvas({ heading = '' } = {}) {
    if (!this.thumbs.length) return null;
    const pad = 10;
    const headH = heading ? 24 : 0;
    const titleH = 22;
    const colH = 16;
    const labW = 30;
    const cellW = this.size + 6;
    const thumbH = (m) => mapHeight(m, this.size) + 3 + BAR_H;
    const WRAP = 8; // maps per row of a wrap block
    const layout = this.blocks.map((b) => {
      if (b.wrap) {
        const maps = b.layers.flatMap((l) => l.maps);
        const perRow = Math.min(WRAP, maps.length);
        const rows = Math.ceil(maps.length / perRow);
        const rowH = Array.from({ length: rows }, (_, r) => colH + Math.max(...maps.slice(r * perRow, (r + 1) * perRow).map(thumbH)) + 6);
        return { b, wrap: true, perRow, rowH, w: perRow * cellW, h: titleH + rowH.reduce((a, c) => a + c, 0) };
      }
      const heads = Math.max(...b.layers.map((l) => l.maps.length));
      const rowH = b.layers.map((l) => Math.max(...l.maps.map(thumbH)) + 6);
      return { b, heads, rowH, w: labW + heads * cellW, h: titleH + colH + rowH.reduce((a, c) => a + c, 0) };
    });
    const legendH = 20;
    const between = 24;
    // Blocks side by side, as on a wide screen (a block that would pass 1600 px starts a new row).
    let x = pad;
    let y = pad + headH;
    let rowH = 0;
    let width = 0;
    for (const l of layout) {
      if (x > pad && x + l.w > 1600) { x = pad; y += rowH + 10; rowH = 0; }
      l.x = x;
      l.y = y;
      x += l.w + between;
      rowH = Math.max(rowH, l.h);
      width = Math.max(width, l.x + l.w + pad);
    }
    const legendY = y + rowH + 10;
    const legend = this.blocks.every((b) => b.cells)
      ? 'Cells: attention ÷ the map\'s maximum (white 0 → dark blue 1). First bar: entropy ÷ log₂ of the number of cells; the text statistics do not apply (dashes)'
      : `Cells: attention ÷ the map's maximum (white 0 → dark blue 1). Bars: ${STAT_KEYS.map((s) => `${STAT_INFO[s].short} ${STAT_INFO[s].label}`).join(', ')} (entropy ÷ log₂ n, distance ÷ (n − 1)); a dash: does not apply`;
    const probe = document.createElement('canvas').getContext('2d');
    probe.font = '11px system-ui, sans-serif';
    width = Math.max(width, Math.ceil(probe.measureText(legend).width) + 2 * pad); // the legend line
    probe.font = '13px system-ui, sans-serif';
    const head = heading.length > 200 ? `${heading.slice(0, 199)}…` : heading;
    width = Math.max(width, Math.ceil(probe.measureText(head).width) + 2 * pad);
    const height = legendY + legendH + pad;
    const c = document.createElement('canvas');
    const ctx = fitCanvas(c, width, height);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, width, height);
    ctx.textBaseline = 'middle';
    if (head) {
      ctx.fillStyle = '#1d2329';
      ctx.font = '13px system-ui, sans-serif';
      ctx.fillText(head, pad, pad + headH / 2 - 2);
    }
    const canvasOf = (t) => {
      const cv = t.el.querySelector('canvas');
      return { cv, w: parseFloat(cv.style.width), h: parseFloat(cv.style.height) };
    };
    for (const l of layout) {
      const { b } = l;
      const bx = l.x;
      const by = l.y;
      const thumbs = this.thumbs.filter((t) => t.map.name === b.name);
      ctx.fillStyle = '#1d2329';
      ctx.font = 'bold 13px system-ui, sans-serif';
      ctx.textAlign = 'left';
      ctx.fillText(b.title, bx, by + titleH / 2);
      ctx.font = '11px system-ui, sans-serif';
      ctx.textAlign = 'center';
      if (l.wrap) {
        let ry = by + titleH;
        thumbs.forEach((t, k) => {
          const r = Math.floor(k / l.perRow);
          const cx = bx + (k % l.perRow) * cellW;
          if (k > 0 && k % l.perRow === 0) ry += l.rowH[r - 1];
          ctx.fillStyle = '#1d2329';
          ctx.fillText(String(t.map.label ?? k + 1).slice(0, 14), cx + cellW / 2, ry + colH / 2);
          const { cv, w, h } = canvasOf(t);
          ctx.drawImage(cv, cx + (cellW - w) / 2, ry + colH, w, h);
        });
        continue;
      }
      const name = b.headName ?? 'head';
      for (let h = 0; h < l.heads; h++) ctx.fillText(`${name === 'head' ? 'H' : name}${h + 1}`, bx + labW + h * cellW + cellW / 2, by + titleH + colH / 2);
      let ry = by + titleH + colH;
      b.layers.forEach((layer, ri) => {
        ctx.textAlign = 'left';
        if (b.layers.length > 1) ctx.fillText(`L${layer.layer + 1}`, bx, ry + 12);
        layer.maps.forEach((m, ci) => {
          const t = thumbs.find((x) => x.map.layer === m.layer && x.map.head === m.head);
          const { cv, w, h } = canvasOf(t);
          ctx.drawImage(cv, bx + labW + ci * cellW + (cellW - w) / 2, ry, w, h);
        });
        ctx.textAlign = 'center';
        ry += l.rowH[ri];
      });
    }
    y = legendY;
    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'left';
    ctx.fillStyle = '#5c6770';
    ctx.fillText(legend, pad, y + legendH / 2);
    return c;
  }
}

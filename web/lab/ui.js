// Building blocks of the lab's panels: the panel itself, sliders and text boxes with labels, bars, heatmaps and
// shaded words, and the recorder through which every op runs.
//
// Each panel is an <article class="… lab-panel" data-op="<its main op>" data-ops="<every op it runs>"> whose
// drawing (.weights) carries, after each update,
//   data-weights  JSON { label: number[] }: every output the panel draws, exactly as the op returned it (a label
//                 that several calls show holds their outputs one after another, in call order);
//   data-calls    JSON [{ op, inputs: { name: { dims, data } }, params, show: { label: output } }]: the calls that
//                 produced them, so that anyone (the e2e test) can run the same ops on the same inputs;
// and the panel carries data-input, JSON of what the person set (points, words, numbers, slider positions).
// Every number drawn has data-k="label:index" and shows the value of data-weights[label][index] (its text or its
// title).
import { attention } from '../../wasm/index.js';
import { rampColor } from '../draw.js';

export const fmt = (x) => (Number.isFinite(x) ? x.toFixed(3) : String(x));

export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Runs ops and remembers their inputs and the outputs a panel draws. */
export class Recorder {
  constructor() {
    this.calls = [];
    this.weights = {};
  }

  /** Runs `op`; `show` maps a drawing label to the output it draws. Returns the op's outputs. */
  run(op, inputs, params = {}, show = {}) {
    const out = attention.run(op, inputs, params);
    const record = { op, inputs: {}, params, show };
    for (const [name, t] of Object.entries(inputs)) record.inputs[name] = { dims: t.dims, data: Array.from(t.data) };
    this.calls.push(record);
    for (const [label, name] of Object.entries(show)) this.weights[label] = [...(this.weights[label] ?? []), ...out[name].data];
    return out;
  }
}

/**
 * A panel in `parent`: title with paper, formula, a row of controls (.knobs), the drawing (.weights) and a note.
 * `cls` keeps the classes the first eight panels always had (.mech: one series of bars, .mech-x: several).
 */
export function makePanel(parent, { op, ops, title, paper, formula, note, cls = 'mech-n' }) {
  const box = el('article', `${cls} lab-panel`);
  box.dataset.op = op;
  box.dataset.ops = (ops ?? [op]).join(' ');
  const knobs = el('div', 'knobs');
  const drawing = el('div', 'weights');
  box.append(el('h3', '', `${title} — ${paper}`), el('p', 'formula', formula), knobs, drawing);
  if (note) box.append(el('p', 'note', note));
  parent.append(box);
  return {
    box,
    knobs,
    drawing,
    /** Draws with `draw(recorder, drawing)` and publishes what it ran. */
    render(draw, input) {
      const rec = new Recorder();
      const parts = [];
      try {
        draw(rec, parts);
      } catch (err) {
        parts.length = 0;
        parts.push(el('p', 'msg error', err.message));
      }
      drawing.replaceChildren(...parts);
      drawing.dataset.weights = JSON.stringify(rec.weights);
      drawing.dataset.calls = JSON.stringify(rec.calls);
      box.dataset.input = JSON.stringify(input ?? null);
      return rec;
    },
  };
}

/** A labelled range slider; `onInput(value)` on every change (arrow keys work, as for any range input). */
export function slider(parent, { label, aria, min, max, step = 1, value, onInput }) {
  const wrap = el('label');
  const out = el('output', '', String(value));
  const input = Object.assign(document.createElement('input'), { type: 'range', min, max, step, value });
  input.setAttribute('aria-label', aria);
  input.addEventListener('input', () => {
    out.textContent = input.value;
    onInput(Number(input.value));
  });
  wrap.append(`${label} `, input, out);
  parent.append(wrap);
  return {
    input,
    setMax(m) {
      input.max = String(m);
      if (Number(input.value) > m) input.value = String(m);
      out.textContent = input.value;
      return Number(input.value);
    },
  };
}

/** A labelled text box (id: lab-<aria, slugged>); `onInput(text)` as the person types. What is typed is only ever
 * read as words or numbers and shown as text. */
export function textBox(parent, { label, aria, value, onInput, wide = true, rows = 0 }) {
  const wrap = el('label', wide ? 'text wide' : 'text');
  const input = rows ? Object.assign(document.createElement('textarea'), { rows, value, spellcheck: false })
    : Object.assign(document.createElement('input'), { type: 'text', value, spellcheck: false });
  input.id = `lab-${aria.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')}`;
  input.setAttribute('aria-label', aria);
  input.addEventListener('input', () => onInput(input.value));
  wrap.append(`${label} `, input);
  parent.append(wrap);
  return input;
}

export function checkbox(parent, { label, aria, checked, onChange }) {
  const wrap = el('label');
  const input = Object.assign(document.createElement('input'), { type: 'checkbox', checked });
  input.setAttribute('aria-label', aria);
  input.addEventListener('change', () => onChange(input.checked));
  wrap.append(input, ` ${label}`);
  parent.append(wrap);
  return input;
}

/**
 * Horizontal bars, one row per item: `series` [{ label, data, title }] share each row's track; the numbers at
 * the right are those of series[numbers] (or none when numbers < 0). Same markup as the lab always had.
 */
export function bars(rowLabels, series, { numbers = 0, caption } = {}) {
  const box = el('div');
  if (caption) box.append(el('p', 'cap', caption));
  const grid = el('div', rowLabels.some((r) => r.length > 3) ? 'bars words' : 'bars');
  rowLabels.forEach((name, i) => {
    const track = el('div', 'track');
    series.forEach((s, k) => {
      const fill = el('div', `fill s${k}`);
      fill.style.height = `${100 / series.length}%`;
      fill.style.width = `${(100 * Math.max(0, Math.min(1, s.data[i]))).toFixed(1)}%`;
      track.append(fill);
    });
    track.title = series.map((s) => `${s.title ?? s.label}: ${fmt(s.data[i])}`).join(', ');
    const num = el('span', 'num', numbers >= 0 ? fmt(series[numbers].data[i]) : '');
    if (numbers >= 0 && series[numbers].label) num.dataset.k = `${series[numbers].label}:${i}`;
    grid.append(el('span', 'row-label', name), track, num);
  });
  box.append(grid);
  if (series.length > 1) box.append(legend(series.map((s) => s.title ?? s.label), numbers >= 0 ? `numbers: ${series[numbers].title ?? series[numbers].label}` : ''));
  return box;
}

export function legend(names, note = '') {
  const p = el('p', 'legend');
  names.forEach((n, k) => p.append(el('span', `key s${k}`, n)));
  if (note) p.append(el('span', '', `(${note})`));
  return p;
}

/**
 * A heatmap of a row-major [rows × cols] matrix as a grid of cells coloured white → dark blue between lo and hi
 * (default 0 and the largest value; lo 'min': the smallest); each cell's title gives its row, column and value. `numbers` writes the
 * values into the cells too.
 */
export function heatmap(data, rowLabels, colLabels, { label, lo = 0, hi, numbers = false, caption } = {}) {
  const box = el('div', 'hm-wrap');
  if (caption) box.append(el('p', 'cap', caption));
  const finite = Array.from(data).filter(Number.isFinite);
  if (lo === 'min') lo = Math.min(...finite);
  const top = hi ?? Math.max(lo + 1e-9, ...finite);
  const grid = el('div', numbers ? 'hm nums' : 'hm');
  grid.style.gridTemplateColumns = `auto repeat(${colLabels.length}, minmax(0, ${numbers ? '2.6rem' : '1.7rem'}))`;
  grid.setAttribute('role', 'table');
  grid.setAttribute('aria-label', caption ?? label);
  grid.append(el('span', 'hm-corner'));
  const vertical = colLabels.some((c) => c.length > 3);
  for (const c of colLabels) grid.append(el('span', vertical ? 'hm-col vert' : 'hm-col', c));
  rowLabels.forEach((r, i) => {
    grid.append(el('span', 'hm-row', r));
    colLabels.forEach((c, j) => {
      const v = data[i * colLabels.length + j];
      const t = (v - lo) / (top - lo);
      const cell = el('span', t > 0.55 ? 'hm-cell dark' : 'hm-cell', numbers ? v.toFixed(2) : '');
      cell.style.background = rampColor(t);
      cell.title = `${r} → ${c}: ${fmt(v)}`;
      cell.setAttribute('role', 'cell');
      if (label) cell.dataset.k = `${label}:${i * colLabels.length + j}`;
      grid.append(cell);
    });
  });
  box.append(grid);
  return box;
}

/** Words shaded by their weights (white → dark blue, scaled to the largest); each word's title gives its weight. */
export function shadedWords(words, weights, { label, offset = 0, hi } = {}) {
  const p = el('p', 'lab-words');
  const top = hi ?? Math.max(1e-9, ...weights);
  words.forEach((w, i) => {
    const t = weights[i] / top;
    const span = el('span', t > 0.55 ? 'dark' : '', w);
    span.style.background = rampColor(t);
    span.title = `${w}: ${fmt(weights[i])}`;
    if (label) span.dataset.k = `${label}:${offset + i}`;
    p.append(span);
  });
  return p;
}

/** "name = value" lines for single numbers and short vectors, each value with its data-k. */
export function values(items) {
  const p = el('p', 'lab-values');
  for (const { name, label, data, index = 0, count = 1 } of items) {
    const part = el('span', 'val');
    part.append(`${name} = `);
    if (count > 1) part.append('[');
    for (let i = 0; i < count; i++) {
      const v = el('span', 'v', fmt(data[index + i]));
      if (label) v.dataset.k = `${label}:${index + i}`;
      part.append(v);
      if (i < count - 1) part.append(', ');
    }
    if (count > 1) part.append(']');
    p.append(part);
  }
  return p;
}

/** A colour swatch for an [r, g, b] vector in [0, 1]. */
export function swatch(rgb, title) {
  const s = el('span', 'lab-swatch');
  const c = rgb.map((v) => Math.round(255 * Math.max(0, Math.min(1, v))));
  s.style.background = `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
  s.title = title;
  return s;
}

/** Deterministic toy numbers: mulberry32 seeded with `seed`, uniform in [−scale, scale]. */
export function toyNumbers(count, seed, scale = 1) {
  let a = seed >>> 0;
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = scale * (2 * (((t ^ (t >>> 14)) >>> 0) / 4294967296) - 1);
  }
  return out;
}

// Caption demo: an image (dropped, chosen or an example) → a caption with beam search; for each word the
// attention grid, upsampled bilinearly over the image on a colour scale (heat.js) with its legend, the peak cell
// boxed and an opacity slider; the caption's words appear one by one with their attention (at once under
// prefers-reduced-motion), and a scrubber steps through the words; the model view holds
// every word's grid (one thumbnail each, with its entropy); the maps save as JSON and .npy; the example image, model
// and word live in the URL (state.js).
//
// The demo's shape (demo.js): inputs (image, model, beams) → run in the worker → render (the heat overlay of
// overlay.js, the word buttons and scrubber, the model view). `c` below is the demo's state.
import { fitCanvas } from './draw.js';
import { runTask } from './client.js';
import { first } from './maps.js';
import { HEAT_STOPS } from './heat.js';
import { drawHeat, boxPeak } from './overlay.js';
import { ModelView } from './modelview.js';
import { fileName, mapsDocument, registerPng, wireMapExports } from './export.js';
import { $, createDemo, pickOption } from './demo.js';
const MAX_SIDE = 512; // the engine resizes to its encoder's input anyway; keeps the message to the worker small
const WORD_MS = 260; // the caption plays word by word: this long on each word
// The example captioned without a click when the section first comes into view (app.js calls autorun()): a generated
// scene, which the small shapes model captions right (95% exact) and whose attention visibly lands on each object.
const FIRST_EXAMPLE = { src: 'examples/shapes-1.png', model: 'shapes' };
export const MISSING = 'Captioning model not available in this build (no captioning bundle under /models/). ' +
  'The other demos work without it.';

/** The word whose attention is most concentrated (highest peak share), special tokens such as <end> left out. */
export function mostFocused(grids) {
  let best = 0;
  let bestPeak = -1;
  grids.forEach((g, t) => {
    if (/^<.*>$/.test(g.word)) return;
    let max = 0;
    let sum = 0;
    for (const v of g.data) { max = Math.max(max, v); sum += v; }
    const peak = sum > 0 ? max / sum : 0;
    if (peak > bestPeak) { best = t; bestPeak = peak; }
  });
  return best;
}

/** Per-word attention grids from a captioning result: [{ word, gh, gw, data }]. */
export function wordGrids(out) {
  const words = out.tokens;
  const maps = (out.attentions ?? []).filter((m) => m && Array.isArray(m.dims) && m.data);
  const grid = (n) => {
    const g = out.grid ?? out.grid_size;
    if (Array.isArray(g) && g[0] * g[1] === n) return g;
    const s = Math.round(Math.sqrt(n));
    return s * s === n ? [s, s] : [1, n];
  };
  const grids = [];
  if (maps.length === 1 && maps[0].dims.length >= 2 && (maps[0].dims.length === 3 || maps[0].dims[0] === words.length)) {
    const m = maps[0];
    const T = m.dims[0];
    const n = m.dims.slice(1).reduce((a, b) => a * b, 1);
    const [gh, gw] = m.dims.length === 3 ? [m.dims[1], m.dims[2]] : grid(n);
    for (let t = 0; t < T; t++) grids.push({ word: words[t] ?? `#${t}`, gh, gw, data: m.data.subarray(t * n, (t + 1) * n) });
  } else {
    const sorted = [...maps].sort((a, b) => (a.step ?? 0) - (b.step ?? 0));
    sorted.forEach((m, t) => {
      const n = m.dims.reduce((a, b) => a * b, 1);
      const [gh, gw] = m.dims.length === 2 ? m.dims : grid(n);
      grids.push({ word: words[t] ?? `#${t}`, gh, gw, data: m.data });
    });
  }
  return grids;
}

/** The image in the overlay's square, fitted and centred: its box { x, y, w, h } and the square's size. */
function imageBox(canvas, image) {
  const box = canvas.parentElement;
  const style = box && getComputedStyle(box);
  const inner = box ? box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) : 360;
  const size = Math.max(120, Math.min(360, Math.floor(inner || 360)));
  if (!image) return { size };
  const { width: w, height: h } = image.pixels;
  const s = Math.min(size / w, size / h);
  return { size, x: (size - w * s) / 2, y: (size - h * s) / 2, w: w * s, h: h * s };
}

/** The image, the chosen word's attention over it (heat layer, word strip, peak box) and the colour scale. */
function drawOverlay(c) {
  const { canvas, image } = c;
  const { size, ...box } = imageBox(canvas, image);
  const ctx = fitCanvas(canvas, size, size);
  ctx.fillStyle = '#f1f3f5';
  ctx.fillRect(0, 0, size, size);
  if (!image) {
    ctx.fillStyle = '#5c6770';
    ctx.font = '14px system-ui, sans-serif';
    ctx.textAlign = 'center';
    ctx.fillText('choose an image', size / 2, size / 2);
    return;
  }
  ctx.drawImage(image.bitmap, box.x, box.y, box.w, box.h);
  const g = c.grids[Number($('cap-scrub').value)];
  if (!g) return;
  // The heat layer: the word's grid upsampled to the drawn size (÷ its peak cell), times the opacity slider.
  drawHeat(ctx, g, box, Number($('cap-opacity').value) / 100);
  ctx.fillStyle = 'rgba(0, 0, 0, 0.65)';
  ctx.fillRect(0, size - 28, size, 28);
  ctx.fillStyle = '#fff';
  ctx.font = 'bold 15px system-ui, sans-serif';
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  ctx.fillText(g.word, size / 2, size - 14);
  const boxed = boxPeak(ctx, g, box); // over the word label too
  if (boxed) {
    canvas.dataset.peak = `${boxed.peak.row},${boxed.peak.col}`;
    canvas.dataset.peakBox = boxed.rect.map((v) => v.toFixed(1)).join(',');
  }
  drawLegend(g, boxed?.peak);
}

/** The colour scale under the overlay: the ramp from 0 to the word's peak, and what the peak is. */
function drawLegend(g, peak) {
  const ctx = fitCanvas($('cap-scale'), 160, 12);
  const grad = ctx.createLinearGradient(0, 0, 160, 0);
  for (const [at, [r, gg, b]] of HEAT_STOPS) grad.addColorStop(at, `rgb(${r}, ${gg}, ${b})`);
  ctx.fillStyle = grad;
  ctx.fillRect(0, 0, 160, 12);
  const n = g.gh * g.gw;
  const pct = (v) => `${(100 * v).toFixed(1)}%`;
  $('cap-scale-hi').textContent = peak
    ? `peak cell: ${pct(peak.value)} of "${g.word}"'s attention (uniform: ${pct(1 / n)} per cell)` : 'peak';
}

/** The model view: one thumbnail per word, its gh × gw grid (a distribution over the cells). */
function fillModelView(c) {
  const { grids, modelView } = c;
  if (!grids.length) { modelView.clear(); $('cap-mv-panel').hidden = true; return; }
  const { gh, gw } = grids[0];
  $('cap-mv-panel').hidden = false;
  modelView.set([{
    name: 'visual', title: `visual attention over the ${gh} × ${gw} grid`, headName: 'word', wrap: true, cells: true,
    layers: [{ layer: 0, maps: grids.map((g) => ({ rows: g.gh, cols: g.gw, data: g.data, label: g.word, rowLabels: null, colLabels: null })) }],
  }]);
}

function selectWord(c, t, { record = true } = {}) {
  $('cap-scrub').value = String(t);
  [...$('cap-words').children].forEach((b, i) => b.setAttribute('aria-pressed', String(i === t)));
  c.modelView.select({ name: 'visual', layer: 0, head: t });
  drawOverlay(c);
  if (record && c.result) c.demo.write({ view: 'overlay', kind: 'visual', word: t });
}

// Word by word: the caption's words appear one at a time, each with its attention over the image, then the view
// settles on `settle`. prefers-reduced-motion: all words at once. A click on a word, the scrubber, a new image or a
// new caption stops it. #cap-words has data-playing while it runs.
const reducedMotion = () => globalThis.matchMedia?.('(prefers-reduced-motion: reduce)').matches ?? false;
function stopPlaying(c) {
  c.playId++;
  delete $('cap-words').dataset.playing;
  for (const b of $('cap-words').children) b.classList.add('shown');
}
async function play(c, settle) {
  const id = ++c.playId;
  const buttons = [...$('cap-words').children];
  if (reducedMotion() || buttons.length === 0) {
    stopPlaying(c);
    selectWord(c, settle, { record: false });
    return;
  }
  $('cap-words').dataset.playing = 'true';
  for (const b of buttons) b.classList.remove('shown');
  for (let t = 0; t < buttons.length; t++) {
    buttons[t].classList.add('shown');
    selectWord(c, t, { record: false });
    await new Promise((r) => setTimeout(r, WORD_MS));
    if (id !== c.playId) return;
  }
  stopPlaying(c);
  selectWord(c, settle, { record: false });
}

/** A new image (a blob: an example's, a chosen or dropped file), scaled to MAX_SIDE; the previous caption goes. */
async function setImage(c, blob, name, src = null) {
  const id = ++c.imageId;
  const bitmap = await createImageBitmap(blob, { imageOrientation: 'from-image' }); // upright, as the package reads it
  const s = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
  const w = Math.max(1, Math.round(bitmap.width * s));
  const h = Math.max(1, Math.round(bitmap.height * s));
  const ctx = new OffscreenCanvas(w, h).getContext('2d');
  ctx.drawImage(bitmap, 0, 0, w, h);
  if (id !== c.imageId) return; // a newer image arrived meanwhile
  c.image = { bitmap, pixels: ctx.getImageData(0, 0, w, h), name, src };
  c.grids = [];
  c.result = null;
  c.modelView.clear();
  $('cap-mv-panel').hidden = true;
  stopPlaying(c);
  $('cap-words').replaceChildren();
  $('cap-scrub').max = '0';
  $('cap-scrub').disabled = true;
  $('cap-output').textContent = '';
  c.demo.ui.done(`Image: ${name} (${bitmap.width}×${bitmap.height}).`);
  drawOverlay(c);
}

async function loadUrl(c, src) {
  const res = await fetch(src);
  if (!res.ok) throw new Error(`HTTP ${res.status} for ${src}`);
  await setImage(c, await res.blob(), src.split('/').pop(), src);
}

// Choosing a model sets the beam width to that bundle's own default (its config.json decoding.num_beams, chosen
// on dev: beam 10 for photos, greedy for shapes, see the model cards); the field stays editable.
const DEFAULT_BEAMS = { 'flickr8k-mobilenet': 10, shapes: 1 };
function useModel(model) {
  $('cap-model').value = model;
  $('cap-beams').value = String(DEFAULT_BEAMS[model] ?? 3);
}
const modelFor = (src) => (/shapes/.test(src) ? 'shapes' : 'flickr8k-mobilenet');

/** The image inputs: the example thumbnails, the file chooser and the drop zone. */
function wireImageInputs(c) {
  const { demo } = c;
  for (const b of document.querySelectorAll('#cap-examples .thumb')) {
    b.addEventListener('click', () => {
      demo.touch();
      stopPlaying(c);
      useModel(modelFor(b.dataset.src));
      demo.write({ image: b.dataset.src, view: undefined, kind: undefined, word: undefined });
      loadUrl(c, b.dataset.src).catch((err) => demo.ui.fail(err));
    });
  }
  const useFile = (f) => {
    demo.touch();
    demo.write({ image: undefined, word: undefined });
    if (f) setImage(c, f, f.name).catch((err) => demo.ui.fail(new Error(`cannot read ${f.name} as an image (${err.message})`)));
  };
  $('cap-file').addEventListener('change', () => useFile($('cap-file').files[0]));
  const drop = $('cap-drop');
  drop.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); $('cap-file').click(); }
  });
  drop.addEventListener('dragover', (ev) => { ev.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    drop.classList.remove('over');
    useFile([...(ev.dataTransfer?.files ?? [])].find((x) => x.type.startsWith('image/')));
  });
}

/** The caption's words as buttons (a click shows that word), and the scrubber over them. */
function showWords(c) {
  $('cap-words').replaceChildren(...c.grids.map((g, t) => {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = g.word;
    b.addEventListener('click', () => { stopPlaying(c); selectWord(c, t); });
    return b;
  }));
  $('cap-scrub').max = String(Math.max(0, c.grids.length - 1));
  $('cap-scrub').disabled = c.grids.length === 0;
  $('cap-replay').disabled = c.grids.length === 0;
}

// `focus`: start on the word with the most concentrated attention instead of the first word (the automatic run);
// `word`: start on that word (a link's).
async function runForm(c, { focus = false, word = undefined } = {}) {
  const { ui } = c.demo;
  if (!c.image) { ui.done('Choose or drop an image first.'); return; }
  const model = $('cap-model').value;
  const beams = Math.max(1, Math.min(16, Number($('cap-beams').value) || 1));
  ui.busy(`Captioning with ${model}…`);
  const id = c.imageId;
  const run = ++c.runId;
  try {
    const { data, width, height } = c.image.pixels;
    const { output, ms } = await runTask(ui, 'image-to-text', model, { data, width, height },
      { num_beams: beams, output_attentions: true });
    if (id !== c.imageId) return; // the image changed while this one was captioned
    const out = first(output);
    $('cap-output').textContent = out.text;
    c.grids = wordGrids(out);
    showWords(c);
    c.result = { model, image: c.image.src, name: c.image.name, words: c.grids.map((g) => g.word) };
    fillModelView(c);
    c.start = Number.isInteger(word) && word < c.grids.length ? word : focus ? mostFocused(c.grids) : 0;
    await play(c, c.start); // the status says done once the words have played (or at once with reduced motion)
    if (id !== c.imageId || run !== c.runId) return; // a newer image or caption took over meanwhile
    ui.done(`${model}, beam ${beams}: ${ms.toFixed(0)} ms`);
  } catch (err) {
    if (id === c.imageId) ui.fail(err, MISSING);
  }
}

/** Captions the first example (or a link's example, model and word), unless the person chose an image already. */
async function firstRun(c) {
  if (c.image) return;
  const EXAMPLES = [...document.querySelectorAll('#cap-examples .thumb')].map((b) => b.dataset.src);
  // A link with a caption state: its example image, model and word (an image that is not an example is ignored).
  const st = c.demo.linked ?? {};
  const src = EXAMPLES.includes(st.image) ? st.image : FIRST_EXAMPLE.src;
  useModel(src === st.image ? modelFor(src) : FIRST_EXAMPLE.model);
  if (pickOption($('cap-model'), st.model)) useModel(st.model);
  try {
    await loadUrl(c, src);
  } catch (err) {
    c.demo.ui.fail(err);
    return;
  }
  if (!c.demo.touched) await runForm(c, { focus: true, word: st.word });
  if (st.view === 'model' && !$('cap-mv-panel').hidden) $('cap-mv-panel').scrollIntoView({ block: 'start' });
}

export function setupCaption() {
  // The URL's state (state.js): always the whole of this demo's (model, example image, view).
  const form = () => ({ model: $('cap-model').value, image: c.image?.src ?? undefined });
  const c = {
    canvas: $('cap-overlay'),
    image: null, // { bitmap (ImageBitmap|HTMLImageElement), pixels: ImageData, name, src }
    grids: [],
    imageId: 0, // bumped by every new image: a caption that comes back for an older image is dropped
    runId: 0, // bumped by every caption request
    playId: 0,
    start: 0,
    result: null, // { model, image (the example's path, or null for the person's own file), name, words }
    demo: createDemo({ name: 'caption', prefix: 'cap', state: form, run: () => runForm(c), first: () => firstRun(c) }),
  };
  c.modelView = new ModelView($('cap-mv'), { readout: $('cap-mv-readout'), onOpen: ({ head }) => {
    stopPlaying(c);
    selectWord(c, head);
    c.canvas.scrollIntoView({ block: 'nearest' });
  } });
  registerPng('cap-mv', () => c.modelView.toCanvas({ heading: c.result ? `${c.result.model}: ${c.result.image ?? c.result.name} → ${$('cap-output').textContent}` : '' }));
  wireMapExports(c.modelView, {
    json: $('cap-mv-json'), npy: $('cap-mv-npy'), jsonName: (doc) => fileName(doc.model, 'maps'),
    doc: () => c.result && mapsDocument({ task: 'image-to-text', model: c.result.model, input: c.result.image ?? c.result.name,
      level: 'word', tokens: { tokens: c.result.words }, maps: c.modelView.maps() }),
    npyName: (m) => c.result && fileName(c.result.model, 'visual', `W${m.head + 1}`, m.label),
  });
  $('cap-model').addEventListener('change', () => {
    useModel($('cap-model').value);
    c.demo.write({ model: $('cap-model').value });
  });
  wireImageInputs(c);
  $('cap-scrub').addEventListener('input', () => { stopPlaying(c); selectWord(c, Number($('cap-scrub').value)); });
  $('cap-opacity').addEventListener('input', () => drawOverlay(c));
  $('cap-replay').addEventListener('click', () => { if (c.grids.length) play(c, c.start); });
  drawOverlay(c);
  return { loadUrl: (src) => loadUrl(c, src), autorun: c.demo.autorun };
}

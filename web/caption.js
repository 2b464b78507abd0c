// Caption demo: an image (dropped, chosen or an example) → a caption with beam search; for each word the
// attention grid, upsampled bilinearly over the image on a colour scale (heat.js) with its legend, the peak cell
// boxed and an opacity slider; the caption's words appear one by one with their attention (at once under
// prefers-reduced-motion), and a scrubber steps through the words; the model view holds
// every word's grid (one thumbnail each, with its entropy); the maps save as JSON and .npy; the example image, model
// and word live in the URL (state.js).
import { fitCanvas } from './draw.js';
import { runTask, statusUi } from './client.js';
import { first } from './maps.js';
import { HEAT_STOPS, heatLayer, peakCell } from './heat.js';
import { ModelView } from './modelview.js';
import { copyLink, download, downloadText, fileName, mapsDocument, npyBytes, registerPng } from './export.js';
import { INITIAL_STATE, writeState } from './state.js';

const $ = (id) => document.getElementById(id);
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
  const words = out.tokens ?? out.words ?? (out.text ?? '').split(/\s+/).filter(Boolean);
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

export function setupCaption() {
  const ui = statusUi({ progress: $('cap-progress'), status: $('cap-status'), button: $('cap-run') });
  const canvas = $('cap-overlay');
  let image = null; // { bitmap (ImageBitmap|HTMLImageElement), pixels: ImageData, name }
  let grids = [];
  let touched = false; // the user chose an image or ran the form: no automatic run any more
  let imageId = 0; // bumped by every new image: a caption that comes back for an older image is dropped
  let result = null; // { model, image (the example's path, or null for the person's own file), words }
  const modelView = new ModelView($('cap-mv'), { readout: $('cap-mv-readout'), onOpen: ({ head }) => openWord(head) });
  registerPng('cap-mv', () => modelView.toCanvas({ heading: result ? `${result.model}: ${result.image ?? result.name} → ${$('cap-output').textContent}` : '' }));
  // The URL's state (state.js): always the whole of this demo's (model, example image, view).
  const write = (patch) => writeState({ demo: 'caption', model: $('cap-model').value, image: image?.src ?? undefined, ...patch });
  const EXAMPLES = [...document.querySelectorAll('#cap-examples .thumb')].map((b) => b.dataset.src);

  function drawOverlay() {
    const box = canvas.parentElement;
    const style = box && getComputedStyle(box);
    const inner = box ? box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) : 360;
    const size = Math.max(120, Math.min(360, Math.floor(inner || 360)));
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
    const { width: w, height: h } = image.pixels;
    const s = Math.min(size / w, size / h);
    const dw = w * s;
    const dh = h * s;
    const x = (size - dw) / 2;
    const y = (size - dh) / 2;
    ctx.drawImage(image.bitmap, x, y, dw, dh);
    const g = grids[Number($('cap-scrub').value)];
    if (!g) return;
    // The heat layer: bilinear upsampling of the word's grid to the drawn size, colour scale of heat.js (÷ the word's
    // peak cell), alpha growing with the attention, times the opacity slider.
    const ox = Math.round(x);
    const oy = Math.round(y);
    const ow = Math.max(1, Math.round(dw));
    const oh = Math.max(1, Math.round(dh));
    const opacity = Number($('cap-opacity').value) / 100;
    const layer = new OffscreenCanvas(ow, oh);
    layer.getContext('2d').putImageData(new ImageData(heatLayer(g.data, g.gh, g.gw, oh, ow, opacity), ow, oh), 0, 0);
    ctx.drawImage(layer, ox, oy);
    ctx.fillStyle = 'rgba(0, 0, 0, 0.65)';
    ctx.fillRect(0, size - 28, size, 28);
    ctx.fillStyle = '#fff';
    ctx.font = 'bold 15px system-ui, sans-serif';
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.fillText(g.word, size / 2, size - 14);
    // The peak cell, boxed (white with a dark outline, readable on any colour), over the word label too.
    const peak = peakCell(g.data, g.gw);
    if (peak) {
      const cw = dw / g.gw;
      const ch = dh / g.gh;
      const bx = x + peak.col * cw;
      const by = y + peak.row * ch;
      ctx.lineWidth = 4;
      ctx.strokeStyle = 'rgba(0, 0, 0, 0.7)';
      ctx.strokeRect(bx + 1, by + 1, cw - 2, ch - 2);
      ctx.lineWidth = 2;
      ctx.strokeStyle = '#fff';
      ctx.strokeRect(bx + 1, by + 1, cw - 2, ch - 2);
      canvas.dataset.peak = `${peak.row},${peak.col}`;
      canvas.dataset.peakBox = [bx + 1, by + 1, cw - 2, ch - 2].map((v) => v.toFixed(1)).join(',');
    }
    drawLegend(g, peak);
  }

  /** The colour scale under the overlay: the ramp from 0 to the word's peak, and what the peak is. */
  function drawLegend(g, peak) {
    const bar = $('cap-scale');
    const ctx = fitCanvas(bar, 160, 12);
    const grad = ctx.createLinearGradient(0, 0, 160, 0);
    for (const [at, [r, gg, b]] of HEAT_STOPS) grad.addColorStop(at, `rgb(${r}, ${gg}, ${b})`);
    ctx.fillStyle = grad;
    ctx.fillRect(0, 0, 160, 12);
    const n = g.gh * g.gw;
    const pct = (v) => `${(100 * v).toFixed(1)}%`;
    $('cap-scale-hi').textContent = peak
      ? `peak cell: ${pct(peak.value)} of "${g.word}"'s attention (uniform: ${pct(1 / n)} per cell)` : 'peak';
  }

  function selectWord(t, { record = true } = {}) {
    $('cap-scrub').value = String(t);
    [...$('cap-words').children].forEach((b, i) => b.setAttribute('aria-pressed', String(i === t)));
    modelView.select({ name: 'visual', layer: 0, head: t });
    drawOverlay();
    if (record && result) write({ view: 'overlay', kind: 'visual', word: t });
  }

  /** A thumbnail of the model view: its word over the image. */
  function openWord(t) {
    stopPlaying();
    selectWord(t);
    canvas.scrollIntoView({ block: 'nearest' });
  }

  /** The model view: one thumbnail per word, its gh × gw grid (a distribution over the cells). */
  function fillModelView() {
    if (!grids.length) { modelView.clear(); $('cap-mv-panel').hidden = true; return; }
    const { gh, gw } = grids[0];
    $('cap-mv-panel').hidden = false;
    modelView.set([{
      name: 'visual', title: `visual attention over the ${gh} × ${gw} grid`, headName: 'word', wrap: true, cells: true,
      layers: [{ layer: 0, maps: grids.map((g) => ({ rows: g.gh, cols: g.gw, data: g.data, label: g.word, rowLabels: null, colLabels: null })) }],
    }]);
  }

  $('cap-mv-json').addEventListener('click', () => {
    if (!result) return;
    const doc = mapsDocument({ task: 'image-to-text', model: result.model, input: result.image ?? result.name, level: 'word',
      tokens: { tokens: result.words }, maps: modelView.maps() });
    downloadText(JSON.stringify(doc), `${fileName(result.model, 'maps')}.json`, 'application/json');
  });
  $('cap-mv-npy').addEventListener('click', () => {
    const m = modelView.selectedMap() ?? modelView.maps()[0];
    if (!m || !result) return;
    const name = fileName(result.model, 'visual', `W${m.head + 1}`, m.label);
    download(new Blob([npyBytes(m.data, [m.rows, m.cols])], { type: 'application/octet-stream' }), `${name}.npy`);
  });
  $('cap-share').addEventListener('click', () => copyLink($('cap-share')));

  async function setImage(blob, name, src = null) {
    const id = ++imageId;
    const bitmap = await createImageBitmap(blob);
    const s = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
    const w = Math.max(1, Math.round(bitmap.width * s));
    const h = Math.max(1, Math.round(bitmap.height * s));
    const c = new OffscreenCanvas(w, h);
    const ctx = c.getContext('2d');
    ctx.drawImage(bitmap, 0, 0, w, h);
    if (id !== imageId) return; // a newer image arrived meanwhile
    image = { bitmap, pixels: ctx.getImageData(0, 0, w, h), name, src };
    grids = [];
    result = null;
    modelView.clear();
    $('cap-mv-panel').hidden = true;
    stopPlaying();
    $('cap-words').replaceChildren();
    $('cap-scrub').max = '0';
    $('cap-scrub').disabled = true;
    $('cap-output').textContent = '';
    ui.done(`Image: ${name} (${bitmap.width}×${bitmap.height}).`);
    drawOverlay();
  }

  async function loadUrl(src) {
    const res = await fetch(src);
    if (!res.ok) throw new Error(`HTTP ${res.status} for ${src}`);
    await setImage(await res.blob(), src.split('/').pop(), src);
  }

  // Choosing a model sets the beam width to that bundle's own default (its config.json decoding.num_beams, chosen
  // on dev: beam 10 for photos, greedy for shapes, see the model cards); the field stays editable.
  const DEFAULT_BEAMS = { 'flickr8k-mobilenet': 10, shapes: 1 };
  function useModel(model) {
    $('cap-model').value = model;
    $('cap-beams').value = String(DEFAULT_BEAMS[model] ?? 3);
  }
  $('cap-model').addEventListener('change', () => {
    useModel($('cap-model').value);
    write({ model: $('cap-model').value });
  });

  for (const b of document.querySelectorAll('#cap-examples .thumb')) {
    b.addEventListener('click', () => {
      touched = true;
      stopPlaying();
      useModel(/shapes/.test(b.dataset.src) ? 'shapes' : 'flickr8k-mobilenet');
      write({ model: $('cap-model').value, image: b.dataset.src, view: undefined, kind: undefined, word: undefined });
      loadUrl(b.dataset.src).catch((err) => ui.fail(err));
    });
  }
  $('cap-file').addEventListener('change', () => {
    const f = $('cap-file').files[0];
    touched = true;
    write({ image: undefined, word: undefined });
    if (f) setImage(f, f.name).catch((err) => ui.fail(new Error(`cannot read ${f.name} as an image (${err.message})`)));
  });
  const drop = $('cap-drop');
  drop.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); $('cap-file').click(); }
  });
  drop.addEventListener('dragover', (ev) => { ev.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => {
    ev.preventDefault();
    drop.classList.remove('over');
    const f = [...(ev.dataTransfer?.files ?? [])].find((x) => x.type.startsWith('image/'));
    touched = true;
    write({ image: undefined, word: undefined });
    if (f) setImage(f, f.name).catch((err) => ui.fail(new Error(`cannot read ${f.name} as an image (${err.message})`)));
  });
  $('cap-scrub').addEventListener('input', () => { stopPlaying(); selectWord(Number($('cap-scrub').value)); });
  $('cap-opacity').addEventListener('input', () => drawOverlay());
  $('cap-replay').addEventListener('click', () => { if (grids.length) play(start); });

  // Word by word: the caption's words appear one at a time, each with its attention over the image, then the view
  // settles on `start`. prefers-reduced-motion: all words at once. A click on a word, the scrubber, a new image or a
  // new caption stops it. #cap-words has data-playing while it runs.
  let playId = 0;
  let runId = 0; // bumped by every caption request
  let start = 0;
  const reducedMotion = () => globalThis.matchMedia?.('(prefers-reduced-motion: reduce)').matches ?? false;
  function stopPlaying() {
    playId++;
    delete $('cap-words').dataset.playing;
    for (const b of $('cap-words').children) b.classList.add('shown');
  }
  async function play(settle) {
    const id = ++playId;
    const buttons = [...$('cap-words').children];
    if (reducedMotion() || buttons.length === 0) {
      stopPlaying();
      selectWord(settle, { record: false });
      return;
    }
    $('cap-words').dataset.playing = 'true';
    for (const b of buttons) b.classList.remove('shown');
    for (let t = 0; t < buttons.length; t++) {
      buttons[t].classList.add('shown');
      selectWord(t, { record: false });
      await new Promise((r) => setTimeout(r, WORD_MS));
      if (id !== playId) return;
    }
    stopPlaying();
    selectWord(settle, { record: false });
  }

  $('cap-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    touched = true;
    write({ model: $('cap-model').value, image: image?.src ?? undefined });
    return runForm();
  });

  // `focus`: start on the word with the most concentrated attention instead of the first word (the automatic run);
  // `word`: start on that word (a link's).
  async function runForm({ focus = false, word = undefined } = {}) {
    if (!image) { ui.done('Choose or drop an image first.'); return; }
    const model = $('cap-model').value;
    const beams = Math.max(1, Math.min(16, Number($('cap-beams').value) || 1));
    ui.busy(`Captioning with ${model}…`);
    const id = imageId;
    const run = ++runId;
    try {
      const { data, width, height } = image.pixels;
      const { output, ms } = await runTask(ui, 'image-to-text', model, { data, width, height },
        { num_beams: beams, output_attentions: true });
      if (id !== imageId) return; // the image changed while this one was captioned
      const out = first(output);
      $('cap-output').textContent = out.text ?? out.generated_text ?? '';
      grids = wordGrids(out);
      $('cap-words').replaceChildren(...grids.map((g, t) => {
        const b = document.createElement('button');
        b.type = 'button';
        b.textContent = g.word;
        b.addEventListener('click', () => { stopPlaying(); selectWord(t); });
        return b;
      }));
      $('cap-scrub').max = String(Math.max(0, grids.length - 1));
      $('cap-scrub').disabled = grids.length === 0;
      result = { model, image: image.src, name: image.name, words: grids.map((g) => g.word) };
      fillModelView();
      start = Number.isInteger(word) && word < grids.length ? word : focus ? mostFocused(grids) : 0;
      $('cap-replay').disabled = grids.length === 0;
      await play(start); // the status says done once the words have played (or at once with reduced motion)
      if (id !== imageId || run !== runId) return; // a newer image or caption took over meanwhile
      ui.done(`${model}, beam ${beams}: ${ms.toFixed(0)} ms`);
    } catch (err) {
      if (id === imageId) ui.fail(err, MISSING);
    }
  }

  drawOverlay();
  return {
    loadUrl,
    /** Captions the first example, unless the user has already chosen an image or run the form. */
    async autorun() {
      if (touched || image) return;
      // A link with a caption state: its example image, model and word (an image that is not an example is ignored).
      const st = INITIAL_STATE.demo === 'caption' ? INITIAL_STATE : {};
      const src = EXAMPLES.includes(st.image) ? st.image : FIRST_EXAMPLE.src;
      useModel(src === st.image ? (/shapes/.test(src) ? 'shapes' : 'flickr8k-mobilenet') : FIRST_EXAMPLE.model);
      if (st.model && [...$('cap-model').options].some((o) => o.value === st.model)) useModel(st.model);
      try {
        await loadUrl(src);
      } catch (err) {
        ui.fail(err);
        return;
      }
      if (!touched) await runForm({ focus: true, word: st.word });
      if (st.view === 'model' && !$('cap-mv-panel').hidden) $('cap-mv-panel').scrollIntoView({ block: 'start' });
    },
  };
}

// Visual question answering demo: a shapes scene (one of the examples) and a typed question, answered by both VQA
// models side by side (shapes-vqa-coattn: parallel co-attention; shapes-vqa-aoa: attention-over-attention). Per
// model: the answer with its score over every answer, the question level's region attention over the image
// (heat.js colour scale, peak cell boxed), and the question-word × region matrix (co-attention's affinity C, or
// AoA's α) in the heatmap (hover or arrow keys read a weight). Each canvas publishes what it drew in
// data-weights (JSON) and data-dims, so tests/e2e/vqa.test.mjs can check the drawings against the result's maps.
//
// The demo's shape (demo.js): inputs (scene, question) → run in the worker (each model in turn) → render per model
// (answer and scores, the heat overlay of overlay.js, the heatmap). `v` below is the demo's state.
import { Heatmap, fitCanvas } from './draw.js';
import { runTaskArgs } from './client.js';
import { drawHeat, boxPeak } from './overlay.js';
import { $, createDemo } from './demo.js';
const TASK = 'visual-question-answering';
const WORD_REGION = { 'shapes-vqa-coattn': 'affinity', 'shapes-vqa-aoa': 'aoa_alpha' };
const FIRST_SCENE = 'examples/shapes-1.png';
const CELL_LABELS = Array.from({ length: 49 }, (_, i) => `${Math.floor(i / 7)},${i % 7}`);

const mapOf = (out, name, layer) => out.attentions.find((m) => m.name === name && m.layer === layer);

/** The scene with the question level's region attention over it, the peak cell boxed. */
function drawOverlay(col, image) {
  const canvas = col.overlay;
  const size = 240;
  const ctx = fitCanvas(canvas, size, size);
  ctx.fillStyle = '#f1f3f5';
  ctx.fillRect(0, 0, size, size);
  canvas.dataset.weights = '';
  if (!image) return;
  ctx.drawImage(image.bitmap, 0, 0, size, size);
  const m = col.result && mapOf(col.result, 'region_attention', 1);
  if (!m) return;
  const grid = { data: m.data, gh: m.dims[0], gw: m.dims[1] };
  const box = { x: 0, y: 0, w: size, h: size };
  drawHeat(ctx, grid, box, 0.7);
  const boxed = boxPeak(ctx, grid, box);
  if (boxed) canvas.dataset.peak = `${boxed.peak.row},${boxed.peak.col}`;
  canvas.dataset.dims = m.dims.join('x');
  canvas.dataset.weights = JSON.stringify(Array.from(m.data));
}

// The relation readout's input in words: where the question level looks (a relation's subject) relative to the
// word level (both objects), in grid cells.
function whereLine(where) {
  if (!where || where.length !== 2) return '';
  const [dx, dy] = where;
  const h = `${Math.abs(dx).toFixed(1)} cells ${dx < 0 ? 'left' : 'right'}`;
  const v = `${Math.abs(dy).toFixed(1)} cells ${dy < 0 ? 'up' : 'down'}`;
  return `Relation readout: the question level's attention centre lies ${h} and ${v} of the word level's ` +
    '(the answer to "is A left of B?" is read from this).';
}

/** The answer, the relation readout and the four best answers' scores as bars. */
function drawScores(col) {
  const box = col.fig.querySelector('.vqa-scores');
  box.replaceChildren();
  const out = col.result;
  col.fig.querySelector('.vqa-answer').textContent = out
    ? `${out.answer} (${(100 * out.score).toFixed(1)}%)${out.unknown_words.length ? ` — unknown words read as <unk>: ${out.unknown_words.map((u) => u.word).join(', ')}` : ''}`
    : '';
  col.fig.querySelector('.vqa-where').textContent = out ? whereLine(out.where) : '';
  if (!out) return;
  const order = out.answers.map((a, i) => [a, out.scores[i]]).sort((a, b) => b[1] - a[1]).slice(0, 4);
  for (const [a, s] of order) {
    const row = document.createElement('div');
    row.className = 'vqa-score';
    const label = document.createElement('span');
    label.textContent = `${a} ${(100 * s).toFixed(1)}%`;
    const bar = document.createElement('span');
    bar.className = 'vqa-bar';
    bar.style.width = `${Math.max(1, Math.round(120 * s))}px`;
    row.append(bar, label);
    box.append(row);
  }
}

/** The question-word × region matrix of the chosen level in the column's heatmap. */
function drawMatrix(col) {
  const canvas = col.heatmap.canvas;
  const out = col.result;
  const layer = Number($('vqa-kind').value);
  const m = out && mapOf(out, WORD_REGION[col.model], layer);
  if (!m) { col.heatmap.clear(); canvas.dataset.weights = ''; return; }
  col.heatmap.set({ data: m.data, rowLabels: out.tokens, colLabels: CELL_LABELS, rowName: 'word', colName: 'cell (row,col)' });
  canvas.dataset.map = `${m.name}/${m.layer}`;
  canvas.dataset.weights = JSON.stringify(Array.from(m.data));
}

function draw(v, col) {
  drawOverlay(col, v.image);
  drawScores(col);
  drawMatrix(col);
}

async function loadScene(v, src) {
  const res = await fetch(src);
  if (!res.ok) throw new Error(`HTTP ${res.status} for ${src}`);
  const bitmap = await createImageBitmap(await res.blob(), { imageOrientation: 'from-image' });
  const ctx = new OffscreenCanvas(bitmap.width, bitmap.height).getContext('2d');
  ctx.drawImage(bitmap, 0, 0);
  v.image = { bitmap, pixels: ctx.getImageData(0, 0, bitmap.width, bitmap.height), src };
  for (const b of document.querySelectorAll('#vqa-examples .thumb')) b.setAttribute('aria-pressed', String(b.dataset.src === src));
  for (const col of v.columns) { col.result = null; draw(v, col); }
}

async function ask(v) {
  const { ui } = v.demo;
  const question = $('vqa-question').value;
  if (!v.image) await loadScene(v, FIRST_SCENE);
  const id = ++v.runId;
  ui.busy('Answering…');
  try {
    const px = v.image.pixels;
    let ms = 0;
    for (const col of v.columns) {
      const input = { data: px.data, width: px.width, height: px.height };
      const { output, ms: t } = await runTaskArgs(ui, TASK, col.model, [input, question, {}]);
      if (id !== v.runId) return;
      col.result = output;
      ms += t;
      draw(v, col);
    }
    $('vqa').dataset.question = question;
    $('vqa').dataset.scene = v.image.src;
    ui.done(`Both models answered in ${ms.toFixed(0)} ms (in the worker).`);
  } catch (err) {
    if (id !== v.runId) return;
    for (const col of v.columns) { col.result = null; draw(v, col); }
    ui.fail(err, 'The VQA models are not available in this build (no shapes-vqa-* bundles under /models/).');
  }
}

/** One column per model (figure.vqa-col[data-model]): its overlay, answer, scores and heatmap. */
function columnsOf() {
  return [...document.querySelectorAll('#vqa .vqa-col')].map((fig) => {
    const cursor = fig.querySelector('.vqa-cursor');
    return {
      fig,
      model: fig.dataset.model,
      overlay: fig.querySelector('.vqa-overlay'),
      heatmap: new Heatmap(fig.querySelector('.vqa-matrix'), { onCursor: (t) => { cursor.textContent = t; } }),
      result: null,
    };
  });
}

export function setupVqa() {
  const v = { columns: columnsOf(), image: null, runId: 0 }; // image: { bitmap, pixels: ImageData, src }
  v.demo = createDemo({
    name: 'vqa', prefix: 'vqa', run: () => { ask(v); },
    first: async () => {
      await loadScene(v, FIRST_SCENE);
      await ask(v);
    },
  });
  $('vqa-example').addEventListener('change', () => {
    if (!$('vqa-example').value) return;
    $('vqa-question').value = $('vqa-example').value;
    v.demo.touch();
    ask(v);
  });
  $('vqa-kind').addEventListener('change', () => { for (const col of v.columns) drawMatrix(col); });
  for (const b of document.querySelectorAll('#vqa-examples .thumb')) {
    b.addEventListener('click', async () => {
      v.demo.touch();
      try {
        await loadScene(v, b.dataset.src);
        await ask(v);
      } catch (err) {
        v.demo.ui.fail(err);
      }
    });
  }
  for (const col of v.columns) draw(v, col);
  return { autorun: v.demo.autorun };
}

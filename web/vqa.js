// Visual question answering demo: a shapes scene (one of the examples) and a typed question, answered by both VQA
// models side by side (shapes-vqa-coattn: parallel co-attention; shapes-vqa-aoa: attention-over-attention). Per
// model: the answer with its score over every answer, the question level's region attention over the image
// (heat.js colour scale, peak cell boxed), and the question-word × region matrix (co-attention's affinity C, or
// AoA's α) in the heatmap (hover or arrow keys read a weight). Each canvas publishes what it drew in
// data-weights (JSON) and data-dims, so tests/e2e/vqa.test.mjs can check the drawings against the result's maps.
import { Heatmap, fitCanvas } from './draw.js';
import { runTaskArgs, statusUi } from './client.js';
import { heatLayer, peakCell } from './heat.js';

const $ = (id) => document.getElementById(id);
const TASK = 'visual-question-answering';
const WORD_REGION = { 'shapes-vqa-coattn': 'affinity', 'shapes-vqa-aoa': 'aoa_alpha' };
const CELL_LABELS = Array.from({ length: 49 }, (_, i) => `${Math.floor(i / 7)},${i % 7}`);

export function setupVqa() {
  const ui = statusUi({ progress: $('vqa-progress'), status: $('vqa-status'), button: $('vqa-run') });
  const columns = [...document.querySelectorAll('#vqa .vqa-col')].map((fig) => {
    const cursor = fig.querySelector('.vqa-cursor');
    return {
      fig,
      model: fig.dataset.model,
      overlay: fig.querySelector('.vqa-overlay'),
      heatmap: new Heatmap(fig.querySelector('.vqa-matrix'), { onCursor: (t) => { cursor.textContent = t; } }),
      result: null,
    };
  });
  let image = null; // { bitmap, pixels: ImageData, src }
  let touched = false;
  let runId = 0;

  async function loadScene(src) {
    const res = await fetch(src);
    if (!res.ok) throw new Error(`HTTP ${res.status} for ${src}`);
    const bitmap = await createImageBitmap(await res.blob());
    const c = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = c.getContext('2d');
    ctx.drawImage(bitmap, 0, 0);
    image = { bitmap, pixels: ctx.getImageData(0, 0, bitmap.width, bitmap.height), src };
    for (const b of document.querySelectorAll('#vqa-examples .thumb')) b.setAttribute('aria-pressed', String(b.dataset.src === src));
    for (const col of columns) { col.result = null; draw(col); }
  }

  const mapOf = (out, name, layer) => out.attentions.find((m) => m.name === name && m.layer === layer);

  function drawOverlay(col) {
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
    const [gh, gw] = m.dims;
    const layer = new OffscreenCanvas(size, size);
    layer.getContext('2d').putImageData(new ImageData(heatLayer(m.data, gh, gw, size, size, 0.7), size, size), 0, 0);
    ctx.drawImage(layer, 0, 0);
    const peak = peakCell(m.data, gw);
    if (peak) {
      const cw = size / gw;
      const ch = size / gh;
      ctx.lineWidth = 4;
      ctx.strokeStyle = 'rgba(0, 0, 0, 0.7)';
      ctx.strokeRect(peak.col * cw + 1, peak.row * ch + 1, cw - 2, ch - 2);
      ctx.lineWidth = 2;
      ctx.strokeStyle = '#fff';
      ctx.strokeRect(peak.col * cw + 1, peak.row * ch + 1, cw - 2, ch - 2);
      canvas.dataset.peak = `${peak.row},${peak.col}`;
    }
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

  function draw(col) {
    drawOverlay(col);
    drawScores(col);
    drawMatrix(col);
  }

  async function ask() {
    const question = $('vqa-question').value;
    if (!image) await loadScene('examples/shapes-1.png');
    const id = ++runId;
    ui.busy('Answering…');
    try {
      const px = image.pixels;
      let ms = 0;
      for (const col of columns) {
        const input = { data: px.data, width: px.width, height: px.height };
        const { output, ms: t } = await runTaskArgs(ui, TASK, col.model, [input, question, {}]);
        if (id !== runId) return;
        col.result = output;
        ms += t;
        draw(col);
      }
      document.getElementById('vqa').dataset.question = question;
      document.getElementById('vqa').dataset.scene = image.src;
      ui.done(`Both models answered in ${ms.toFixed(0)} ms (in the worker).`);
    } catch (err) {
      if (id !== runId) return;
      for (const col of columns) { col.result = null; draw(col); }
      ui.fail(err, 'The VQA models are not available in this build (no shapes-vqa-* bundles under /models/).');
    }
  }

  $('vqa-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    touched = true;
    ask();
  });
  $('vqa-example').addEventListener('change', () => {
    if (!$('vqa-example').value) return;
    $('vqa-question').value = $('vqa-example').value;
    touched = true;
    ask();
  });
  $('vqa-kind').addEventListener('change', () => { for (const col of columns) drawMatrix(col); });
  for (const b of document.querySelectorAll('#vqa-examples .thumb')) {
    b.addEventListener('click', async () => {
      touched = true;
      try {
        await loadScene(b.dataset.src);
        await ask();
      } catch (err) {
        ui.fail(err);
      }
    });
  }
  for (const col of columns) draw(col);
  return {
    autorun: async () => {
      if (touched) return;
      await loadScene('examples/shapes-1.png');
      await ask();
    },
  };
}

// "Your model": a model from the person's own files, as every demo (demo.js): inputs (a folder picker, drag-and-drop
// of a folder or of files, the text or image, int8 on load) → the worker (open-worker.js: the files are read there,
// converted when they are a Hugging Face folder, and the model stays there until the next one is opened) → the
// shared views: the model view (modelview.js, with rollout and flow from rollout.js and each head's statistics), the
// head view (draw.js), the neuron view (neuron.js, when the result carries the query and key vectors: `qk`) and the
// head statistics by layer (open-views.js).
import { call } from './client.js';
import { $, createDemo } from './demo.js';
import { ModelView } from './modelview.js';
import { derivedBlocks } from './rollout.js';
import { HeadView, HEAD_COLORS } from './draw.js';
import { NeuronView } from './neuron.js';
import { STAT_INFO, STAT_KEYS } from './headstats.js';
import { fileName, mapsDocument, registerPng, wireMapExports } from './export.js';
import { labelsOf, layerStats, openBlocks, outputLines, tokenLists } from './open-views.js';

const OPEN_TIMEOUT_MS = 15 * 60_000; // converting and loading a large model sends no message for a while
const MB = (n) => (n < 1e6 ? `${Math.ceil(n / 1e3)} KB` : `${(n / 1e6).toFixed(1)} MB`);

/** Fills a <select> with [value, label] items, keeping its value when it is still offered. */
function fillSelect(sel, items) {
  const prev = sel.value;
  sel.replaceChildren(...items.map(([v, l]) => new Option(l, String(v))));
  if (items.some(([v]) => String(v) === prev)) sel.value = prev;
}

/** The files of a drop and the folder's name: a dropped folder's files (top level), else the dropped files themselves. */
async function droppedFiles(dt) {
  const entries = [...(dt.items ?? [])].map((i) => i.webkitGetAsEntry?.()).filter(Boolean);
  const dir = entries.find((e) => e.isDirectory);
  if (!dir) return { list: [...dt.files], name: '' };
  const reader = dir.createReader();
  const all = [];
  for (;;) {
    const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
    if (!batch.length) break;
    all.push(...batch);
  }
  const list = await Promise.all(all.filter((e) => e.isFile).map((e) => new Promise((resolve, reject) => e.file(resolve, reject))));
  return { list, name: dir.name };
}

/** The head view: the chosen attention kind and layer, one line drawing per head, heads toggled by their buttons. */
function createHeadPanel() {
  const view = new HeadView($('op-headview'));
  let state = null; // { blocks, lists, active }
  function draw() {
    const block = state.blocks.find((b) => b.name === $('op-kind').value) ?? state.blocks[0];
    const layer = block.layers.find((l) => String(l.layer) === $('op-layer').value) ?? block.layers.at(-1);
    const maps = layer.maps;
    if (!state.active || [...state.active].some((h) => h >= maps.length)) state.active = new Set(maps.map((_, i) => i));
    $('op-heads').replaceChildren(...maps.map((_, h) => {
      const b = Object.assign(document.createElement('button'), { type: 'button', className: 'head', textContent: String(h + 1), title: `head ${h + 1}` });
      b.style.setProperty('--c', HEAD_COLORS[h % HEAD_COLORS.length]);
      b.setAttribute('aria-pressed', String(state.active.has(h)));
      b.setAttribute('aria-label', `head ${h + 1}`);
      b.addEventListener('click', () => {
        if (state.active.has(h)) state.active.delete(h); else state.active.add(h);
        draw();
        $('op-heads').children[h]?.focus();
      });
      return b;
    }));
    view.set({ left: maps[0].rowLabels, right: maps[0].colLabels, heads: maps.map((m) => m.data), active: state.active });
  }
  function fillLayers() {
    const block = state.blocks.find((b) => b.name === $('op-kind').value) ?? state.blocks[0];
    fillSelect($('op-layer'), block.layers.map((l) => [l.layer, `${l.layer + 1}`]));
    draw();
  }
  $('op-kind').addEventListener('change', fillLayers);
  $('op-layer').addEventListener('change', draw);
  return {
    fill(blocks) {
      state = { blocks, active: state?.active ?? null };
      fillSelect($('op-kind'), blocks.map((b) => [b.name, b.title]));
      fillLayers();
    },
    /** Shows one map: its kind, its layer and that head alone. */
    show({ name, layer, head }) {
      if (!state?.blocks.some((b) => b.name === name)) return;
      $('op-kind').value = name;
      fillLayers();
      $('op-layer').value = String(layer);
      state.active = new Set([head]);
      draw();
    },
  };
}

/** The neuron view of a result that carries `qk` (query and key vectors per kind, layer and head). */
function createNeuronPanel() {
  const neuron = new NeuronView($('op-neuron'), { onRead: (t) => { $('op-nv-read').textContent = t; } });
  registerPng('op-neuron', () => $('op-neuron'));
  let out = null;
  function draw(query) {
    const kind = $('op-nv-kind').value;
    const layer = Number($('op-nv-layer').value);
    const head = Number($('op-nv-head').value);
    const pick = (list, name) => [...list].find((m) => m.name === name && m.layer === layer && m.head === head);
    const map = pick(out.attentions, kind);
    const q = pick(out.qk, `${kind}.query`);
    const k = pick(out.qk, `${kind}.key`);
    if (!map || !q || !k) { neuron.clear(); $('op-nv-check').textContent = 'This map has no query and key vectors.'; return; }
    const [rows, cols] = map.dims;
    const { rowLabels, colLabels } = labelsOf(kind, rows, cols, tokenLists(out));
    fillSelect($('op-nv-query'), rowLabels.map((t, i) => [i, `${i + 1}: ${t}`]));
    const i = query ?? Math.min(Number($('op-nv-query').value) || 0, rows - 1);
    $('op-nv-query').value = String(i);
    neuron.set({ q: q.data, k: k.data, dh: q.dims[1], rows, cols, causal: /dec.*self/i.test(kind) || out.new_ids !== undefined,
      map: map.data, queryLabels: rowLabels, keyLabels: colLabels }, i, { onQuery: (n) => { $('op-nv-query').value = String(n); } });
    $('op-nv-check').textContent = `Weights recomputed here from q and k (softmax of q·k/√${q.dims[1]}) differ from the ` +
      `engine's map by at most ${neuron.check().toExponential(1)} over all ${rows} query tokens.`;
  }
  function fillLayers() {
    const maps = [...out.attentions].filter((m) => m.name === $('op-nv-kind').value);
    fillSelect($('op-nv-layer'), [...new Set(maps.map((m) => m.layer))].map((l) => [l, `${l + 1}`]));
    fillSelect($('op-nv-head'), [...new Set(maps.map((m) => m.head))].map((h) => [h, `${h + 1}`]));
    draw();
  }
  $('op-nv-kind').addEventListener('change', fillLayers);
  for (const id of ['op-nv-layer', 'op-nv-head']) $(id).addEventListener('change', () => draw());
  $('op-nv-query').addEventListener('change', () => draw(Number($('op-nv-query').value)));
  return {
    fill(result) {
      out = result;
      $('op-nv-panel').hidden = !result.qk;
      if (!result.qk) { neuron.clear(); return; }
      fillSelect($('op-nv-kind'), [...new Set([...result.attentions].map((m) => m.name))].map((k) => [k, k.replace(/_/g, ' ')]));
      fillLayers();
    },
    show({ name, layer, head }) {
      if (!out?.qk || ![...$('op-nv-kind').options].some((o) => o.value === name)) return;
      $('op-nv-kind').value = name;
      fillLayers();
      $('op-nv-layer').value = String(layer);
      $('op-nv-head').value = String(head);
      draw();
    },
  };
}

// The table's column heads (STAT_INFO's labels, shortened to fit a phone's width; each cell's title has the long one).
const STAT_HEADS = { entropy: 'entropy', distance: 'distance', diagonal: 'itself', previous: 'previous', eos: 'end', punct: 'punct.' };

/** The head statistics by layer as a table (open-views.js layerStats). */
function fillStats(maps) {
  const fmt = (k, x) => (x === null ? '—' : STAT_INFO[k].unit === 'share' ? `${(100 * x).toFixed(0)}%` : x.toFixed(2));
  const rows = [];
  for (const block of layerStats(maps)) {
    const head = document.createElement('tr');
    head.append(Object.assign(document.createElement('th'), { textContent: block.title }),
      ...STAT_KEYS.map((k) => Object.assign(document.createElement('th'), { textContent: STAT_HEADS[k], title: `${STAT_INFO[k].label} (${STAT_INFO[k].unit})` })));
    rows.push(head);
    for (const r of block.rows) {
      const tr = document.createElement('tr');
      tr.append(Object.assign(document.createElement('th'), { textContent: `layer ${r.layer + 1}` }),
        ...STAT_KEYS.map((k) => Object.assign(document.createElement('td'), { textContent: fmt(k, r.stats[k]) })));
      rows.push(tr);
    }
  }
  $('op-stats').replaceChildren(...rows);
}

/** What the section says about the opened model. */
function describeModel(m) {
  const shape = m.layers ? `${m.layers} layers × ${m.heads} heads, ` : '';
  return `${m.name} (${m.architecture}, ${m.task}): ${shape}${MB(m.weightsBytes)} of weights, ` +
    `${m.precision === 'int8' ? 'int8' : 'float32'} in the engine${m.converted ? ', converted here' : ''}; opened in ${(m.ms / 1000).toFixed(1)} s.`;
}

export function setupOpen() {
  const state = { model: null, result: null, input: '' };
  const demo = createDemo({ name: 'open', prefix: 'op', run: () => runForm(), first: () => undefined });
  const { ui } = demo;
  const heads = createHeadPanel();
  const neuron = createNeuronPanel();
  const onOpen = (sel) => {
    modelView.select(sel);
    if (/_(rollout|flow)$/.test(sel.name)) return;
    heads.show(sel);
    neuron.show(sel);
  };
  const modelView = new ModelView($('op-mv'), { readout: $('op-mv-readout'), onOpen });
  registerPng('op-mv', () => modelView.toCanvas({ heading: state.result ? `${state.model.name}: ${state.input}` : '' }));
  wireMapExports(modelView, {
    json: $('op-mv-json'), npy: $('op-mv-npy'), jsonName: (doc) => fileName(doc.model, 'maps'),
    doc: () => state.result && mapsDocument({ task: state.model.task, model: state.model.name, input: state.input,
      tokens: tokenLists(state.result), maps: modelView.maps() }),
    npyName: (m) => state.model && fileName(state.model.name, m.name, `L${m.layer + 1}`, `H${m.head + 1}`),
  });

  function render(out) {
    const blocks = openBlocks(out);
    $('op-panels').hidden = blocks.length === 0;
    if (!blocks.length) { modelView.clear(); return; }
    const all = $('op-mv-derived').checked ? [...blocks, ...derivedBlocks(blocks)] : blocks;
    modelView.set(all);
    fillStats(modelView.maps().filter((m) => !/_(rollout|flow)$/.test(m.name)));
    heads.fill(blocks);
    neuron.fill(out);
  }
  $('op-mv-derived').addEventListener('change', () => state.result && render(state.result));

  /** Opens `list` (Files); `name`: the folder's, the model's name when its files are converted. */
  async function openFiles(list, name = '') {
    const files = Object.fromEntries([...list].map((f) => [f.name, f]));
    demo.touch();
    ui.busy(`Opening ${list.length} file${list.length === 1 ? '' : 's'}…`);
    $('op-run').disabled = true;
    try {
      const m = await call('open', { files, int8: $('op-int8').checked, name }, (e) => { if (e.status === 'step') ui.busy(e.text); },
        { timeoutMs: OPEN_TIMEOUT_MS });
      state.model = m;
      state.result = null;
      $('op-panels').hidden = true; // the views of the model before
      $('op-output').replaceChildren();
      $('op-model').textContent = describeModel(m);
      $('op-text-wrap').hidden = m.task === 'image-classification';
      $('op-image-wrap').hidden = m.task !== 'image-classification';
      $('op-max-wrap').hidden = m.task !== 'text-generation';
      $('op-run').textContent = { translation: 'Translate', 'text-generation': 'Generate' }[m.task] ?? 'Run';
      ui.done(`Opened ${m.name}. Type an input and run it.`);
      document.body.dataset.opened = m.name;
    } catch (err) {
      ui.fail(err);
      if (!/ is still open\)$/.test(err.message)) { // else the model opened before is still there
        state.model = null;
        state.result = null;
        $('op-panels').hidden = true;
        $('op-output').replaceChildren();
        $('op-model').textContent = '';
        document.body.dataset.opened = '';
      }
      $('op-run').disabled = !state.model;
    }
  }

  /** The run's input: the text, or the chosen image's bytes (ViT). */
  async function inputOf(task) {
    if (task !== 'image-classification') return { input: $('op-input').value, shown: $('op-input').value };
    const f = $('op-image').files[0];
    if (!f) throw new Error('choose an image first');
    return { input: f, shown: f.name }; // a Blob: the pipeline decodes it in the worker
  }

  async function runForm() {
    const m = state.model;
    if (!m) { ui.done('Open a model first.'); return; }
    ui.busy(`Running ${m.name}…`);
    try {
      const { input, shown } = await inputOf(m.task);
      const options = m.task === 'text-generation' ? { max_new_tokens: Math.max(1, Math.min(256, Number($('op-max').value) || 16)) } : {};
      options.output_qk = true; // the neuron view's vectors, where the engine returns them (open-worker.js)
      const { output, ms } = await call('open-run', { input, options }, null, { timeoutMs: OPEN_TIMEOUT_MS });
      state.result = output;
      state.input = shown;
      $('op-output').replaceChildren(...outputLines(m.task, output).map((t) => Object.assign(document.createElement('p'), { textContent: t })));
      const t0 = performance.now();
      render(output);
      await new Promise((resolve) => requestAnimationFrame(() => resolve())); // until the drawn views reach the screen
      const draw = performance.now() - t0;
      $('open').dataset.drawMs = draw.toFixed(0);
      const n = tokenLists(output).src.length;
      ui.done(`${m.name}: ${ms.toFixed(0)} ms in the engine${n ? ` (${n} tokens)` : ''}; views drawn in ${draw.toFixed(0)} ms.`);
    } catch (err) {
      ui.fail(err);
    }
  }

  for (const id of ['op-folder', 'op-files']) {
    $(id).addEventListener('change', () => {
      const list = $(id).files;
      if (list.length) openFiles(list, list[0].webkitRelativePath?.split('/')[0] ?? '');
    });
  }
  const drop = $('op-drop');
  drop.addEventListener('dragover', (ev) => { ev.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (ev) => {
    ev.preventDefault();
    drop.classList.remove('over');
    const { list, name } = await droppedFiles(ev.dataTransfer);
    if (list.length) openFiles(list, name);
  });
  return { autorun: () => undefined };
}

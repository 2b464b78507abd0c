// Sentiment demo: label and score; each word shaded by its attention (per hop for the structured self-attention
// model), and the T × T matrix of the relation model.
// The demo's shape (demo.js): inputs (model, sentence) → run in the worker → render (label, shaded words, heatmap,
// model view).
import { Heatmap, rampColor } from './draw.js';
import { runTask } from './client.js';
import { first, groupMaps } from './maps.js';
import { ModelView } from './modelview.js';
import { fileName, mapsDocument, registerPng, wireMapExports, wordsCanvas } from './export.js';
import { $, createDemo, pickOption, wireExamples } from './demo.js';

/** The weights the words are shaded by: the chosen hop (`sel`), or the mean of the hops. */
function shownWeights(current, sel) {
  const T = current.tokens.length;
  if (sel === 'mean' || sel === '' || current.hops.length === 1) {
    const w = new Float32Array(T);
    for (const h of current.hops) for (let i = 0; i < T; i++) w[i] += h[i] / current.hops.length;
    return w;
  }
  return current.hops[Number(sel)];
}

/** The words shaded by `w` (a span each, its weight in data-weight). */
function shadeWords(box, tokens, w) {
  let max = 0;
  for (let i = 0; i < tokens.length; i++) max = Math.max(max, w[i]);
  box.replaceChildren(...tokens.map((tok, i) => {
    const s = document.createElement('span');
    const t = max > 0 ? w[i] / max : 0;
    s.textContent = tok;
    s.style.background = rampColor(t);
    s.style.color = t > 0.6 ? '#fff' : '#1d2329';
    s.title = `${tok}: ${w[i].toFixed(3)}`;
    s.dataset.weight = w[i].toFixed(4);
    return s;
  }));
}

/** The model view's blocks: the hops of structured self-attention (one 1 × T map each), or the T × T relation. */
function sentimentBlocks(name, m, labels, relation) {
  const T = m.cols;
  const maps = relation
    ? [{ rows: T, cols: T, data: m.data, rowLabels: labels, colLabels: labels, keys: labels }]
    : Array.from({ length: m.rows }, (_, r) => ({ rows: 1, cols: T, data: m.data.subarray(r * T, (r + 1) * T),
      rowLabels: [`hop ${r + 1}`], colLabels: labels, keys: labels }));
  return [{
    name, title: relation ? 'relation attention, word × word' : 'structured self-attention',
    headName: relation ? 'map' : 'hop', self: relation, layers: [{ layer: 0, maps }],
  }];
}

/** What a result shows: { result, m (the first map), current ({ tokens, hops }) or null }. */
function readResult(out, model, text) {
  const groups = groupMaps(out.attentions);
  const m = [...groups.values()].flatMap((layers) => [...layers.values()].flat())[0];
  const tokens = out.tokens ?? [];
  const T = m ? m.cols : tokens.length;
  const labels = Array.from({ length: T }, (_, i) => tokens[i] ?? `#${i}`);
  const kind = [...groups.keys()][0];
  const relation = Boolean(m && m.rows === T && T > 1 && /pair|relation/i.test([...groups.keys()].join(' ') + model));
  let current = null;
  if (relation) {
    // relation: T × T; a word's shade is the attention it receives, averaged over the rows.
    const recv = new Float32Array(T);
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) recv[j] += m.data[i * T + j] / T;
    current = { tokens: labels, hops: [recv] };
  } else if (m) {
    current = { tokens: labels, hops: Array.from({ length: m.rows }, (_, r) => m.data.subarray(r * T, (r + 1) * T)) };
  }
  return { result: { model, input: text, tokens: labels, kind, relation }, m, current };
}

export function setupSentiment() {
  const form = () => ({ model: $('st-model').value, text: $('st-input').value.trim() });
  const demo = createDemo({ name: 'sentiment', prefix: 'st', state: form, run: () => runForm() });
  const { ui } = demo;
  const matrix = new Heatmap($('st-matrix'), { onCursor: (t) => { $('st-cursor').textContent = t; } });
  let current = null; // { tokens, hops: Float32Array[] (each [T]) }
  let result = null; // { model, input, tokens, kind, relation }
  const modelView = new ModelView($('st-mv'), { readout: $('st-mv-readout'), onOpen: (sel) => openMap(sel) });
  const weights = () => shownWeights(current, $('st-hop').value);
  const shade = () => (current ? shadeWords($('st-words'), current.tokens, weights()) : $('st-words').replaceChildren());
  registerPng('st-mv', () => modelView.toCanvas({ heading: result ? `${result.model}: ${result.input}` : '' }));
  registerPng('st-words', () => (current ? wordsCanvas(current.tokens, weights(), rampColor) : null));
  wireMapExports(modelView, {
    json: $('st-mv-json'), npy: $('st-mv-npy'), jsonName: (doc) => fileName(doc.model, 'maps'),
    doc: () => result && mapsDocument({ task: 'sentiment-analysis', model: result.model, input: result.input,
      level: 'word', tokens: { tokens: result.tokens }, maps: modelView.maps() }),
    npyName: (m) => result && fileName(result.model, m.name, `L${m.layer + 1}`, `H${m.head + 1}`),
  });
  wireExamples($('st-example'), $('st-input'));

  /** A thumbnail opens its map large: a hop in the shaded words, the relation matrix in its heatmap. */
  function openMap({ name, layer, head }, { scroll = true } = {}) {
    modelView.select({ name, layer, head });
    if (result?.relation) {
      if (scroll) $('st-matrix-panel').scrollIntoView({ block: 'nearest' });
      demo.write({ view: 'heatmap', kind: name, layer, head });
    } else {
      $('st-hop').value = String(head);
      shade();
      if (scroll) $('st-panels').scrollIntoView({ block: 'nearest' });
      demo.write({ view: 'words', kind: name, layer, head });
    }
  }

  $('st-hop').addEventListener('change', () => {
    shade();
    const hop = $('st-hop').value;
    const one = hop !== 'mean' && hop !== '';
    if (one && result) modelView.select({ name: result.kind, layer: 0, head: Number(hop) });
    demo.write({ view: 'words', kind: one ? result?.kind : undefined, layer: one ? 0 : undefined,
      head: one ? Number(hop) : undefined });
  });
  $('st-model').addEventListener('change', () => demo.write({ model: $('st-model').value }));
  $('st-input').addEventListener('change', () => demo.write({ text: $('st-input').value.trim() }));

  // A link with a sentiment state fills the form (the first-sight run uses it) and selects its view afterwards.
  let pending = demo.linked;
  if (pending) {
    pickOption($('st-model'), pending.model);
    if (pending.text) $('st-input').value = pending.text;
  }
  function restoreView() {
    if (!pending) return;
    const p = pending;
    pending = null;
    const pick = modelView.maps().find((m) => m.name === p.kind && m.head === (p.head ?? 0));
    if (pick && p.head !== undefined) openMap(pick, { scroll: false });
    if (p.view === 'model' && pick) demo.write({ view: 'model' });
    const panel = { model: 'st-mv-panel', heatmap: 'st-matrix-panel', words: 'st-panels' }[p.view];
    if (panel && !$(panel).hidden) $(panel).scrollIntoView({ block: 'start' });
  }

  /** The hop chooser and the notes for `current`'s hops (the relation model has no hops). */
  function showHops() {
    const hops = current.hops;
    const hop = $('st-hop');
    const prev = hop.value;
    hop.replaceChildren(new Option('mean of hops', 'mean'), ...hops.map((_, i) => new Option(`hop ${i + 1}`, String(i))));
    hop.value = [...hop.options].some((o) => o.value === prev) ? prev : 'mean';
    $('st-hop-wrap').hidden = hops.length < 2;
    $('st-words-note').textContent = hops.length > 1 ? `(${hops.length} attention hops)` : '';
    $('st-matrix-panel').hidden = true;
  }

  function render(out, model, text) {
    let m;
    ({ result, m, current } = readResult(out, model, text));
    $('st-panels').hidden = false;
    $('st-label').textContent = out.label ?? '?';
    $('st-label').className = /pos/i.test(out.label ?? '') ? 'label pos' : 'label neg';
    $('st-score').textContent = Number.isFinite(out.score) ? `score ${out.score.toFixed(3)}` : '';
    $('st-mv-panel').hidden = !m; // first: the thumbnails' size follows the panel's width
    if (m) modelView.set(sentimentBlocks(result.kind, m, result.tokens, result.relation)); else modelView.clear();
    if (result.relation) {
      $('st-hop-wrap').hidden = true;
      $('st-words-note').textContent = '(attention each word receives, averaged over all words)';
      $('st-matrix-panel').hidden = false;
      const labels = result.tokens;
      matrix.set({ rowLabels: labels, colLabels: labels, data: m.data, rowName: 'word', colName: 'attends to' });
    } else if (m) {
      showHops();
    } else {
      $('st-words-note').textContent = '(this result has no attention maps)';
    }
    shade();
    restoreView();
  }

  async function runForm() {
    const { model, text } = form();
    if (!text) { ui.done('Type a sentence first.'); return; }
    ui.busy(`Classifying with ${model}…`);
    try {
      const { output, ms } = await runTask(ui, 'sentiment-analysis', model, text, { output_attentions: true });
      render(first(output), model, text);
      ui.done(`${model}: ${ms.toFixed(0)} ms`);
    } catch (err) {
      ui.fail(err, `The model ${model} is not available in this build.`);
    }
  }

  return { autorun: demo.autorun };
}

// Translate demo: German → English with the chosen model and beam width; the word links (a line per link between
// the two sentences, dots on the heatmap), the alignment heatmap by words or BPE pieces, a head view for the
// Transformer, align mode (how the model aligns the user's own translation, with its probability per word), and two
// models' alignments side by side.
//
// The demo's shape (demo.js): inputs (model, sentence, beams, coverage β, level) → run in the worker → render: the
// link view and heatmap (translate-views.js), the head, neuron and coverage panels (translate-panels.js), the model
// view with its exports; align mode and the comparison (translate-align.js) are two more forms of the same shape.
// `t` below is the demo's state: its views, its panels, its results and how to run it.
import { Heatmap, LinkView } from './draw.js';
import { runTask } from './client.js';
import { first } from './maps.js';
import { ModelView } from './modelview.js';
import { derivedBlocks } from './rollout.js';
import { fileName, mapsDocument, registerPng, wireMapExports } from './export.js';
import { $, createDemo, pickOption, wireExamples } from './demo.js';
import { EXAMPLES, KEY_TEXT, drawAlignment, linksNote, missingText, modelBlocks, wordTexts } from './translate-views.js';
import { createCoveragePanel, createHeadPanel, createNeuronPanel } from './translate-panels.js';
import { buildCompareSides, setupAlignPanel, setupComparePanel } from './translate-align.js';

export { EXAMPLES, COVERAGE_EXAMPLE, modelBlocks } from './translate-views.js';

const IDLE_MAP = 'Hover a cell (or focus the map and use the arrow keys).';
const IDLE_LINKS = 'Hover a word (or focus the drawing and use the arrow keys).';

/** A link drawing and a heatmap (ids <prefix>-links / <prefix>-heatmap or -map, with their cursor lines). */
function alignmentViews(prefix, idleMap = '', idleLinks = '') {
  const cursorText = (el, idle) => (t) => { el.textContent = t || idle; };
  return {
    heatmap: new Heatmap($(`${prefix}-heatmap`) ?? $(`${prefix}-map`), { onCursor: cursorText($(`${prefix}-cursor`), idleMap) }),
    links: new LinkView($(`${prefix}-links`), { onCursor: cursorText($(`${prefix}-links-cursor`), idleLinks) }),
  };
}

/** Word level (default) or BPE pieces, for every heatmap of the section and the head view. */
const level = () => document.querySelector('input[name=tr-level]:checked')?.value ?? 'word';
const beamsOf = () => Math.max(1, Math.min(8, Number($('tr-beams').value) || 1));

function setKeyLines() {
  const text = KEY_TEXT[level()];
  for (const id of ['tr-map-key', 'al-map-key']) $(id).querySelector('.text').textContent = text;
  $('cmp-key').querySelector('.text').textContent = text.replace(/^Darker/, 'darker').replace(/this|that/g, 'the');
}

/** The main result in every view of the section. */
function drawMain(t) {
  const out = t.results.main;
  if (!out) return;
  $('tr-map-note').textContent = drawAlignment(t.main, out, level());
  $('tr-links-note').textContent = linksNote(out);
  t.heads.fill(out);
  fillModelView(t, out);
  t.coverage.fill(out);
  t.neuron.fill(out);
}

function fillModelView(t, out) {
  const words = level() === 'word' && out.word_attentions?.length > 0;
  const blocks = modelBlocks(out, words);
  if ($('tr-mv-derived').checked) blocks.push(...derivedBlocks(blocks)); // rollout and flow of the self-attention
  $('tr-mv-panel').hidden = blocks.length === 0;
  if (!blocks.length) { t.modelView.clear(); return; }
  t.modelView.set(blocks);
}

/** Rollout and flow open in the large heatmap (rows: output positions, columns: input positions). */
function openDerived(t, { name, layer }, derived) {
  t.main.heatmap.set({ rowLabels: derived.rowLabels, colLabels: derived.colLabels, data: derived.data, marks: [],
    rowName: 'output', colName: 'input' });
  const kind = name.replace(/_(rollout|flow)$/, '').replace(/_/g, ' ');
  // How many layers the self-attention kind behind the block has.
  const layers = t.modelView.maps().filter((m) => m.name === name.replace(/_flow$/, '_rollout')).length;
  $('tr-map-note').textContent = name.endsWith('_flow')
    ? `(${kind}: attention flow through all ${layers} layers, max flow input → output; Abnar & Zuidema 2020)`
    : `(${kind}: attention rollout after layer ${layer + 1}, residual ½; Abnar & Zuidema 2020)`;
}

/** A thumbnail of the model view opens its map large: in the head view (Transformer) or the heatmap (RNN). */
function openMap(t, { name, layer, head, map }, { scroll = true } = {}) {
  t.modelView.select({ name, layer, head });
  const derived = map ?? t.modelView.selectedMap();
  let view = 'heatmap';
  if (/_(rollout|flow)$/.test(name) && derived) openDerived(t, { name, layer }, derived);
  else if (t.heads.has(name)) {
    t.heads.show(name, layer, head);
    view = 'head';
  }
  if (scroll) $(view === 'head' ? 'tr-heads-panel' : 'tr-map-panel').scrollIntoView({ block: 'nearest' });
  t.demo.write({ view, kind: name, layer, head });
}

/** A link's view (kind, layer, head), selected once its result has arrived. */
function restoreView(t) {
  if (!t.pending) return;
  const p = t.pending;
  t.pending = null;
  const maps = t.modelView.maps();
  const pick = maps.find((m) => m.name === p.kind && m.layer === (p.layer ?? m.layer) && m.head === (p.head ?? 0)) ??
    maps.find((m) => m.name === p.kind);
  const panel = { model: 'tr-mv-panel', head: 'tr-heads-panel', heatmap: 'tr-map-panel' }[p.view];
  if (pick && t.heads.has(pick.name) && p.view !== 'model' && p.head === undefined) {
    t.heads.show(pick.name, p.layer); // a head-view state with several heads on: kind and layer only
  } else if (pick) {
    openMap(t, pick, { scroll: false });
    if (p.view === 'model') t.demo.write({ view: 'model' });
  }
  if (panel && !$(panel).hidden) $(panel).scrollIntoView({ block: 'start' });
}

/** The numbers the engine copied from the source by alignment (copy_numbers), with what the model wrote. */
function showCopies(copies = []) {
  $('tr-copies').hidden = copies.length === 0;
  $('tr-copies').textContent = copies.length === 0 ? '' : `Numbers copied from the German by the word alignment: ${
    copies.map((c) => `the model wrote “${c.model}”, aligned with the German number → “${c.text}”`).join('; ')}.`;
}

async function runForm(t) {
  const model = $('tr-model').value;
  const text = $('tr-input').value.trim();
  const beams = beamsOf();
  const { ui } = t.demo;
  if (!text) { ui.done('Type a German sentence first.'); return; }
  ui.busy(`Translating with ${model}…`);
  try {
    const typed = $('tr-coverage-beta').value.trim(); // empty: the model's own default
    const beta = typed === '' ? NaN : Number(typed);
    const { out, ms, text: result } = await t.translate(model, text, beams,
      { word_maps: true, ...(Number.isFinite(beta) && beta >= 0 ? { coverage_beta: beta } : {}),
        ...($('tr-nv-on').checked && !/rnn/.test(model) ? { output_qk: true } : {}) });
    $('tr-output').textContent = result;
    showCopies(out.number_copies);
    $('tr-panels').hidden = false;
    t.results.main = { ...out, model, input: text };
    drawMain(t);
    restoreView(t);
    ui.done(`${model}, beam ${beams}: ${ms.toFixed(0)} ms`);
  } catch (err) {
    ui.fail(err, missingText(model));
  }
}

/** The model view's exports: its maps (the level shown) as JSON, the selected one as .npy, the view as PNG. */
function wireModelViewExports(t) {
  const { results, modelView } = t;
  registerPng('tr-mv', () => modelView.toCanvas({ heading: results.main ? `${results.main.model}: ${results.main.input ?? ''}` : '' }));
  wireMapExports(modelView, {
    json: $('tr-mv-json'), npy: $('tr-mv-npy'), jsonName: (doc) => fileName(doc.model, 'maps', doc.level),
    doc: () => results.main && mapsDocument({
      task: 'translation', model: results.main.model, input: results.main.input, level: level(),
      tokens: { source: results.main.source_tokens, target: results.main.target_tokens,
        source_words: wordTexts(results.main.source_words), target_words: wordTexts(results.main.target_words) },
      maps: modelView.maps(),
    }),
    npyName: (m) => results.main && fileName(results.main.model, m.name, `L${m.layer + 1}`, `H${m.head + 1}`, level()),
  });
  $('tr-mv-derived').addEventListener('change', () => { if (results.main) fillModelView(t, results.main); });
}

/** The inputs: the examples, a link's model and sentence (the first-sight run uses them), the URL following edits. */
function wireInputs(t) {
  for (const s of EXAMPLES) $('tr-example').append(new Option(s, s));
  wireExamples($('tr-example'), $('tr-input'));
  $('tr-model').addEventListener('change', () => t.demo.write({ model: $('tr-model').value }));
  $('tr-input').addEventListener('change', () => t.demo.write({ text: $('tr-input').value.trim() }));
  const st = t.demo.linked;
  if (!st) return;
  pickOption($('tr-model'), st.model);
  if (st.text) $('tr-input').value = st.text;
  if (st.kind || st.view) t.pending = st;
}

export function setupTranslate() {
  const form = () => ({ model: $('tr-model').value, text: $('tr-input').value.trim() });
  // The URL's state (state.js): always the whole of this demo's (its form and the view), so that a link made after
  // working in another demo still reopens this one. A link without a demo is this one's.
  const demo = createDemo({ name: 'translate', prefix: 'tr', state: form, run: () => runForm(t), orphan: true });
  const results = { main: null, al: null, a: null, b: null };
  const translate = async (model, text, beams, extra = {}) => {
    const { output, ms } = await runTask(demo.ui, 'translation', model, text, { num_beams: beams, output_attentions: true, ...extra });
    const out = first(output);
    return { out, ms, text: out.text };
  };
  const t = {
    demo, results, translate, pending: null,
    main: alignmentViews('tr', IDLE_MAP, IDLE_LINKS),
    modelView: new ModelView($('tr-mv'), { readout: $('tr-mv-readout'), onOpen: (sel) => openMap(t, sel) }),
  };
  const ctx = { level, results, translate, ui: demo.ui, write: demo.write, runForm: () => runForm(t) };
  t.heads = createHeadPanel(ctx);
  t.neuron = createNeuronPanel(ctx);
  t.coverage = createCoveragePanel(ctx);
  const align = setupAlignPanel({ ...ctx, view: alignmentViews('al', IDLE_MAP, IDLE_LINKS) });
  buildCompareSides();
  const cmpViews = { a: alignmentViews('cmp-a'), b: alignmentViews('cmp-b') };
  const compare = setupComparePanel({ ...ctx, views: cmpViews });
  wireModelViewExports(t);
  wireInputs(t);

  for (const r of document.querySelectorAll('input[name=tr-level]')) {
    r.addEventListener('change', () => {
      setKeyLines();
      drawMain(t);
      align.redraw();
      compare.redraw();
    });
  }
  setKeyLines();

  let lastWidth = innerWidth;
  addEventListener('resize', () => {
    if (Math.abs(innerWidth - lastWidth) < 20) return;
    lastWidth = innerWidth;
    t.heads.redraw();
    for (const v of [t.main, align.view, cmpViews.a, cmpViews.b]) { v.heatmap.draw(); v.links.draw(); }
  });

  return { autorun: demo.autorun };
}

// The translation demo's panels beside the alignment (each renders the main result, translate.js calls fill(out)):
// the head view (one line drawing per head of a layer), the neuron view (the query and key vectors behind a map) and
// the coverage view (how much of the source the translation has attended, and a β = 0 / β = b comparison).
import { HeadView, HEAD_COLORS } from './draw.js';
import { groupMaps, labelsFor, crossName } from './maps.js';
import { NeuronView } from './neuron.js';
import { CoverageView, coverageSignal } from './coverage.js';
import { downloadText, fileName, registerPng } from './export.js';
import { $ } from './demo.js';
import { COVERAGE_EXAMPLE, missingText, tokenLabels, wordTexts } from './translate-views.js';

/** Fills a <select> with [value, label] items, keeping its value when it is still offered. */
function fillSelect(sel, items, keep = true) {
  const prev = sel.value;
  sel.replaceChildren(...items.map(([v, l]) => new Option(l, String(v))));
  if (keep && items.some(([v]) => String(v) === prev)) sel.value = prev;
}

/**
 * The head view: for the chosen kind and layer, every head's weights as lines between the two token lists, heads
 * toggled by their buttons. `write`: the demo's URL state.
 */
export function createHeadPanel({ level, results, write }) {
  const headView = new HeadView($('tr-headview'));
  let heads = null; // { groups, src, tgt, active }

  /** The head view's selection (kind, layer, the one active head if only one) into the URL. */
  function headViewState() {
    if (!heads) return;
    const active = [...(heads.active ?? [])];
    write({ view: 'head', kind: $('tr-kind').value, layer: Number($('tr-layer').value),
      head: active.length === 1 ? active[0] : undefined });
  }

  function fillHeadView(out) {
    // Word level: every map merged to words (word_maps: true); pieces: the maps as computed.
    const words = level() === 'word' && out.word_attentions?.length;
    const groups = groupMaps(words ? out.word_attentions : out.attentions);
    const multi = [...groups.values()].some((layers) => layers.size > 1 || [...layers.values()].some((h) => h.length > 1));
    $('tr-heads-panel').hidden = !multi;
    if (!multi) { heads = null; return; }
    const { src, tgt } = words ? { src: wordTexts(out.source_words), tgt: wordTexts(out.target_words) } : tokenLabels(out);
    const kind = $('tr-kind');
    const prevKind = kind.value;
    kind.replaceChildren(...[...groups.keys()].map((n) => new Option(n.replace(/_/g, ' '), n)));
    kind.value = groups.has(prevKind) ? prevKind : crossName(groups);
    heads = { groups, src, tgt, active: heads?.active ?? null };
    fillLayers();
  }

  function fillLayers() {
    const layers = heads.groups.get($('tr-kind').value);
    const layer = $('tr-layer');
    const prev = layer.value;
    layer.replaceChildren(...[...layers.keys()].map((l) => new Option(`${l + 1}`, String(l))));
    layer.value = prev !== '' && layers.has(Number(prev)) ? prev : String([...layers.keys()].pop());
    drawHeads();
  }

  function drawHeads() {
    const list = heads.groups.get($('tr-kind').value).get(Number($('tr-layer').value));
    if (!heads.active || [...heads.active].some((h) => h >= list.length)) heads.active = new Set(list.map((_, i) => i));
    const box = $('tr-heads');
    box.replaceChildren(...list.map((_, h) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'head';
      b.style.setProperty('--c', HEAD_COLORS[h % HEAD_COLORS.length]);
      b.setAttribute('aria-pressed', String(heads.active.has(h)));
      b.setAttribute('aria-label', `head ${h + 1}`);
      b.title = `head ${h + 1}`;
      b.textContent = String(h + 1);
      b.addEventListener('click', () => {
        if (heads.active.has(h)) heads.active.delete(h); else heads.active.add(h);
        drawHeads();
        box.children[h]?.focus();
        headViewState();
      });
      return b;
    }));
    const { rows, cols } = list[0];
    const name = $('tr-kind').value;
    const srcSide = /enc.*self/i.test(name);
    const left = srcSide ? labelsFor(rows, heads.src, heads.tgt) : labelsFor(rows, heads.tgt, heads.src);
    const right = /dec.*self/i.test(name) ? labelsFor(cols, heads.tgt, heads.src) : labelsFor(cols, heads.src, heads.tgt);
    headView.set({ left, right, heads: list.map((h) => h.data), active: heads.active });
  }

  $('tr-kind').addEventListener('change', () => { fillLayers(); headViewState(); });
  $('tr-layer').addEventListener('change', () => { drawHeads(); headViewState(); });
  $('tr-headview-svg').addEventListener('click', () => {
    const svg = headView.toSvg();
    if (svg) downloadText(svg, `${fileName(results.main?.model, 'head-view', $('tr-kind').value, `L${Number($('tr-layer').value) + 1}`)}.svg`, 'image/svg+xml');
  });

  return {
    fill: fillHeadView,
    redraw: () => headView.draw(),
    /** Whether the head view shows the attention kind `name`. */
    has: (name) => Boolean(heads?.groups.has(name)),
    /** Shows `name`'s layer `layer` (when it has it); with `head`, that head alone. */
    show(name, layer, head) {
      $('tr-kind').value = name;
      fillLayers();
      if (layer !== undefined && heads.groups.get(name).has(layer)) $('tr-layer').value = String(layer);
      if (head !== undefined) heads.active = new Set([head]);
      drawHeads();
    },
  };
}

/** The neuron view (neuron.js): the query/key vectors of the result (output_qk), asked for only while its box is ticked. */
export function createNeuronPanel({ results, runForm }) {
  const neuron = new NeuronView($('tr-neuron'), { onRead: (t) => { $('tr-nv-read').textContent = t; } });
  registerPng('tr-neuron', () => $('tr-neuron'));
  const nvSource = (out) => (out.sentences?.length > 1 ? out.sentences[Number($('tr-nv-sentence').value) || 0] : out);
  function fillNeuron(out) {
    const transformer = out.attentions?.some((m) => m.name === 'decoder_self');
    $('tr-nv-panel').hidden = !transformer;
    const on = $('tr-nv-on').checked;
    $('tr-nv-controls').hidden = !on || !transformer;
    if (!transformer || !on) { neuron.clear(); $('tr-nv-read').textContent = ''; $('tr-nv-check').textContent = ''; return; }
    const many = out.sentences?.length > 1;
    $('tr-nv-sentence-wrap').hidden = !many;
    if (many) fillSelect($('tr-nv-sentence'), out.sentences.map((x, i) => [i, `${i + 1}: ${x.text.slice(0, 40)}`]));
    const r = nvSource(out);
    if (!r.qk) { neuron.clear(); $('tr-nv-check').textContent = 'Asking the engine for the vectors…'; return; }
    const kinds = [...new Set(r.attentions.map((m) => m.name))];
    fillSelect($('tr-nv-kind'), kinds.map((k) => [k, k.replace(/_/g, ' ')]));
    if (!kinds.includes($('tr-nv-kind').value)) $('tr-nv-kind').value = kinds.includes('cross') ? 'cross' : kinds[0];
    fillNeuronLayers();
  }
  function fillNeuronLayers() {
    const r = nvSource(results.main);
    const maps = r.attentions.filter((m) => m.name === $('tr-nv-kind').value);
    fillSelect($('tr-nv-layer'), [...new Set(maps.map((m) => m.layer))].map((l) => [l, `${l + 1}`]));
    fillSelect($('tr-nv-head'), [...new Set(maps.map((m) => m.head))].map((h) => [h, `${h + 1}`]));
    drawNeuron();
  }
  function drawNeuron(query) {
    const r = nvSource(results.main);
    const kind = $('tr-nv-kind').value;
    const layer = Number($('tr-nv-layer').value);
    const head = Number($('tr-nv-head').value);
    const pick = (name) => (name === kind ? r.attentions : r.qk).find((m) => m.name === name && m.layer === layer && m.head === head);
    const map = pick(kind);
    const q = pick(`${kind}.query`);
    const k = pick(`${kind}.key`);
    if (!map || !q || !k) { neuron.clear(); return; }
    const { src, tgt } = tokenLabels(r);
    const queryLabels = kind === 'encoder_self' ? src : tgt;
    const keyLabels = kind === 'cross' || kind === 'encoder_self' ? src : tgt;
    const rows = map.dims[0];
    fillSelect($('tr-nv-query'), queryLabels.slice(0, rows).map((t, i) => [i, `${i + 1}: ${t}`]));
    const i = query ?? Math.min(Number($('tr-nv-query').value) || 0, rows - 1);
    $('tr-nv-query').value = String(i);
    neuron.set({ q: q.data, k: k.data, dh: q.dims[1], rows, cols: map.dims[1], causal: kind === 'decoder_self',
      map: map.data, queryLabels, keyLabels }, i, { onQuery: (n) => { $('tr-nv-query').value = String(n); } });
    const worst = neuron.check();
    $('tr-nv-check').textContent = `Weights recomputed here from q and k (softmax of q·k/√${q.dims[1]}) differ from the ` +
      `engine's map by at most ${worst.toExponential(1)} over all ${rows} query tokens.`;
  }
  $('tr-nv-on').addEventListener('change', () => {
    if (!results.main) return;
    if ($('tr-nv-on').checked && !nvSource(results.main).qk) runForm(); else fillNeuron(results.main);
  });
  $('tr-nv-sentence').addEventListener('change', () => fillNeuron(results.main));
  $('tr-nv-kind').addEventListener('change', fillNeuronLayers);
  for (const id of ['tr-nv-layer', 'tr-nv-head']) $(id).addEventListener('change', () => drawNeuron());
  $('tr-nv-query').addEventListener('change', () => drawNeuron(Number($('tr-nv-query').value)));
  return { fill: fillNeuron };
}

/** Coverage (coverage.js): the main result's, with a slider over its target steps; and a β = 0 / β = b comparison. */
export function createCoveragePanel({ level, ui, write, translate, runForm }) {
  const coverage = new CoverageView($('tr-coverage'), { onRead: (t) => { $('tr-cov-read').textContent = t; } });
  const coverageCmp = [new CoverageView($('tr-coverage-0')), new CoverageView($('tr-coverage-1'))];
  function coverageModel(out) {
    const words = level() === 'word' && out.word_attentions?.length > 0;
    const signal = coverageSignal(out, words);
    if (!signal) return null;
    const lists = words ? { src: wordTexts(out.source_words), tgt: wordTexts(out.target_words) } : tokenLabels(out);
    return { signal, src: labelsFor(signal.cols, lists.src), tgt: labelsFor(signal.rows, lists.tgt) };
  }
  function fillCoverage(out) {
    const model = coverageModel(out);
    $('tr-cov-panel').hidden = !model;
    if (!model) { coverage.clear(); return; }
    const step = $('tr-cov-step');
    step.max = String(model.signal.rows);
    step.value = String(model.signal.rows);
    $('tr-cov-step-out').textContent = `${model.signal.rows}: ${model.tgt[model.signal.rows - 1]}`;
    coverage.set(model);
  }
  $('tr-cov-step').addEventListener('input', () => {
    if (!coverage.model) return;
    const t = Number($('tr-cov-step').value) - 1;
    $('tr-cov-step-out').textContent = `${t + 1}: ${coverage.model.tgt[t]}`;
    coverage.show(t);
  });
  const betaShown = () => Number($('tr-coverage-beta').value) > 0 ? Number($('tr-coverage-beta').value) : 1;
  $('tr-coverage-beta').addEventListener('input', () => { $('tr-cov-beta-shown').textContent = String(betaShown()); });
  async function compareCoverage() {
    const model = $('tr-model').value;
    const text = $('tr-input').value.trim();
    if (!text) { ui.done('Type a German sentence first.'); return; }
    const beams = Math.max(2, Math.min(8, Number($('tr-beams').value) || 4)); // β acts in the beam search only
    const beta = betaShown();
    ui.busy(`Translating with β = 0 and β = ${beta} (beam ${beams})…`);
    try {
      const runs = [];
      for (const b of [0, beta]) runs.push(await translate(model, text, beams, { coverage_beta: b, word_maps: true }));
      runs.forEach((r, i) => {
        $(`tr-cov-text-${i}`).textContent = `β = ${i ? beta : 0}: ${r.text}`;
        coverageCmp[i].set(coverageModel({ ...r.out, model }));
      });
      $('tr-cov-cmp').hidden = false;
      ui.done(`${model}, beam ${beams}, β = 0 and β = ${beta}: ${runs.reduce((a, r) => a + r.ms, 0).toFixed(0)} ms`);
    } catch (err) {
      ui.fail(err, missingText(model));
    }
  }
  $('tr-cov-compare').addEventListener('click', () => compareCoverage());
  // The example: the Multi30k Transformer drops "Statuen" with β = 0 and says "their statues" with β = 1 (beam 4).
  $('tr-cov-example').addEventListener('click', async () => {
    $('tr-model').value = 'de-en-transformer';
    $('tr-input').value = COVERAGE_EXAMPLE;
    $('tr-beams').value = '4';
    $('tr-coverage-beta').value = '1';
    $('tr-cov-beta-shown').textContent = '1';
    write({ model: 'de-en-transformer', text: COVERAGE_EXAMPLE });
    await runForm();
    await compareCoverage();
  });
  return { fill: fillCoverage };
}

// Translate demo: German → English with the chosen model and beam width; the word links (a line per link between
// the two sentences, dots on the heatmap), the alignment heatmap by words or BPE pieces, a head view for the
// Transformer, align mode (how the model aligns the user's own translation, with its probability per word), and two
// models' alignments side by side.
import { Heatmap, HeadView, LinkView, HEAD_COLORS } from './draw.js';
import { runTask, runAlign as runAlignTask, statusUi, errorText } from './client.js';
import { first, groupMaps, meanHeads, showPiece, labelsFor, crossName } from './maps.js';
import { ModelView } from './modelview.js';
import { derivedBlocks } from './rollout.js';
import { NeuronView } from './neuron.js';
import { CoverageView, coverageSignal } from './coverage.js';
import { copyLink, download, downloadText, fileName, mapsDocument, npyBytes, registerPng } from './export.js';
import { INITIAL_STATE, writeState } from './state.js';

// Everyday German (the "examples" of models/de-en-general/golden.json), then Multi30k validation sentences (the
// golden cases of models/de-en-transformer/golden.json).
export const EXAMPLES = [
  'Kannst du mir bitte helfen?',
  'Wie geht es dir?',
  'Ich habe morgen keine Zeit.',
  'Der Zug hat zehn Minuten Verspätung.',
  'Ein Mann fährt mit dem Fahrrad über eine Brücke.',
  'Das Wetter ist heute schön.',
  'Zwei Kinder mit gelben Jacken spielen im Schlamm.',
  'Ein Mann in Blau fährt mit einem Fahrrad auf einer Piste.',
  'Ein Mann mit einem blauen Rucksack liest die Zeitung, während er auf die U-Bahn wartet.',
  'Eine Gruppe von Männern lädt Baumwolle auf einen Lastwagen',
  'Ein Polizist in Uniform trägt einen Ohrhörer.',
  'Ein schwarz gekleideter Junge schlägt ein Rad am Strand.',
  'Ein Kind sitzt in einer Menschenmenge auf den Schultern seines Vaters.',
  'Zwei Männer gehen einen unbefestigten Weg entlang.',
  'Ein Mann rennt mithilfe von Schneeschuhen durch den Schnee.',
];

// Under-translation that the coverage penalty repairs (de-en-transformer, beam 4): β = 0 gives "Two men
// acrobaticely as they watch." — "Statuen" is barely attended — and β = 1 "Two men acrobaticely as they watch their
// statues." (attnlens-cli translate --model models/de-en-transformer --beams 4 --coverage-beta 0 / 1).
export const COVERAGE_EXAMPLE = 'Zwei Männer tun so als seien sie Statuen, während Frauen ihnen zusehen.';

const MODELS = [
  ['de-en-general', 'General Transformer'],
  ['de-en-transformer', 'Transformer'],
  ['de-en-rnn-additive', 'GRU + additive'],
  ['de-en-rnn-general', 'LSTM + general'],
];
const missingText = (model) => `The model ${model} is not available in this build (no bundle under /models/${model}/).`;

const $ = (id) => document.getElementById(id);

/** Token labels of a translation result: sources (pieces) and targets (pieces or words). */
function tokenLabels(out) {
  const src = (out.source_tokens ?? out.source_pieces ?? []).map(showPiece);
  const tgt = (out.target_tokens ?? out.target_pieces ?? out.tokens ?? []).map(showPiece);
  return { src, tgt };
}

const wordTexts = (words) => (Array.isArray(words) ? words.map((w) => w.text) : []);

/** 'layer-mean 1, gdfa' / 'head 1.0, argmax' / 'cross, gdfa' → { layer, head, extraction } (0-based). */
function parseMethod(method = '') {
  const ml = /layer-mean (\d+)/.exec(method);
  const mh = /head (\d+)\.(\d+)/.exec(method);
  const extraction = /,\s*(\w+)\s*$/.exec(method)?.[1] ?? '';
  if (mh) return { layer: Number(mh[1]), head: Number(mh[2]), extraction };
  return { layer: ml ? Number(ml[1]) : undefined, head: undefined, extraction };
}

/**
 * The model view's blocks for a result: one per attention kind (encoder self, decoder self, cross; the RNN's one cross
 * map), rows = layers, columns = heads, at word or piece level like the head view. Labels as the head view's; `keys`
 * (the raw tokens: '▁' marks and '</s>' kept) feed the head statistics.
 */
export function modelBlocks(out, words) {
  const groups = groupMaps(words ? out.word_attentions : out.attentions);
  const lists = words
    ? { src: wordTexts(out.source_words), tgt: wordTexts(out.target_words) }
    : { src: out.source_tokens ?? out.source_pieces ?? [], tgt: out.target_tokens ?? out.target_pieces ?? [] };
  const show = words ? (l) => l : (l) => l.map(showPiece);
  const blocks = [];
  for (const [name, layers] of groups) {
    const encSelf = /enc.*self/i.test(name);
    const decSelf = /dec.*self/i.test(name);
    const self = /self/i.test(name);
    blocks.push({
      name,
      title: name.replace(/_/g, ' '),
      headName: 'head',
      self,
      layers: [...layers.entries()].map(([layer, heads]) => ({
        layer: Math.max(0, layer),
        maps: heads.map((h) => {
          const rowKeys = encSelf ? labelsFor(h.rows, lists.src, lists.tgt) : labelsFor(h.rows, lists.tgt, lists.src);
          const colKeys = decSelf ? labelsFor(h.cols, lists.tgt, lists.src) : labelsFor(h.cols, lists.src, lists.tgt);
          return { rows: h.rows, cols: h.cols, data: h.data, rowLabels: show(rowKeys), colLabels: show(colKeys), keys: colKeys };
        }),
      })),
    });
  }
  return blocks;
}

/** Where the links come from, in words: 'layer 2 of 3, mean of its heads' (the Transformer) or 'the cross attention'. */
function describeSource(out, layers) {
  const { layer, head } = parseMethod(out.alignment_method);
  if (layer === undefined) return 'the cross attention';
  const of = layers > 1 ? ` of ${layers}` : '';
  return head === undefined ? `layer ${layer + 1}${of}, mean of its heads` : `layer ${layer + 1}${of}, head ${head + 1}`;
}

/** How the links were extracted from the word map. */
function describeExtraction(out) {
  const { extraction } = parseMethod(out.alignment_method);
  return extraction === 'argmax' ? 'argmax: one link per English word'
    : extraction === 'gdfa' ? 'grow-diag-final-and of both directions' : extraction;
}

/** Number of decoder layers of a result's cross attention (0 when unknown). */
function crossLayers(out) {
  const groups = groupMaps(out.attentions);
  return groups.size ? groups.get(crossName(groups)).size : 0;
}

/** '(12 links from layer 2 of 3, mean of its heads; grow-diag-final-and of both directions)' */
function linksNote(out) {
  const n = out.alignment?.length ?? 0;
  if (!n) return '(no links: this result has no attention maps)';
  return `(${n} link${n > 1 ? 's' : ''} from ${describeSource(out, crossLayers(out))}; ${describeExtraction(out)})`;
}

/**
 * The piece-level alignment heatmap: the cross attention the links were taken from (the layer, or head, named by
 * alignment_method; else the last layer, averaged over heads), with the pieces of linked words marked.
 */
function pieceAlignment(out) {
  const groups = groupMaps(out.attentions);
  if (!groups.size) return null;
  const name = crossName(groups);
  const layers = groups.get(name);
  const want = parseMethod(out.alignment_method);
  const layer = want.layer !== undefined && layers.has(want.layer) ? want.layer : [...layers.keys()].pop();
  let heads = layers.get(layer);
  if (!heads.length) return null;
  const all = heads.length;
  if (want.head !== undefined && heads[want.head]) heads = [heads[want.head]];
  const m = heads.length > 1 ? meanHeads(heads) : heads[0];
  const { src, tgt } = tokenLabels(out);
  const note = layers.size > 1 || all > 1
    ? `(${name}, layer ${layer + 1} of ${layers.size}, ${heads.length > 1 ? `mean of ${heads.length} heads` : `head ${want.head + 1} of ${all}`})`
    : `(${name})`;
  const marks = [];
  const sw = out.source_words ?? [];
  const tw = out.target_words ?? [];
  for (const [s, t] of out.alignment ?? []) {
    const [s0, s1] = sw[s]?.pieces ?? [0, 0];
    const [t0, t1] = tw[t]?.pieces ?? [0, 0];
    for (let r = t0; r < t1; r++) for (let c = s0; c < s1; c++) marks.push([r, c]);
  }
  return {
    note,
    model: {
      rowLabels: labelsFor(m.rows, tgt), colLabels: labelsFor(m.cols, src), data: m.data, marks,
      rowName: 'target', colName: 'source',
    },
  };
}

/** The word-level heatmap: alignment_map [target words × source words], the links marked. */
function wordAlignment(out) {
  const src = wordTexts(out.source_words);
  const tgt = wordTexts(out.target_words);
  const am = out.alignment_map;
  if (!am?.data || !src.length || !tgt.length || am.data.length !== src.length * tgt.length) return null;
  return {
    note: `(words: ${describeSource(out, crossLayers(out))})`,
    model: {
      rowLabels: tgt, colLabels: src, data: am.data, marks: (out.alignment ?? []).map(([s, t]) => [t, s]),
      rowName: 'target', colName: 'source',
    },
  };
}

/** Per target word: the sum of its pieces' log-probabilities (align() results only). */
function wordLogprobs(out) {
  const lp = out.token_logprobs;
  if (!lp?.length || !out.target_words?.length) return null;
  return out.target_words.map((w) => {
    let sum = 0;
    for (let i = w.pieces[0]; i < w.pieces[1] && i < lp.length; i++) sum += lp[i];
    return sum;
  });
}

/** What the link view draws for a result. */
function linkModel(out) {
  const source = wordTexts(out.source_words);
  const target = wordTexts(out.target_words);
  if (!source.length || !target.length) return null;
  const am = out.alignment_map;
  const ns = source.length;
  const ok = am?.data?.length === ns * target.length;
  const lps = wordLogprobs(out);
  return {
    source, target, links: (out.alignment ?? []).filter(([s, t]) => s < ns && t < target.length),
    sourceName: 'German', targetName: 'English',
    weights: ok ? (s, t) => am.data[t * ns + s] : undefined,
    targetProb: lps ? lps.map((l) => Math.exp(l)) : undefined,
    targetNote: lps ? (t) => `log p ${lps[t].toFixed(2)}, p ${Math.exp(lps[t]).toFixed(2)}` : undefined,
  };
}

const KEY_TEXT = {
  word: 'Darker cells: more attention from this English word (row) to that German word (column); orange dots: the links.',
  piece: 'Darker cells: more attention from this English piece (row) to that German piece (column); orange dots: pieces of linked words.',
};

export function setupTranslate() {
  const ui = statusUi({ progress: $('tr-progress'), status: $('tr-status'), button: $('tr-run') });
  const alUi = statusUi({ progress: $('al-progress'), status: $('al-status'), button: $('al-run') });
  const cursorText = (el, idle) => (t) => { el.textContent = t || idle; };
  const view = (prefix, { idleMap = '', idleLinks = '' } = {}) => ({
    heatmap: new Heatmap($(`${prefix}-heatmap`) ?? $(`${prefix}-map`), { onCursor: cursorText($(`${prefix}-cursor`), idleMap) }),
    links: new LinkView($(`${prefix}-links`), { onCursor: cursorText($(`${prefix}-links-cursor`), idleLinks) }),
  });
  const idle = { idleMap: 'Hover a cell (or focus the map and use the arrow keys).',
    idleLinks: 'Hover a word (or focus the drawing and use the arrow keys).' };
  const main = view('tr', idle);
  const aligned = view('al', idle);
  const cmpViews = { a: view('cmp-a'), b: view('cmp-b') };
  const headView = new HeadView($('tr-headview'));
  const modelView = new ModelView($('tr-mv'), { readout: $('tr-mv-readout'), onOpen: (sel) => openMap(sel) });
  // The URL's state (state.js): always the whole of this demo's (its form and the view), so that a link made after
  // working in another demo still reopens this one.
  const write = (patch) => writeState({ demo: 'translate', model: $('tr-model').value, text: $('tr-input').value.trim(), ...patch });
  registerPng('tr-mv', () => modelView.toCanvas({ heading: results.main ? `${results.main.model}: ${results.main.input ?? ''}` : '' }));
  const example = $('tr-example');
  for (const s of EXAMPLES) example.append(new Option(s, s));
  example.addEventListener('change', () => {
    if (example.value) $('tr-input').value = example.value;
  });
  for (const sel of [$('cmp-a'), $('cmp-b')]) for (const [v, l] of MODELS) sel.append(new Option(`${l} (${v})`, v));
  $('cmp-a').value = 'de-en-rnn-additive';
  $('cmp-b').value = 'de-en-transformer';

  // Word level (default) or BPE pieces, for every heatmap of the section and the head view.
  const level = () => document.querySelector('input[name=tr-level]:checked')?.value ?? 'word';
  const results = { main: null, al: null, a: null, b: null };

  /** Draws a result's links and heatmap into `v`; returns the heatmap's note. */
  function drawAlignment(v, out) {
    const lm = linkModel(out);
    if (lm) v.links.set(lm); else v.links.clear();
    const a = (level() === 'word' && wordAlignment(out)) || pieceAlignment(out);
    if (a) v.heatmap.set(a.model); else v.heatmap.clear();
    return a ? a.note : '(this result has no attention maps)';
  }

  function setKeyLines() {
    const text = KEY_TEXT[level()];
    for (const id of ['tr-map-key', 'al-map-key']) $(id).querySelector('.text').textContent = text;
    $('cmp-key').querySelector('.text').textContent = text.replace(/^Darker/, 'darker').replace(/this|that/g, 'the');
  }

  function drawMain() {
    const out = results.main;
    if (!out) return;
    $('tr-map-note').textContent = drawAlignment(main, out);
    $('tr-links-note').textContent = linksNote(out);
    fillHeadView(out);
    fillModelView(out);
    fillCoverage(out);
    fillNeuron(out);
  }

  // Neuron view (neuron.js): the query/key vectors of the result (output_qk), asked for only while its box is ticked.
  const neuron = new NeuronView($('tr-neuron'), { onRead: (t) => { $('tr-nv-read').textContent = t; } });
  registerPng('tr-neuron', () => $('tr-neuron'));
  const nvSource = (out) => (out.sentences?.length > 1 ? out.sentences[Number($('tr-nv-sentence').value) || 0] : out);
  const fillSelect = (sel, items, keep = true) => {
    const prev = sel.value;
    sel.replaceChildren(...items.map(([v, l]) => new Option(l, String(v))));
    if (keep && items.some(([v]) => String(v) === prev)) sel.value = prev;
  };
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

  // Coverage (coverage.js): the main result's, with a slider over its target steps; and a β = 0 / β = b comparison.
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

  function fillModelView(out) {
    const words = level() === 'word' && out.word_attentions?.length > 0;
    const blocks = modelBlocks(out, words);
    if ($('tr-mv-derived').checked) blocks.push(...derivedBlocks(blocks)); // rollout and flow of the self-attention
    $('tr-mv-panel').hidden = blocks.length === 0;
    if (!blocks.length) { modelView.clear(); return; }
    modelView.set(blocks);
  }

  /** A thumbnail of the model view opens its map large: in the head view (Transformer) or the heatmap (RNN). */
  function openMap({ name, layer, head, map }, { scroll = true } = {}) {
    modelView.select({ name, layer, head });
    const derived = map ?? modelView.selectedMap();
    if (/_(rollout|flow)$/.test(name) && derived) {
      // Rollout and flow open in the large heatmap (rows: output positions, columns: input positions).
      main.heatmap.set({ rowLabels: derived.rowLabels, colLabels: derived.colLabels, data: derived.data, marks: [],
        rowName: 'output', colName: 'input' });
      const kind = name.replace(/_(rollout|flow)$/, '').replace(/_/g, ' ');
      $('tr-map-note').textContent = name.endsWith('_flow')
        ? `(${kind}: attention flow through all ${layersOf(name)} layers, max flow input → output; Abnar & Zuidema 2020)`
        : `(${kind}: attention rollout after layer ${layer + 1}, residual ½; Abnar & Zuidema 2020)`;
      if (scroll) $('tr-map-panel').scrollIntoView({ block: 'nearest' });
      write({ view: 'heatmap', kind: name, layer, head });
      return;
    }
    if (heads && heads.groups.has(name)) {
      $('tr-kind').value = name;
      fillLayers();
      if (heads.groups.get(name).has(layer)) $('tr-layer').value = String(layer);
      heads.active = new Set([head]);
      drawHeads();
      if (scroll) $('tr-heads-panel').scrollIntoView({ block: 'nearest' });
      write({ view: 'head', kind: name, layer, head });
    } else {
      if (scroll) $('tr-map-panel').scrollIntoView({ block: 'nearest' });
      write({ view: 'heatmap', kind: name, layer, head });
    }
  }

  /** How many layers the self-attention kind behind a derived block has. */
  function layersOf(name) {
    return modelView.maps().filter((m) => m.name === name.replace(/_flow$/, '_rollout')).length;
  }

  /** The head view's selection (kind, layer, the one active head if only one) into the URL. */
  function headViewState() {
    if (!heads) return;
    const active = [...(heads.active ?? [])];
    write({ view: 'head', kind: $('tr-kind').value, layer: Number($('tr-layer').value),
      head: active.length === 1 ? active[0] : undefined });
  }

  /** The exportable maps of the current result: the model view's (the level shown). */
  function mapsDoc() {
    const out = results.main;
    if (!out) return null;
    return mapsDocument({
      task: 'translation', model: out.model, input: out.input ?? $('tr-input').value, level: level(),
      tokens: { source: out.source_tokens ?? [], target: out.target_tokens ?? [],
        source_words: wordTexts(out.source_words), target_words: wordTexts(out.target_words) },
      maps: modelView.maps(),
    });
  }
  $('tr-mv-derived').addEventListener('change', () => { if (results.main) fillModelView(results.main); });
  $('tr-mv-json').addEventListener('click', () => {
    const doc = mapsDoc();
    if (doc) downloadText(JSON.stringify(doc), `${fileName(doc.model, 'maps', doc.level)}.json`, 'application/json');
  });
  $('tr-mv-npy').addEventListener('click', () => {
    const m = modelView.selectedMap() ?? modelView.maps()[0];
    if (!m) return;
    if (!modelView.selectedMap()) modelView.select(m);
    const name = fileName(results.main.model, m.name, `L${m.layer + 1}`, `H${m.head + 1}`, level());
    download(new Blob([npyBytes(m.data, [m.rows, m.cols])], { type: 'application/octet-stream' }), `${name}.npy`);
  });
  $('tr-headview-svg').addEventListener('click', () => {
    const svg = headView.toSvg();
    if (svg) downloadText(svg, `${fileName(results.main?.model, 'head-view', $('tr-kind').value, `L${Number($('tr-layer').value) + 1}`)}.svg`, 'image/svg+xml');
  });
  $('tr-share').addEventListener('click', () => copyLink($('tr-share')));

  function drawAligned() {
    const out = results.al;
    if (!out) return;
    $('al-map-note').textContent = drawAlignment(aligned, out);
    $('al-links-note').textContent = linksNote(out);
  }

  function drawCompare(side) {
    const out = results[side];
    if (!out) { cmpViews[side].heatmap.clear(); cmpViews[side].links.clear(); return ''; }
    drawAlignment(cmpViews[side], out);
    return linksNote(out);
  }

  for (const r of document.querySelectorAll('input[name=tr-level]')) {
    r.addEventListener('change', () => {
      setKeyLines();
      drawMain();
      drawAligned();
      for (const side of ['a', 'b']) {
        const note = drawCompare(side);
        if (results[side]) $(`cmp-${side}-title`).textContent = `${results[side].model} ${note}`;
      }
    });
  }
  setKeyLines();

  let heads = null; // { groups, src, tgt, active }

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

  async function translate(model, text, beams, extra = {}) {
    const { output, ms } = await runTask(ui, 'translation', model, text, { num_beams: beams, output_attentions: true, ...extra });
    const out = first(output);
    return { out, ms, text: out.text ?? out.translation_text ?? '' };
  }

  // The main form; also run once without a click (app.js calls autorun() when the section first comes into view),
  // unless the user has already run it.
  let ran = false;
  $('tr-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    ran = true;
    write({ model: $('tr-model').value, text: $('tr-input').value.trim() });
    return runForm();
  });
  // The URL follows the form as the person edits it.
  $('tr-model').addEventListener('change', () => write({ model: $('tr-model').value }));
  $('tr-input').addEventListener('change', () => write({ text: $('tr-input').value.trim() }));

  // A link with a translate state: its model and sentence fill the form (the first-sight run uses them), and its
  // view (kind, layer, head) is selected when the result arrives.
  const st = INITIAL_STATE;
  let pending = null;
  if (st.demo === 'translate' || (!st.demo && (st.model || st.text))) {
    if (st.model && [...$('tr-model').options].some((o) => o.value === st.model)) $('tr-model').value = st.model;
    if (st.text) $('tr-input').value = st.text;
    if (st.kind || st.view) pending = st;
  }
  function restoreView() {
    if (!pending) return;
    const p = pending;
    pending = null;
    const maps = modelView.maps();
    const pick = maps.find((m) => m.name === p.kind && m.layer === (p.layer ?? m.layer) && m.head === (p.head ?? 0)) ??
      maps.find((m) => m.name === p.kind);
    const panel = { model: 'tr-mv-panel', head: 'tr-heads-panel', heatmap: 'tr-map-panel' }[p.view];
    if (pick && heads && heads.groups.has(pick.name) && p.view !== 'model' && p.head === undefined) {
      // A head-view state with several heads on: kind and layer only.
      $('tr-kind').value = pick.name;
      fillLayers();
      if (p.layer !== undefined && heads.groups.get(pick.name).has(p.layer)) { $('tr-layer').value = String(p.layer); drawHeads(); }
    } else if (pick) {
      openMap(pick, { scroll: false });
      if (p.view === 'model') write({ view: 'model' });
    }
    if (panel && !$(panel).hidden) $(panel).scrollIntoView({ block: 'start' });
  }

  async function runForm() {
    const model = $('tr-model').value;
    const text = $('tr-input').value.trim();
    const beams = Math.max(1, Math.min(8, Number($('tr-beams').value) || 1));
    if (!text) { ui.done('Type a German sentence first.'); return; }
    ui.busy(`Translating with ${model}…`);
    try {
      const beta = Number($('tr-coverage-beta').value);
      const { out, ms, text: result } = await translate(model, text, beams,
        { word_maps: true, ...(Number.isFinite(beta) && beta > 0 ? { coverage_beta: beta } : {}),
          ...($('tr-nv-on').checked && !/rnn/.test(model) ? { output_qk: true } : {}) });
      $('tr-output').textContent = result;
      // Numbers the engine copied from the source by alignment (copy_numbers): say so, with what the model wrote.
      const copies = out.number_copies ?? [];
      $('tr-copies').hidden = copies.length === 0;
      $('tr-copies').textContent = copies.length === 0 ? '' : `Numbers copied from the German by the word alignment: ${
        copies.map((c) => `the model wrote “${c.model}”, aligned with the German number → “${c.text}”`).join('; ')}.`;
      $('tr-panels').hidden = false;
      results.main = { ...out, model, input: text };
      drawMain();
      restoreView();
      ui.done(`${model}, beam ${beams}: ${ms.toFixed(0)} ms`);
    } catch (err) {
      ui.fail(err, missingText(model));
    }
  }

  // Align mode: the model's forced decoding of the user's own translation of the German sentence above.
  async function runAlign() {
    const model = $('tr-model').value;
    const source = $('tr-input').value.trim();
    const target = $('al-target').value.trim();
    if (!source) { alUi.fail(new Error('type a German sentence in the field above first.')); return; }
    if (!target) { alUi.fail(new Error('type or paste your English translation first (the field is empty).')); return; }
    alUi.busy(`Aligning your translation with ${model}…`);
    try {
      const { output, ms } = await runAlignTask(alUi, 'translation', model, source, target, { word_maps: true });
      const out = first(output);
      results.al = { ...out, model };
      $('al-panels').hidden = false;
      drawAligned();
      const lps = wordLogprobs(out);
      const mean = lps?.length ? lps.reduce((a, b) => a + b, 0) / lps.length : NaN;
      const score = Number.isFinite(out.score) ? `log p of your translation ${out.score.toFixed(2)}` : '';
      alUi.done(`${model}: ${score}${Number.isFinite(mean) ? ` (${mean.toFixed(2)} per word)` : ''}; ${ms.toFixed(0)} ms`);
    } catch (err) {
      alUi.fail(err, missingText(model));
    }
  }
  $('al-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    if (!$('al-run').disabled) runAlign();
  });
  $('al-target').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
      ev.preventDefault();
      $('al-form').requestSubmit();
    }
  });
  $('al-copy').addEventListener('click', () => {
    const text = $('tr-output').textContent.trim();
    if (text) $('al-target').value = text;
    $('al-target').focus();
  });

  $('cmp-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const text = $('tr-input').value.trim();
    const beams = Math.max(1, Math.min(8, Number($('tr-beams').value) || 1));
    if (!text) return;
    $('cmp-run').disabled = true;
    $('cmp-panels').hidden = false;
    for (const side of ['a', 'b']) {
      const model = $(`cmp-${side}`).value;
      $(`cmp-${side}-title`).textContent = `${model}: translating…`;
      $(`cmp-${side}-text`).textContent = '';
      results[side] = null;
      drawCompare(side);
      try {
        const { out, text: result } = await translate(model, text, beams);
        results[side] = { ...out, model };
        $(`cmp-${side}-title`).textContent = `${model} ${drawCompare(side)}`;
        $(`cmp-${side}-text`).textContent = result;
      } catch (err) {
        $(`cmp-${side}-title`).textContent = model;
        $(`cmp-${side}-text`).textContent = err.missing ? missingText(model) : errorText(err);
        $(`cmp-${side}-text`).className = `result small ${err.missing ? 'missing' : 'error'}`;
        continue;
      }
      $(`cmp-${side}-text`).className = 'result small';
    }
    ui.done('');
    $('cmp-run').disabled = false;
  });

  let lastWidth = innerWidth;
  addEventListener('resize', () => {
    if (Math.abs(innerWidth - lastWidth) < 20) return;
    lastWidth = innerWidth;
    headView.draw();
    for (const v of [main, aligned, cmpViews.a, cmpViews.b]) { v.heatmap.draw(); v.links.draw(); }
  });

  return {
    /** Translates the sentence in the form (the first example unless edited), unless a run already happened. */
    autorun() {
      if (ran || $('tr-run').disabled) return undefined;
      ran = true;
      return runForm();
    },
  };
}

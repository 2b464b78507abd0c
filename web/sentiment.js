// Sentiment demo: label and score; each word shaded by its attention (per hop for the structured self-attention
// model), and the T × T matrix of the relation model.
import { Heatmap, rampColor } from './draw.js';
import { runTask, statusUi } from './client.js';
import { first, groupMaps } from './maps.js';
import { ModelView } from './modelview.js';
import { copyLink, download, downloadText, fileName, mapsDocument, npyBytes, registerPng, wordsCanvas } from './export.js';
import { INITIAL_STATE, writeState } from './state.js';

const $ = (id) => document.getElementById(id);

export function setupSentiment() {
  const ui = statusUi({ progress: $('st-progress'), status: $('st-status'), button: $('st-run') });
  const matrix = new Heatmap($('st-matrix'), { onCursor: (t) => { $('st-cursor').textContent = t; } });
  let current = null; // { tokens, hops: Float32Array[] (each [T]) }
  let result = null; // { model, input, tokens, kind }
  const modelView = new ModelView($('st-mv'), { readout: $('st-mv-readout'), onOpen: (sel) => openMap(sel) });
  // The URL's state (state.js): always the whole of this demo's (its form and the view).
  const write = (patch) => writeState({ demo: 'sentiment', model: $('st-model').value, text: $('st-input').value.trim(), ...patch });
  registerPng('st-mv', () => modelView.toCanvas({ heading: result ? `${result.model}: ${result.input}` : '' }));
  registerPng('st-words', () => (current ? wordsCanvas(current.tokens, shownWeights(), rampColor) : null));

  /** A thumbnail opens its map large: a hop in the shaded words, the relation matrix in its heatmap. */
  function openMap({ name, layer, head }, { scroll = true } = {}) {
    modelView.select({ name, layer, head });
    if (result?.relation) {
      if (scroll) $('st-matrix-panel').scrollIntoView({ block: 'nearest' });
      write({ view: 'heatmap', kind: name, layer, head });
    } else {
      $('st-hop').value = String(head);
      shadeWords();
      if (scroll) $('st-panels').scrollIntoView({ block: 'nearest' });
      write({ view: 'words', kind: name, layer, head });
    }
  }

  function mapsDoc() {
    if (!result) return null;
    return mapsDocument({ task: 'sentiment-analysis', model: result.model, input: result.input, level: 'word',
      tokens: { tokens: result.tokens }, maps: modelView.maps() });
  }
  $('st-mv-json').addEventListener('click', () => {
    const doc = mapsDoc();
    if (doc) downloadText(JSON.stringify(doc), `${fileName(doc.model, 'maps')}.json`, 'application/json');
  });
  $('st-mv-npy').addEventListener('click', () => {
    const m = modelView.selectedMap() ?? modelView.maps()[0];
    if (!m) return;
    if (!modelView.selectedMap()) modelView.select(m);
    const name = fileName(result.model, m.name, `L${m.layer + 1}`, `H${m.head + 1}`);
    download(new Blob([npyBytes(m.data, [m.rows, m.cols])], { type: 'application/octet-stream' }), `${name}.npy`);
  });
  $('st-share').addEventListener('click', () => copyLink($('st-share')));

  $('st-example').addEventListener('change', () => {
    if ($('st-example').value) $('st-input').value = $('st-example').value;
  });

  /** The weights the words are shaded by: the chosen hop, or the mean of the hops. */
  function shownWeights() {
    const sel = $('st-hop').value;
    const T = current.tokens.length;
    if (sel === 'mean' || sel === '' || current.hops.length === 1) {
      const w = new Float32Array(T);
      for (const h of current.hops) for (let i = 0; i < T; i++) w[i] += h[i] / current.hops.length;
      return w;
    }
    return current.hops[Number(sel)];
  }

  function shadeWords() {
    const box = $('st-words');
    if (!current) { box.replaceChildren(); return; }
    const T = current.tokens.length;
    const w = shownWeights();
    let max = 0;
    for (let i = 0; i < T; i++) max = Math.max(max, w[i]);
    box.replaceChildren(...current.tokens.map((tok, i) => {
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
  $('st-hop').addEventListener('change', () => {
    shadeWords();
    const hop = $('st-hop').value;
    const one = hop !== 'mean' && hop !== '';
    if (one && result) modelView.select({ name: result.kind, layer: 0, head: Number(hop) });
    write({ view: 'words', kind: one ? result?.kind : undefined, layer: one ? 0 : undefined,
      head: one ? Number(hop) : undefined });
  });

  // Also run once without a click (app.js: autorun() when the section first comes into view), unless the user has.
  let ran = false;
  $('st-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    ran = true;
    write({ model: $('st-model').value, text: $('st-input').value.trim() });
    return runForm();
  });
  $('st-model').addEventListener('change', () => write({ model: $('st-model').value }));
  $('st-input').addEventListener('change', () => write({ text: $('st-input').value.trim() }));

  // A link with a sentiment state fills the form (the first-sight run uses it) and selects its view afterwards.
  const st = INITIAL_STATE;
  let pending = null;
  if (st.demo === 'sentiment') {
    if (st.model && [...$('st-model').options].some((o) => o.value === st.model)) $('st-model').value = st.model;
    if (st.text) $('st-input').value = st.text;
    pending = st;
  }
  function restoreView() {
    if (!pending) return;
    const p = pending;
    pending = null;
    const pick = modelView.maps().find((m) => m.name === p.kind && m.head === (p.head ?? 0));
    if (pick && p.head !== undefined) openMap(pick, { scroll: false });
    if (p.view === 'model' && pick) write({ view: 'model' });
    const panel = { model: 'st-mv-panel', heatmap: 'st-matrix-panel', words: 'st-panels' }[p.view];
    if (panel && !$(panel).hidden) $(panel).scrollIntoView({ block: 'start' });
  }

  /** The model view's blocks: the hops of structured self-attention (one 1 × T map each), or the T × T relation. */
  function fillModelView(name, m, labels, tokens, relation) {
    const T = m.cols;
    const maps = relation
      ? [{ rows: T, cols: T, data: m.data, rowLabels: labels, colLabels: labels, keys: tokens }]
      : Array.from({ length: m.rows }, (_, r) => ({ rows: 1, cols: T, data: m.data.subarray(r * T, (r + 1) * T),
        rowLabels: [`hop ${r + 1}`], colLabels: labels, keys: tokens }));
    $('st-mv-panel').hidden = false; // first: the thumbnails' size follows the panel's width
    modelView.set([{
      name, title: relation ? 'relation attention, word × word' : 'structured self-attention',
      headName: relation ? 'map' : 'hop', self: relation, layers: [{ layer: 0, maps }],
    }]);
  }

  async function runForm() {
    const model = $('st-model').value;
    const text = $('st-input').value.trim();
    if (!text) { ui.done('Type a sentence first.'); return; }
    ui.busy(`Classifying with ${model}…`);
    try {
      const { output, ms } = await runTask(ui, 'sentiment-analysis', model, text, { output_attentions: true });
      const out = first(output);
      $('st-panels').hidden = false;
      $('st-label').textContent = out.label ?? '?';
      $('st-label').className = /pos/i.test(out.label ?? '') ? 'label pos' : 'label neg';
      $('st-score').textContent = Number.isFinite(out.score) ? `score ${out.score.toFixed(3)}` : '';
      const groups = groupMaps(out.attentions);
      const maps = [...groups.values()].flatMap((layers) => [...layers.values()].flat());
      const m = maps[0];
      const tokens = out.tokens ?? out.words ?? [];
      const T = m ? m.cols : tokens.length;
      const labels = Array.from({ length: T }, (_, i) => tokens[i] ?? `#${i}`);
      const kind = [...groups.keys()][0];
      const relation = Boolean(m && m.rows === T && T > 1 && /pair|relation/i.test([...groups.keys()].join(' ') + model));
      result = { model, input: text, tokens: labels, kind, relation };
      if (m) fillModelView(kind, m, labels, labels, relation); else { modelView.clear(); $('st-mv-panel').hidden = true; }
      if (relation) {
        // relation: T × T; a word's shade is the attention it receives, averaged over the rows.
        const recv = new Float32Array(T);
        for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) recv[j] += m.data[i * T + j] / T;
        current = { tokens: labels, hops: [recv] };
        $('st-hop-wrap').hidden = true;
        $('st-words-note').textContent = '(attention each word receives, averaged over all words)';
        $('st-matrix-panel').hidden = false;
        matrix.set({ rowLabels: labels, colLabels: labels, data: m.data, rowName: 'word', colName: 'attends to' });
      } else if (m) {
        const hops = Array.from({ length: m.rows }, (_, r) => m.data.subarray(r * T, (r + 1) * T));
        current = { tokens: labels, hops };
        const hop = $('st-hop');
        const prev = hop.value;
        hop.replaceChildren(new Option('mean of hops', 'mean'), ...hops.map((_, i) => new Option(`hop ${i + 1}`, String(i))));
        hop.value = [...hop.options].some((o) => o.value === prev) ? prev : 'mean';
        $('st-hop-wrap').hidden = hops.length < 2;
        $('st-words-note').textContent = hops.length > 1 ? `(${hops.length} attention hops)` : '';
        $('st-matrix-panel').hidden = true;
      } else {
        current = null;
        $('st-words-note').textContent = '(this result has no attention maps)';
      }
      shadeWords();
      restoreView();
      ui.done(`${model}: ${ms.toFixed(0)} ms`);
    } catch (err) {
      ui.fail(err, `The model ${model} is not available in this build.`);
    }
  }

  return {
    /** Classifies the sentence in the form (the first example unless edited), unless a run already happened. */
    autorun() {
      if (ran || $('st-run').disabled) return undefined;
      ran = true;
      return runForm();
    },
  };
}

// Sentiment demo: label and score; each word shaded by its attention (per hop for the structured self-attention
// model), and the T × T matrix of the relation model.
import { Heatmap, rampColor } from './draw.js';
import { runTask, statusUi } from './client.js';
import { first, groupMaps } from './maps.js';

const $ = (id) => document.getElementById(id);

export function setupSentiment() {
  const ui = statusUi({ progress: $('st-progress'), status: $('st-status'), button: $('st-run') });
  const matrix = new Heatmap($('st-matrix'), { onCursor: (t) => { $('st-cursor').textContent = t; } });
  let current = null; // { tokens, hops: Float32Array[] (each [T]) }

  $('st-example').addEventListener('change', () => {
    if ($('st-example').value) $('st-input').value = $('st-example').value;
  });

  function shadeWords() {
    const box = $('st-words');
    if (!current) { box.replaceChildren(); return; }
    const sel = $('st-hop').value;
    const T = current.tokens.length;
    let w;
    if (sel === 'mean' || current.hops.length === 1) {
      w = new Float32Array(T);
      for (const h of current.hops) for (let i = 0; i < T; i++) w[i] += h[i] / current.hops.length;
    } else {
      w = current.hops[Number(sel)];
    }
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
  $('st-hop').addEventListener('change', shadeWords);

  // Also run once without a click (app.js: autorun() when the section first comes into view), unless the user has.
  let ran = false;
  $('st-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    ran = true;
    return runForm();
  });

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
      if (m && m.rows === T && T > 1 && /pair|relation/i.test([...groups.keys()].join(' ') + model)) {
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

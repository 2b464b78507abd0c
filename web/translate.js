// Translate demo: German → English with the chosen model and beam width; the alignment heatmap, a head view for
// the Transformer, and two models' alignments side by side.
import { Heatmap, HeadView, HEAD_COLORS } from './draw.js';
import { runTask, statusUi } from './client.js';
import { first, groupMaps, meanHeads, showPiece, labelsFor, crossName } from './maps.js';

// Multi30k validation sentences (the golden cases of models/de-en-transformer/golden.json).
export const EXAMPLES = [
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

const MODELS = [
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

/** The alignment matrix of a result: last layer of the cross-attention, averaged over heads. */
function alignment(out) {
  const groups = groupMaps(out.attentions);
  if (!groups.size) return null;
  const name = crossName(groups);
  const layers = groups.get(name);
  const lastLayer = [...layers.keys()].pop();
  const heads = layers.get(lastLayer);
  if (!heads.length) return null;
  const m = heads.length > 1 ? meanHeads(heads) : heads[0];
  const { src, tgt } = tokenLabels(out);
  const note = layers.size > 1 || heads.length > 1
    ? `(${name}, layer ${lastLayer + 1} of ${layers.size}, mean of ${heads.length} heads)`
    : `(${name})`;
  return {
    note,
    model: {
      rowLabels: labelsFor(m.rows, tgt), colLabels: labelsFor(m.cols, src), data: m.data,
      rowName: 'target', colName: 'source',
    },
  };
}

export function setupTranslate() {
  const ui = statusUi({ progress: $('tr-progress'), status: $('tr-status'), button: $('tr-run') });
  const heatmap = new Heatmap($('tr-heatmap'), { onCursor: (t) => { $('tr-cursor').textContent = t || 'Hover a cell (or focus the map and use the arrow keys).'; } });
  const headView = new HeadView($('tr-headview'));
  const example = $('tr-example');
  for (const s of EXAMPLES) example.append(new Option(s, s));
  example.addEventListener('change', () => {
    if (example.value) $('tr-input').value = example.value;
  });
  for (const sel of [$('cmp-a'), $('cmp-b')]) for (const [v, l] of MODELS) sel.append(new Option(`${l} (${v})`, v));
  $('cmp-a').value = 'de-en-rnn-additive';
  $('cmp-b').value = 'de-en-transformer';

  let heads = null; // { groups, src, tgt, active }

  function fillHeadView(out) {
    const groups = groupMaps(out.attentions);
    const multi = [...groups.values()].some((layers) => layers.size > 1 || [...layers.values()].some((h) => h.length > 1));
    $('tr-heads-panel').hidden = !multi;
    if (!multi) { heads = null; return; }
    const { src, tgt } = tokenLabels(out);
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

  $('tr-kind').addEventListener('change', fillLayers);
  $('tr-layer').addEventListener('change', drawHeads);

  async function translate(model, text, beams) {
    const { output, ms } = await runTask(ui, 'translation', model, text, { num_beams: beams, output_attentions: true });
    const out = first(output);
    return { out, ms, text: out.text ?? out.translation_text ?? '' };
  }

  // The main form; also run once without a click (app.js calls autorun() when the section first comes into view),
  // unless the user has already run it.
  let ran = false;
  $('tr-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    ran = true;
    return runForm();
  });

  async function runForm() {
    const model = $('tr-model').value;
    const text = $('tr-input').value.trim();
    const beams = Math.max(1, Math.min(8, Number($('tr-beams').value) || 1));
    if (!text) { ui.done('Type a German sentence first.'); return; }
    ui.busy(`Translating with ${model}…`);
    try {
      const { out, ms, text: result } = await translate(model, text, beams);
      $('tr-output').textContent = result;
      $('tr-panels').hidden = false;
      const a = alignment(out);
      if (a) {
        $('tr-map-note').textContent = a.note;
        heatmap.set(a.model);
      } else {
        heatmap.clear();
        $('tr-map-note').textContent = '(this result has no attention maps)';
      }
      fillHeadView(out);
      ui.done(`${model}, beam ${beams}: ${ms.toFixed(0)} ms`);
    } catch (err) {
      ui.fail(err, missingText(model));
    }
  }

  const cmpMaps = { a: new Heatmap($('cmp-a-map'), { onCursor: (t) => { $('cmp-a-cursor').textContent = t; } }),
    b: new Heatmap($('cmp-b-map'), { onCursor: (t) => { $('cmp-b-cursor').textContent = t; } }) };
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
      cmpMaps[side].clear();
      try {
        const { out, text: result } = await translate(model, text, beams);
        const a = alignment(out);
        $(`cmp-${side}-title`).textContent = `${model} ${a ? a.note : ''}`;
        $(`cmp-${side}-text`).textContent = result;
        if (a) cmpMaps[side].set(a.model);
      } catch (err) {
        $(`cmp-${side}-title`).textContent = model;
        $(`cmp-${side}-text`).textContent = err.missing ? missingText(model) : `Error: ${err.message}`;
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
    heatmap.draw(); headView.draw(); cmpMaps.a.draw(); cmpMaps.b.draw();
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

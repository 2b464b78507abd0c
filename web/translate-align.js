// The translation demo's second and third forms: align mode (how the model aligns the person's own translation of
// the German sentence, with its probability per word) and two models' alignments side by side. Each draws into its
// own link view and heatmap (translate-views.js drawAlignment) and redraws when the level (words / pieces) changes.
import { runAlign as runAlignTask, statusUi, errorText } from './client.js';
import { first } from './maps.js';
import { $ } from './demo.js';
import { MODELS, drawAlignment, linksNote, missingText, wordLogprobs } from './translate-views.js';

/** Align mode: the model's forced decoding of the person's own translation of the German sentence above. */
export function setupAlignPanel({ level, results, view }) {
  const alUi = statusUi({ progress: $('al-progress'), status: $('al-status'), button: $('al-run') });
  function drawAligned() {
    const out = results.al;
    if (!out) return;
    $('al-map-note').textContent = drawAlignment(view, out, level());
    $('al-links-note').textContent = linksNote(out);
  }

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
  return { view, redraw: drawAligned };
}

/** One side of the comparison (#cmp-<side>-…): its title, translation, link drawing and heatmap with their cursors. */
function compareSide(side, name) {
  const make = (tag, props, attrs = {}) => {
    const e = Object.assign(document.createElement(tag), props);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    return e;
  };
  const canvas = (id, label) => {
    const box = make('div', { className: 'scroll' });
    box.append(make('canvas', { id, width: 10, height: 10 }, { role: 'img', 'aria-label': label }));
    return box;
  };
  const cursor = (id) => make('p', { className: 'cursor', id }, { 'aria-live': 'polite' });
  const fig = make('figure', { className: 'panel' });
  fig.append(make('figcaption', { id: `cmp-${side}-title`, textContent: '—' }), make('p', { className: 'result small', id: `cmp-${side}-text` }),
    canvas(`cmp-${side}-links`, `${name} model's word links; focus it and use the arrow keys`), cursor(`cmp-${side}-links-cursor`),
    canvas(`cmp-${side}-map`, `${name} model's alignment`), cursor(`cmp-${side}-cursor`));
  return fig;
}

/** The comparison's two sides, before their views are made (translate.js). */
export function buildCompareSides() {
  $('cmp-sides').replaceChildren(compareSide('a', 'Left'), compareSide('b', 'Right'));
}

/** Two models' translations and alignments of the sentence in the main form, side by side. */
export function setupComparePanel({ level, results, views, ui, translate }) {
  for (const sel of [$('cmp-a'), $('cmp-b')]) for (const [v, l] of MODELS) sel.append(new Option(`${l} (${v})`, v));
  $('cmp-a').value = 'de-en-rnn-additive';
  $('cmp-b').value = 'de-en-transformer';
  function drawCompare(side) {
    const out = results[side];
    if (!out) { views[side].heatmap.clear(); views[side].links.clear(); return ''; }
    drawAlignment(views[side], out, level());
    return linksNote(out);
  }

  /** One side: translates with its model and draws the result (or says why it cannot). */
  async function runSide(side, text, beams) {
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
      $(`cmp-${side}-text`).className = 'result small';
    } catch (err) {
      $(`cmp-${side}-title`).textContent = model;
      $(`cmp-${side}-text`).textContent = err.missing ? missingText(model) : errorText(err);
      $(`cmp-${side}-text`).className = `result small ${err.missing ? 'missing' : 'error'}`;
    }
  }

  $('cmp-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const text = $('tr-input').value.trim();
    const beams = Math.max(1, Math.min(8, Number($('tr-beams').value) || 1));
    if (!text) return;
    $('cmp-run').disabled = true;
    $('cmp-panels').hidden = false;
    for (const side of ['a', 'b']) await runSide(side, text, beams);
    ui.done('');
    $('cmp-run').disabled = false;
  });

  return {
    redraw() {
      for (const side of ['a', 'b']) {
        const note = drawCompare(side);
        if (results[side]) $(`cmp-${side}-title`).textContent = `${results[side].model} ${note}`;
      }
    },
  };
}

// Pointer-network demo (number-sorting, model pointer-sort): a person types numbers, the model sorts them, and the
// heatmap shows the pointer distribution of every output step (row = step, column = input position; the dot marks
// the position chosen; hover or arrow keys read a weight). The canvas publishes what it drew in data-weights (JSON),
// data-dims and data-order, so tests/e2e/pointer.test.mjs can check the drawing against the result's map.
//
// The demo's shape (demo.js): inputs (the numbers) → run in the worker → render (sorted list, heatmap).
import { Heatmap } from './draw.js';
import { runTask } from './client.js';
import { $, createDemo, wireExamples } from './demo.js';
const TASK = 'number-sorting';
const MODEL = 'pointer-sort';

/** A number as typed, short: at most 6 significant digits. */
const fmt = (v) => (Number.isInteger(v) && Math.abs(v) < 1e9 ? String(v) : String(Number(v.toPrecision(6))));

export function setupPointer() {
  const { ui, autorun } = createDemo({ name: 'pointer', prefix: 'ptr', run: () => runForm() });
  const canvas = $('ptr-map');
  const heatmap = new Heatmap(canvas, { onCursor: (t) => { $('ptr-cursor').textContent = t; } });
  let runId = 0;
  wireExamples($('ptr-example'), $('ptr-input'));

  function clear() {
    heatmap.clear();
    canvas.dataset.weights = '';
    canvas.dataset.order = '';
    $('ptr-sorted').textContent = '';
    $('ptr-check').textContent = '';
    $('ptr-panels').hidden = true;
  }

  async function runForm() {
    const text = $('ptr-input').value;
    const id = ++runId;
    ui.busy(`Sorting with ${MODEL}…`);
    try {
      const { output: out, ms } = await runTask(ui, TASK, MODEL, text, { output_attentions: false });
      if (id !== runId) return;
      const n = out.values.length;
      const map = out.attentions.find((m) => m.name === 'pointer');
      $('ptr-sorted').textContent = out.sorted.map(fmt).join(', ');
      $('ptr-check').textContent = out.sorted_ok ? 'sorted' : 'not sorted: the model made a mistake on this list';
      $('ptr-check').className = out.sorted_ok ? 'label pos' : 'label neg';
      $('ptr-panels').hidden = false; // first: the heatmap's width follows the panel's
      heatmap.set({
        rowLabels: out.order.map((j, i) => `${i + 1}. ${fmt(out.values[j])}`),
        colLabels: out.values.map((v, j) => `#${j + 1} ${fmt(v)}`),
        data: map.data,
        marks: out.order.map((j, i) => [i, j]),
        rowName: 'output step',
        colName: 'input',
        normalise: false,
      });
      canvas.dataset.dims = map.dims.join('x');
      canvas.dataset.order = out.order.join(',');
      canvas.dataset.weights = JSON.stringify(Array.from(map.data));
      $('pointer').dataset.input = text;
      ui.done(`${MODEL}: ${n} number${n === 1 ? '' : 's'} in ${ms.toFixed(0)} ms`);
    } catch (err) {
      if (id !== runId) return;
      clear();
      $('pointer').dataset.input = text;
      ui.fail(err, `The model ${MODEL} is not available in this build.`);
    }
  }

  return { autorun };
}

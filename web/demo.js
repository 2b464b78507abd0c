// The shape of every model demo on the page (translate, caption, sentiment, vqa, pointer):
//
//   setupX() → { autorun }      app.js calls it once; autorun() runs the first example when the section shows
//     inputs   the section's form (<prefix>-form: model, text or image, options), filled from a link's state
//              (`demo.linked`, state.js) before the first run
//     run      the task in the Web Worker (client.js runTask / runTaskArgs / runAlign), reporting through the
//              demo's status line (`demo.ui`: <prefix>-progress, <prefix>-status, <prefix>-run)
//     render   the result into the shared view components: Heatmap, HeadView, LinkView (draw.js), ModelView
//              (modelview.js), the heat overlay (overlay.js), the exports (export.js wireMapExports), the URL's
//              state (`demo.write`)
//
// createDemo() holds what every demo does the same way: the status line, the submit handler that marks the demo as
// run by the person, autorun() that runs once unless the person already did, and the demo's part of the URL. A demo
// module keeps only its inputs, its run and its render; each piece is a function of its own, so that none grows
// past the limit tests/node/shape.test.mjs sets. The lab (lab.js, lab/) has the same shape on the page's own thread:
// each panel reads its inputs, runs catalogue ops and renders with lab/ui.js.
import { statusUi } from './client.js';
import { INITIAL_STATE, writeState } from './state.js';
import { copyLink } from './export.js';

export const $ = (id) => document.getElementById(id);

/**
 * The common part of a demo. `name`: its section id and the URL's `demo`; `prefix`: its element ids' prefix;
 * `state()`: the demo's whole form as URL state (written with every change, so a link reopens this demo; a demo
 * without it keeps out of the URL);
 * `run()`: one run on the form's inputs; `first()`: the run without a click (defaults to run()); `orphan`: a link
 * that names no demo but has a model or text is this demo's.
 */
export function createDemo({ name, prefix, state, run, first = run, orphan = false }) {
  const button = $(`${prefix}-run`);
  const ui = statusUi({ progress: $(`${prefix}-progress`), status: $(`${prefix}-status`), button });
  let ran = false; // run once (by the person or without a click)
  let touched = false; // the person ran the demo or chose its input
  const demo = {
    ui,
    /** The link's state when it names this demo, else null. */
    linked: INITIAL_STATE.demo === name || (orphan && !INITIAL_STATE.demo && (INITIAL_STATE.model || INITIAL_STATE.text))
      ? INITIAL_STATE : null,
    /** Whether the person has run the demo (or chosen its input): autorun() then leaves it alone. */
    get touched() { return touched; },
    touch() { touched = true; },
    /** Writes the demo's state into the URL: its whole form, then `patch`. */
    write: (patch = {}) => writeState({ demo: name, ...state?.(), ...patch }),
    /** Runs once without a click, unless the person already ran the demo or a run is under way. */
    autorun() {
      if (ran || touched || button?.disabled) return undefined;
      ran = true;
      return first();
    },
  };
  $(`${prefix}-form`)?.addEventListener('submit', (ev) => {
    ev.preventDefault();
    ran = true;
    touched = true;
    if (state) demo.write();
    return run();
  });
  $(`${prefix}-share`)?.addEventListener('click', () => copyLink($(`${prefix}-share`)));
  return demo;
}

/** Sets a <select> to `value` when it offers it; returns whether it did. */
export function pickOption(select, value) {
  if (value === undefined || ![...select.options].some((o) => o.value === value)) return false;
  select.value = value;
  return true;
}

/** Copies the chosen example of an example <select> into the input field. */
export function wireExamples(select, input) {
  select.addEventListener('change', () => {
    if (select.value) input.value = select.value;
  });
}

/**
 * The parts every demo repeats, written once here: after each `<form data-status="P">` its progress row
 * (#P-progress, shown while a model downloads) and status line (#P-status), and the model-view panels' bodies.
 * app.js calls it before the demos are set up.
 */
export function expandTemplates(root = document) {
  for (const form of root.querySelectorAll('form[data-status]')) {
    const p = form.dataset.status;
    const row = Object.assign(document.createElement('div'), { className: 'progress-row', hidden: true });
    row.append(Object.assign(document.createElement('progress'), { id: `${p}-progress`, max: 100, value: 0 }),
      document.createElement('span'));
    const status = Object.assign(document.createElement('p'), { className: 'msg', id: `${p}-status` });
    status.setAttribute('role', 'status');
    form.after(row, status);
  }
  expandModelViewBodies(root);
}

/**
 * The body of every model-view panel: each `<div class="mv-body" data-mv="P" data-file="F">` becomes
 * the view (#P-mv), its readout (#P-mv-readout) and the export row (PNG as F.png, all maps as JSON, the selected map
 * as .npy, a link to the view).
 */
function expandModelViewBodies(root = document) {
  const button = (text, attrs) => {
    const b = Object.assign(document.createElement('button'), { type: 'button', className: 'secondary small', textContent: text });
    for (const [k, v] of Object.entries(attrs)) b.setAttribute(k, v);
    return b;
  };
  for (const slot of root.querySelectorAll('.mv-body[data-mv]')) {
    const p = slot.dataset.mv;
    const view = Object.assign(document.createElement('div'), { className: 'mv', id: `${p}-mv` });
    const readout = Object.assign(document.createElement('p'), { className: 'cursor', id: `${p}-mv-readout` });
    readout.setAttribute('aria-live', 'polite');
    const row = Object.assign(document.createElement('div'), { className: 'export-row' });
    row.setAttribute('role', 'group');
    row.setAttribute('aria-label', 'Save the maps');
    row.append(button('Save PNG', { 'data-png': `${p}-mv`, 'data-file': slot.dataset.file }),
      button('Save all maps (JSON)', { id: `${p}-mv-json` }), button('Save selected map (.npy)', { id: `${p}-mv-npy` }),
      button('Copy link to this view', { id: `${p}-share` }));
    slot.replaceWith(view, readout, row);
  }
}

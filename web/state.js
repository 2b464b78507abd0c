// The page's state in its URL, so that a link reopens the same view: the query string holds
//   demo  — translate | sentiment | caption | lab (the section the person was working in);
//   model — the demo's model; text — its input; view — model | head | heatmap | words (which drawing);
//   kind  — the attention kind (encoder_self, decoder_self, cross, self-attention, pair-attention, visual);
//   layer, head — 1-based, as the page shows them;
//   image — the captioner's example image ('examples/shapes-1.png'; an image of the person's own cannot be linked);
//   word  — 1-based, the caption word whose attention is shown.
// Every change the person makes rewrites them with history.replaceState (no new history entry); a change in another
// demo replaces the whole state; other query parameters (worker-timeout, test-hooks) and the #fragment are kept.
// Nothing is written on a first-sight run.

export const STATE_KEYS = ['demo', 'model', 'text', 'view', 'kind', 'layer', 'head', 'image', 'word'];
const ONE_BASED = new Set(['layer', 'head', 'word']);

/** The state in a query string: { demo, model, text, view, kind, layer, head, image, word } (layer/head/word 0-based;
 * absent: undefined). */
export function parseState(search) {
  const p = new URLSearchParams(search);
  const s = {};
  for (const k of STATE_KEYS) {
    if (!p.has(k)) continue;
    const v = p.get(k);
    if (ONE_BASED.has(k)) {
      const n = Number(v);
      if (Number.isInteger(n) && n >= 1) s[k] = n - 1;
    } else if (v !== '') {
      s[k] = v;
    }
  }
  return s;
}

/** `search` with `patch` applied (undefined/null deletes a key; layer/head/word 0-based in, 1-based out). */
export function applyState(search, patch) {
  const p = new URLSearchParams(search);
  // Another demo: its state replaces the last one's (a translator's text is no sentiment input).
  if (patch.demo && p.get('demo') !== patch.demo) for (const k of STATE_KEYS) p.delete(k);
  for (const [k, v] of Object.entries(patch)) {
    if (!STATE_KEYS.includes(k)) continue;
    if (v === undefined || v === null || v === '') p.delete(k);
    else p.set(k, ONE_BASED.has(k) ? String(Number(v) + 1) : String(v));
  }
  // A stable order: the state keys first, in STATE_KEYS order, then anything else.
  const ordered = new URLSearchParams();
  for (const k of STATE_KEYS) if (p.has(k)) ordered.set(k, p.get(k));
  for (const [k, v] of p) if (!STATE_KEYS.includes(k)) ordered.append(k, v);
  const q = ordered.toString();
  return q ? `?${q}` : '';
}

export function readState() {
  return parseState(globalThis.location?.search ?? '');
}

/** Merges `patch` into the URL's state (history.replaceState). */
export function writeState(patch) {
  if (!globalThis.history?.replaceState) return;
  const search = applyState(location.search, patch);
  if (search === location.search) return;
  history.replaceState(history.state, '', `${location.pathname}${search}${location.hash}`);
}

/** The state a link opened the page with (read once at start-up, before anything rewrites it). */
export const INITIAL_STATE = readState();

// "Your model" (open.js): pure functions of a converted model's result — its token lists, the model view's blocks (one
// per attention kind: 'self-attention' of BERT, DistilBERT, ViT and GPT-2; encoder_self, decoder_self and cross of
// Marian), the task's output in words and the head statistics by layer. open.js renders what these return into the
// page's shared views.
import { groupMaps, labelsFor, showPiece } from './maps.js';
import { STAT_KEYS } from './headstats.js';

/** A word-piece token as shown: SentencePiece's '▁' and GPT-2's 'Ġ' mark a word start, '##' a BERT continuation. */
export function showToken(t) {
  if (typeof t !== 'string') return String(t);
  if (t.startsWith('Ġ') || t.startsWith('▁')) return t.slice(1) || t;
  if (t.startsWith('##')) return `-${t.slice(2)}`;
  return t;
}

/** The token lists of a result: { src, tgt } (the same list twice for a model with one sequence). */
export function tokenLists(out) {
  if (Array.isArray(out.source_tokens)) {
    return { src: out.source_tokens.map(showPiece), tgt: (out.target_tokens ?? []).map(showPiece) };
  }
  const toks = Array.isArray(out.tokens) ? out.tokens.map(showToken) : [];
  return { src: toks, tgt: toks };
}

/** Query (row) and key (column) labels of a map of attention kind `name`. */
export function labelsOf(name, rows, cols, lists) {
  const { src, tgt } = lists;
  const image = !src.length; // ViT: the [CLS] token and the image's patches
  const patch = (n) => Array.from({ length: n }, (_, i) => (i === 0 ? '[CLS]' : `patch ${i}`));
  if (image) return { rowLabels: patch(rows), colLabels: patch(cols) };
  if (/cross/i.test(name)) return { rowLabels: labelsFor(rows, tgt), colLabels: labelsFor(cols, src) };
  if (/dec.*self/i.test(name)) return { rowLabels: labelsFor(rows, tgt), colLabels: labelsFor(cols, tgt) };
  return { rowLabels: labelsFor(rows, src), colLabels: labelsFor(cols, src) };
}

/** The model view's blocks of a result: one per attention kind, rows = layers, columns = heads. */
export function openBlocks(out) {
  const lists = tokenLists(out);
  const blocks = [];
  for (const [name, layers] of groupMaps(out.attentions ?? [])) {
    blocks.push({
      name, title: name.replace(/_/g, ' '), headName: 'head', self: /self/i.test(name),
      layers: [...layers.entries()].map(([layer, heads]) => ({
        layer: Math.max(0, layer),
        maps: heads.map((h) => {
          const labels = labelsOf(name, h.rows, h.cols, lists);
          return { rows: h.rows, cols: h.cols, data: h.data, ...labels, keys: labels.colLabels };
        }),
      })),
    });
  }
  return blocks;
}

const pct = (x) => `${(100 * x).toFixed(1)}%`;

/** The task's output in words: a list of lines. */
export function outputLines(task, out) {
  if (task === 'text-classification') {
    return [`${out.label} (${pct(out.score)})`, ...(out.scores ?? []).slice(0, 5).map((s) => `${s.label}: ${pct(s.score)}`)];
  }
  if (task === 'image-classification') {
    return (out.scores ?? [{ label: out.label, score: out.score }]).slice(0, 5).map((s) => `${s.label}: ${pct(s.score)}`);
  }
  if (task === 'text-generation') return [out.generated_text, `(${out.new_ids?.length ?? 0} new tokens, stopped: ${out.stopped})`];
  if (task === 'translation') return [out.text];
  if (task === 'feature-extraction') {
    const [t, d] = out.dims ?? [0, 0];
    const norms = [];
    for (let i = 0; i < t; i++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += out.features[i * d + c] ** 2;
      norms.push(Math.sqrt(s));
    }
    const toks = tokenLists(out).src;
    return [`${t} × ${d} features; the norm of each token's vector:`,
      norms.map((n, i) => `${toks[i] ?? i} ${n.toFixed(2)}`).join(' · ')];
  }
  return [JSON.stringify(out).slice(0, 200)];
}

/** Each block's head statistics averaged over the heads of each layer: [{ title, rows: [{ layer, stats }] }]. */
export function layerStats(maps) {
  const byBlock = new Map();
  for (const m of maps) {
    if (!byBlock.has(m.name)) byBlock.set(m.name, new Map());
    const layers = byBlock.get(m.name);
    if (!layers.has(m.layer)) layers.set(m.layer, []);
    layers.get(m.layer).push(m.stats);
  }
  return [...byBlock].map(([name, layers]) => ({
    title: name.replace(/_/g, ' '),
    rows: [...layers].map(([layer, list]) => ({
      layer,
      stats: Object.fromEntries(STAT_KEYS.map((k) => {
        const xs = list.map((s) => s?.[k]).filter((x) => typeof x === 'number' && Number.isFinite(x));
        return [k, xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null];
      })),
    })),
  }));
}

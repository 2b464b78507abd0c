// The lab's panels over the plane's points (plane.js): the six score functions, global soft attention with its
// masks, local-m / local-p, hard versus soft, key-value attention, two heads, structured self-attention and the
// relation network. Each runs the real ops on the current points on every move.
//
// Toy weights, fixed here (the lab shows what each formula does, not a trained model):
//   general      W [2×2] = a rotation by ~31° scaled by 1.17
//   additive     W [3×2], U [3×2], v [3] (Bahdanau's vᵀ tanh(W q + U k))
//   location     W_a [5×2]: one row per position (right, up, left, down, up-right), so the query's direction
//                alone picks the position; the keys are never read
//   key-value    each key carries a colour as its value (V [5×3], RGB): the keys decide where to look, the values
//                what is read
//   two heads    E = 2 (d_h = 1): head 1 looks at x, head 2 at y (in_proj rows: Wq, Wk, Wv)
//   structured   W_s1 [4×2] = 2 × (right, up, left, down); W_s2 [r×4] = 3 × the first r rows of I₄: hop i
//                attends to the points furthest in direction i
//   relation     w_g [4] scores each pair [x_i; x_j]; w_f1 [3×4], w_f2 [3×3] toy numbers (mulberry32, seeds 31, 32)
import { tensor } from '../../wasm/index.js';
import { KEY_COUNT } from './plane.js';
import { makePanel, bars, heatmap, values, swatch, slider, checkbox, el, toyNumbers } from './ui.js';

const W_GENERAL = tensor([1.0, 0.6, -0.6, 1.0], [2, 2]);
const W_ADD = tensor([1.2, 0.0, 0.0, 1.2, 0.8, -0.8], [3, 2]);
const U_ADD = tensor([1.0, 0.3, -0.3, 1.0, 0.5, 0.5], [3, 2]);
const V_ADD = tensor([1.5, 1.5, -1.0], [3]);
const W_LOC = tensor([2, 0, 0, 2, -2, 0, 0, -2, 1.4, 1.4], [5, 2]);
const VALUES = [[0.9, 0.2, 0.2], [0.95, 0.8, 0.1], [0.2, 0.7, 0.3], [0.2, 0.4, 0.95], [0.6, 0.3, 0.8]];
const IN_PROJ = tensor([2, 0, 0, 2, 2, 0, 0, 2, 1, 0, 0, 1], [6, 2]);
const OUT_PROJ = tensor([1, 0, 0, 1], [2, 2]);
const W_S1 = tensor([2, 0, 0, 2, -2, 0, 0, -2], [4, 2]);
const W_S2 = [3, 0, 0, 0, 0, 3, 0, 0, 0, 0, 3, 0, 0, 0, 0, 3];
const W_F1 = tensor(toyNumbers(12, 31, 0.8), [3, 4]);
const W_F2 = tensor(toyNumbers(9, 32, 0.8), [3, 3]);
const W_G = tensor([0.6, 0.6, 1.2, -1.2], [4]);

const KEYS = Array.from({ length: KEY_COUNT }, (_, i) => `k${i + 1}`);
const POINTS = ['q', ...KEYS];

/** Scores of `op`, then softmax: the first five panels. */
function scorePanel(op, extra = {}) {
  return (rec, parts, { q, keys }) => {
    const { scores } = rec.run(op, { q, keys, ...extra }, {}, { scores: 'scores' });
    const { weights } = rec.run('align_soft', { scores }, {}, { weights: 'weights' });
    parts.push(bars(KEYS, [{ label: 'weights', data: weights.data }]));
  };
}

const PANELS = [
  { op: 'score_dot', title: 'dot', paper: 'Luong 2015', cls: 'mech', formula: 's(q, k) = qᵀk;  α = softmax(s)',
    draw: scorePanel('score_dot') },
  { op: 'score_scaled_dot', title: 'scaled dot', paper: 'Vaswani 2017', cls: 'mech',
    formula: 's(q, k) = qᵀk / √d;  α = softmax(s)', draw: scorePanel('score_scaled_dot') },
  { op: 'score_general', title: 'general', paper: 'Luong 2015', cls: 'mech', formula: 's(q, k) = qᵀ W k;  α = softmax(s)',
    draw: scorePanel('score_general', { w: W_GENERAL }) },
  { op: 'score_additive', title: 'additive', paper: 'Bahdanau 2014', cls: 'mech',
    formula: 's(q, k) = vᵀ tanh(W q + U k);  α = softmax(s)', draw: scorePanel('score_additive', { w: W_ADD, u: U_ADD, v: V_ADD }) },
  { op: 'score_cosine', title: 'cosine', paper: 'Graves 2014', cls: 'mech',
    formula: 's(q, k) = qᵀk / (‖q‖‖k‖);  α = softmax(s)', draw: scorePanel('score_cosine') },
  { op: 'score_location', title: 'location-based', paper: 'Luong 2015', formula: 'α = softmax(W_a q)  — no keys',
    note: 'Only the query counts: drag a key and nothing here moves. W_a has one row per position.',
    draw(rec, parts, { q }) {
      const out = rec.run('score_location', { q, w_a: W_LOC }, {}, { scores: 'scores', weights: 'weights' });
      parts.push(bars(['p1', 'p2', 'p3', 'p4', 'p5'], [{ label: 'weights', data: out.weights.data }]));
    } },
  { op: 'align_soft', ops: ['score_scaled_dot', 'align_soft'], title: 'global soft, with masks', paper: 'Bahdanau 2014, Luong 2015',
    formula: 'α_ij = exp(s_ij) / Σ_j′ exp(s_ij′) over unmasked j;  s: scaled dot of all six points',
    note: 'Self-attention of the six points (rows attend to columns). Causal: a row sees only earlier points; padding hides the last points from every row.',
    controls(knobs, state, update) {
      state.causal = false;
      state.pad = 0;
      checkbox(knobs, { label: 'causal', aria: 'global soft: causal mask', checked: false, onChange: (v) => { state.causal = v; update(); } });
      slider(knobs, { label: 'padding', aria: 'global soft: number of padded positions at the end', min: 0, max: 3, value: 0,
        onInput: (v) => { state.pad = v; update(); } });
    },
    draw(rec, parts, { points }, state) {
      const all = tensor(points.flat(), [points.length, 2]);
      const { scores } = rec.run('score_scaled_dot', { q: all, keys: all }, {}, { scores: 'scores' });
      const keep = tensor(points.map((_, i) => (i < points.length - state.pad ? 1 : 0)), [points.length]);
      const { weights } = rec.run('align_soft', { scores, key_keep: keep }, { causal: state.causal }, { weights: 'weights' });
      parts.push(heatmap(weights.data, POINTS, POINTS, { label: 'weights', numbers: true, hi: 1 }));
    } },
  { op: 'align_local_p', ops: ['score_scaled_dot', 'align_soft', 'align_local_m', 'align_local_p'], cls: 'mech-x',
    title: 'local-p window', paper: 'Luong 2015',
    formula: 'local-m: α = softmax(s) over [t − D, t + D], t = round(p);  local-p: α_s = softmax(s)_s · exp(−(s − p)² / 2σ²),  σ = D/2  (s: scaled dot)',
    controls(knobs, state, update) {
      state.p = 2;
      state.D = 1;
      slider(knobs, { label: 'p', aria: 'local-p window: p', min: 0, max: KEY_COUNT - 1, step: 0.1, value: 2, onInput: (v) => { state.p = v; update(); } });
      slider(knobs, { label: 'D', aria: 'local-p window: D', min: 1, max: 3, value: 1, onInput: (v) => { state.D = v; update(); } });
    },
    draw(rec, parts, { q, keys }, state) {
      const { scores } = rec.run('score_scaled_dot', { q, keys }, {}, { scores: 'scores' });
      const flat = tensor(scores.data, [KEY_COUNT]);
      const soft = rec.run('align_soft', { scores }, {}, { soft: 'weights' }).weights.data;
      const m = rec.run('align_local_m', { scores: flat }, { t: Math.round(state.p), D: state.D }, { 'local-m': 'weights' }).weights.data;
      const p = rec.run('align_local_p', { scores: flat }, { p: state.p, D: state.D }, { 'local-p': 'weights' }).weights.data;
      parts.push(bars(KEYS, [{ label: 'soft', data: soft }, { label: 'local-m', data: m }, { label: 'local-p', data: p }], { numbers: 2 }));
    } },
  { op: 'align_hard_argmax', ops: ['score_scaled_dot', 'align_soft', 'align_hard_argmax', 'align_hard_sample'], cls: 'mech-x',
    title: 'hard vs soft', paper: 'Xu 2015',
    formula: 'soft: α = softmax(qᵀk/√d);  hard: onehot(argmax α), or s ~ Multinoulli(α) (share of 400 draws)',
    controls(knobs, state, update) {
      state.seed = 1;
      slider(knobs, { label: 'seed', aria: 'hard vs soft: seed', min: 0, max: 9, value: 1, onInput: (v) => { state.seed = v; update(); } });
    },
    draw(rec, parts, { q, keys }, state) {
      const { scores } = rec.run('score_scaled_dot', { q, keys }, {}, { scores: 'scores' });
      const w = rec.run('align_soft', { scores }, {}, { soft: 'weights' }).weights.data;
      const weights = tensor(w, [KEY_COUNT]);
      const hard = rec.run('align_hard_argmax', { weights }, {}, { argmax: 'one_hot' }).one_hot.data;
      const draws = 400;
      const samples = rec.run('align_hard_sample', { weights }, { draws, seed: state.seed }, { samples: 'samples' }).samples.data;
      const share = new Float32Array(KEY_COUNT);
      for (const s of samples) share[s] += 1 / draws;
      parts.push(bars(KEYS, [{ label: 'soft', data: w }, { label: 'argmax', data: hard }, { title: 'sampled', data: share }]));
    } },
  { op: 'key_value_attention', ops: ['key_value_attention', 'soft_context'], title: 'key-value context', paper: 'Daniluk 2017',
    formula: 'α = softmax(qᵀk/√d);  c = Σ α_i v_i  with values v_i apart from the keys k_i',
    note: 'Each key carries a colour as its value: the keys decide where to look, the values what is read. With values = keys (soft_context) the context is a point of the plane instead.',
    draw(rec, parts, { q, keys }) {
      const out = rec.run('key_value_attention', { q, keys, values: tensor(VALUES.flat(), [KEY_COUNT, 3]) }, {},
        { weights: 'weights', context: 'context' });
      parts.push(bars(KEYS, [{ label: 'weights', data: out.weights.data }]));
      const row = el('p', 'lab-values');
      row.append('values: ');
      VALUES.forEach((v, i) => row.append(swatch(v, `v${i + 1} = (${v.join(', ')})`), ` k${i + 1}  `));
      parts.push(row);
      const ctx = el('p', 'lab-values');
      ctx.append('c = ', swatch(Array.from(out.context.data), 'the context: the weighted mix of the values'));
      parts.push(ctx, values([{ name: 'c (RGB)', label: 'context', data: out.context.data, count: 3 }]));
      const plain = rec.run('soft_context', { weights: out.weights, values: keys }, {}, { 'values=keys': 'context' });
      parts.push(values([{ name: 'with values = keys, c', label: 'values=keys', data: plain.context.data, count: 2 }]));
    } },
  { op: 'multi_head_attention', title: 'two heads', paper: 'Vaswani 2017', cls: 'mech-x',
    formula: 'head_i = softmax(q W_iᵠ (K W_iᴷ)ᵀ / √d_h) ;  head 1 reads x, head 2 reads y',
    draw(rec, parts, { q, keys }) {
      const w = rec.run('multi_head_attention', { query: q, key: keys, value: keys, in_proj_weight: IN_PROJ, out_proj_weight: OUT_PROJ },
        { num_heads: 2 }, { heads: 'weights' }).weights.data;
      parts.push(bars(KEYS, [{ label: 'heads', title: 'head 1', data: w.subarray(0, KEY_COUNT) },
        { title: 'head 2', data: w.subarray(KEY_COUNT, 2 * KEY_COUNT) }]));
    } },
  { op: 'structured_self_attention', title: 'structured self-attention', paper: 'Lin 2017',
    formula: 'A = softmax(W_s2 tanh(W_s1 Hᵀ))  (r hops over H = the six points);  penalty P = ‖AAᵀ − I‖²_F',
    note: 'Hop i looks for the points furthest right, up, left, down. Hops that look at the same point raise the penalty.',
    controls(knobs, state, update) {
      state.r = 2;
      slider(knobs, { label: 'r hops', aria: 'structured self-attention: number of hops r', min: 1, max: 4, value: 2,
        onInput: (v) => { state.r = v; update(); } });
    },
    draw(rec, parts, { points }, state) {
      const h = tensor(points.flat(), [points.length, 2]);
      const out = rec.run('structured_self_attention', { h, w_s1: W_S1, w_s2: tensor(W_S2.slice(0, 4 * state.r), [state.r, 4]) }, {},
        { a: 'a', penalty: 'penalty' });
      const hops = Array.from({ length: state.r }, (_, i) => `hop ${i + 1}`);
      parts.push(heatmap(out.a.data, hops, POINTS, { label: 'a', numbers: true, hi: 1 }),
        values([{ name: 'penalty ‖AAᵀ − I‖²_F', label: 'penalty', data: out.penalty.data }]));
    } },
  { op: 'relation_self_attention', title: 'relation-network self-attention', paper: 'Kim 2018 (seed 003)',
    formula: 'A_ij = softmax_j σ(tanh(w_gᵀ[x_i; x_j]));  r_i = Σ_j A_ij f([x_i; x_j]);  s = mean_i r_i',
    note: 'Every pair of the six points (T × T). σ(tanh(·)) lies in (0.27, 0.73), so the rows stay close to uniform; colours run from the smallest weight to the largest.',
    draw(rec, parts, { points }) {
      const x = tensor(points.flat(), [points.length, 2]);
      const out = rec.run('relation_self_attention', { x, w_f1: W_F1, w_f2: W_F2, w_g: W_G }, {}, { a: 'a', sentence: 'sentence' });
      parts.push(heatmap(out.a.data, POINTS, POINTS, { label: 'a', numbers: true, lo: 'min' }),
        values([{ name: 'sentence s', label: 'sentence', data: out.sentence.data, count: 3 }]));
    } },
];

/** Builds the plane's panels in `parent`; returns update(plane) and the scaled-dot weights for the plane's lines. */
export function setupPlanePanels(parent, requestUpdate) {
  parent.replaceChildren();
  const built = PANELS.map((p) => {
    const panel = makePanel(parent, p);
    const state = {};
    p.controls?.(panel.knobs, state, requestUpdate);
    return { p, panel, state };
  });
  let lines = null;
  return {
    update(plane) {
      const q = tensor(plane.query, [1, 2]);
      const keys = tensor(plane.keys.flat(), [KEY_COUNT, 2]);
      const ctx = { q, keys, points: plane.points };
      for (const { p, panel, state } of built) {
        const rec = panel.render((r, parts) => p.draw(r, parts, ctx, state), { points: plane.points, ...state });
        if (p.op === 'score_scaled_dot') lines = rec.weights.weights;
      }
    },
    lines: () => lines,
  };
}


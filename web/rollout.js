// Attention rollout and attention flow (Abnar & Zuidema 2020) of a Transformer's self-attention, as extra blocks of
// the model view: the engine's catalogue ops `attention_rollout` / `attention_flow` (golden-tested like every op)
// run on the main thread over the maps the result already holds — nothing is re-run.
//   rollout: one map per layer, what each position holds of every input position after that many layers
//            (Ã_l = ½ I + ½ mean over heads A_l; R_l = Ã_l R_{l−1}); rows sum to 1.
//   flow:    one map, the maximum flow from input position j to output position i through all layers with the
//            weights Ã as capacities (each ≤ 1; max-flow values, not a distribution).
// At word level the maps leave out '</s>' (and the decoder's '<s>'), so their rows, and the rollout's, sum to a
// little less than 1: what is drawn is the share among the words. Piece level shows full distributions.
// Flow solves n² maximum-flow problems: drawn for up to FLOW_MAX_POSITIONS positions; longer inputs get rollout only.
import { attention, tensor } from '../wasm/index.js';

export const RESIDUAL = 0.5;
export const FLOW_MAX_POSITIONS = 32;

/** A block's maps as one [L, H, n, n] tensor, or null when they are not square and of one size (cross attention). */
function stacked(block) {
  const layers = block.layers;
  const heads = layers[0]?.maps.length ?? 0;
  const n = layers[0]?.maps[0]?.rows ?? 0;
  if (!heads || !n || layers.some((l) => l.maps.length !== heads || l.maps.some((m) => m.rows !== n || m.cols !== n))) return null;
  const data = new Float32Array(layers.length * heads * n * n);
  layers.forEach((l, li) => l.maps.forEach((m, h) => data.set(m.data.subarray(0, n * n), (li * heads + h) * n * n)));
  return { t: tensor(data, [layers.length, heads, n, n]), n, first: layers[0].maps[0] };
}

/**
 * For each self-attention block of `blocks` (the model view's, see translate.js modelBlocks), a rollout block and,
 * for short inputs, a flow block, in the same format. Returns [] when the ops are unavailable (the module not
 * initialised) or nothing is square.
 */
export function derivedBlocks(blocks) {
  const out = [];
  for (const b of blocks) {
    if (!b.self || b.wrap || b.cells) continue;
    const s = stacked(b);
    if (!s) continue;
    const labels = { rowLabels: s.first.rowLabels, colLabels: s.first.colLabels, keys: s.first.keys };
    let rollout;
    try {
      rollout = attention.attentionRollout({ maps: s.t }, { residual: RESIDUAL }).rollout;
    } catch (err) {
      console.warn('attnlens: rollout:', err.message);
      return [];
    }
    const nn = s.n * s.n;
    out.push({
      name: `${b.name}_rollout`, title: `${b.title} · rollout`, headName: 'rollout', self: true, derived: 'rollout',
      layers: b.layers.map((l, li) => ({
        layer: l.layer,
        maps: [{ rows: s.n, cols: s.n, data: rollout.data.subarray(li * nn, (li + 1) * nn), ...labels }],
      })),
    });
    if (s.n <= FLOW_MAX_POSITIONS) {
      const flow = attention.attentionFlow({ maps: s.t }, { residual: RESIDUAL }).flow;
      out.push({
        name: `${b.name}_flow`, title: `${b.title} · flow`, headName: 'flow', self: true, derived: 'flow',
        layers: [{ layer: b.layers[b.layers.length - 1].layer, maps: [{ rows: s.n, cols: s.n, data: flow.data, ...labels }] }],
      });
    }
  }
  return out;
}

// The Transformer translator on onnxruntime-web: greedy search in JS over the exported encoder and decoder-step
// graphs (export_translation.py), with the same tokenizer as attnlens (its BpeTokenizer) and the same output:
// target ids (ending with </s>), the text, and — with maps — every attention map as {name, layer, head, dims, data}
// in the pipeline's order (encoder_self, decoder_self, cross; layer-major, head-minor).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { readGraph } from './quantize-onnx.mjs';

const BOS = 2;
const EOS = 3;

// Where the time goes (run.mjs --profile): process-CPU microseconds inside the ORT encoder and decoder-step runs.
export const profile = { on: false, encoder: 0, decoder: 0, steps: 0 };
const cpuNow = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};
async function timed(session, part, feeds) {
  if (!profile.on) return session.run(feeds);
  const t0 = cpuNow();
  const r = await session.run(feeds);
  profile[part] += cpuNow() - t0;
  if (part === 'decoder') profile.steps++;
  return r;
}

// The manifest's special ids (export_hf.py writes bos / eos / suppress for a converted Marian: decoder start = <pad>,
// </s> = 0, <pad> never chosen, as the engine's hf-marian) and positions; the shipped Transformers' otherwise.
export async function createOrtTranslator(ort, outDir, bundleDir, tokenizer, maps, sessionOptions) {
  const meta = JSON.parse(readFileSync(path.join(outDir, `${path.basename(bundleDir)}.json`), 'utf8'));
  const bos = meta.bos ?? BOS;
  const eos = meta.eos ?? EOS;
  const suppress = meta.suppress ?? -1;
  const variant = maps ? 'maps' : 'nomaps';
  const enc = await ort.InferenceSession.create(readGraph(outDir, `${meta.name}.encoder.${variant}.onnx`), sessionOptions);
  const dec = await ort.InferenceSession.create(readGraph(outDir, `${meta.name}.decoder.${variant}.onnx`), sessionOptions);
  const L = meta.decoder_layers;
  const Le = meta.encoder_layers;
  const H = meta.heads;
  const dh = meta.d_model / H;
  const V = meta.vocab_size;
  const maxPositions = meta.max_positions ?? 256;

  return async function translate(text) {
    const ids = tokenizer.encode(text).ids;
    const S = Math.min(ids.length + 1, maxPositions);
    const src = new BigInt64Array(S);
    for (let i = 0; i < S - 1; i++) src[i] = BigInt(ids[i]);
    src[S - 1] = BigInt(eos);
    const encOut = await timed(enc, 'encoder', { src_ids: new ort.Tensor('int64', src, [1, S]) });
    const feeds = {};
    for (let l = 0; l < L; l++) {
      feeds[`cross_k_${l}`] = encOut[`cross_k_${l}`];
      feeds[`cross_v_${l}`] = encOut[`cross_v_${l}`];
      feeds[`past_k_${l}`] = new ort.Tensor('float32', new Float32Array(0), [1, H, 0, dh]);
      feeds[`past_v_${l}`] = new ort.Tensor('float32', new Float32Array(0), [1, H, 0, dh]);
    }
    const maxLen = Math.min(2 * S + 10, maxPositions - 1);
    const out = [];
    const selfRows = [];
    const crossRows = [];
    let prev = bos;
    for (let t = 0; t < maxLen; t++) {
      feeds.token = new ort.Tensor('int64', BigInt64Array.of(BigInt(prev)), [1, 1]);
      feeds.pos = new ort.Tensor('int64', BigInt64Array.of(BigInt(t)), [1]);
      const r = await timed(dec, 'decoder', feeds);
      const logits = r.logits.data;
      let best = suppress === 0 ? 1 : 0;
      for (let v = best + 1; v < V; v++) if (v !== suppress && logits[v] > logits[best]) best = v; // ties: the lowest id
      for (let l = 0; l < L; l++) {
        feeds[`past_k_${l}`] = r[`present_k_${l}`];
        feeds[`past_v_${l}`] = r[`present_v_${l}`];
      }
      if (maps) {
        selfRows.push(r.decoder_self.data); // [L,1,H,t+1]
        crossRows.push(r.cross.data); // [L,1,H,S]
      }
      out.push(best);
      prev = best;
      if (best === eos) break;
    }
    const targetIds = Int32Array.from(out);
    const result = { text: tokenizer.decode(targetIds.filter((x) => x !== eos)), source_ids: Int32Array.from(src, Number),
      target_ids: targetIds, attentions: [] };
    if (maps) {
      const T = out.length;
      const es = encOut.encoder_self.data; // [Le,1,H,S,S]
      for (let l = 0; l < Le; l++) {
        for (let h = 0; h < H; h++) {
          result.attentions.push({ name: 'encoder_self', layer: l, head: h, dims: [S, S],
            data: es.slice((l * H + h) * S * S, (l * H + h + 1) * S * S) });
        }
      }
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          const m = new Float32Array(T * T);
          for (let t = 0; t < T; t++) m.set(selfRows[t].subarray((l * H + h) * (t + 1), (l * H + h + 1) * (t + 1)), t * T);
          result.attentions.push({ name: 'decoder_self', layer: l, head: h, dims: [T, T], data: m });
        }
      }
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          const m = new Float32Array(T * S);
          for (let t = 0; t < T; t++) m.set(crossRows[t].subarray((l * H + h) * S, (l * H + h + 1) * S), t * S);
          result.attentions.push({ name: 'cross', layer: l, head: h, dims: [T, S], data: m });
        }
      }
    }
    return result;
  };
}

// Beam search exactly as models/training/translation/decoding.py specifies it (what the engine implements):
// candidates cand[i,w] = score_i + logp (float32 sums), walked by descending value, ties by ascending flat index
// i·V + w; </s> (or anything at the last step) goes to `finished` (up to c·k, c = candidates_per_beam), the rest to
// the next beam (up to k); the choice: the finished hypothesis with the highest score / ((5 + L) / 6)^alpha, ties
// to the earliest (the search stops as soon as that choice is made, as the engine's does). The KV cache
// rows are gathered in JS after each step (each live hypothesis' parent row). With maps, each step's rows are kept
// and the chosen hypothesis' rows (the row that produced each of its tokens) are gathered into its [T,T] / [T,S]
// maps at the end (per-hypothesis maps, as the pipeline returns them).
export async function createOrtBeamTranslator(ort, outDir, bundleDir, tokenizer, maps, sessionOptions,
  { beam, alpha, candidatesPerBeam = 1 }) {
  const meta = JSON.parse(readFileSync(path.join(outDir, `${path.basename(bundleDir)}.json`), 'utf8'));
  const variant = maps ? 'maps' : 'nomaps';
  const enc = await ort.InferenceSession.create(readGraph(outDir, `${meta.name}.encoder.${variant}.onnx`), sessionOptions);
  const dec = await ort.InferenceSession.create(readGraph(outDir, `${meta.name}.decoder.${variant}.logprobs.onnx`), sessionOptions);
  const L = meta.decoder_layers;
  const Le = meta.encoder_layers;
  const H = meta.heads;
  const dh = meta.d_model / H;
  const V = meta.vocab_size;
  const maxPositions = 256;
  const f32 = Math.fround;
  const lp = (length) => ((5 + length) / 6) ** alpha; // GNMT length penalty
  const pool = beam * candidatesPerBeam; // finished hypotheses collected before the choice

  // rows `sel` of a [N, ...] float32 tensor
  const gather = (tensor, sel) => {
    const [n, ...rest] = tensor.dims;
    const row = tensor.data.length / n;
    const out = new Float32Array(sel.length * row);
    sel.forEach((r, i) => out.set(tensor.data.subarray(r * row, (r + 1) * row), i * row));
    return new ort.Tensor('float32', out, [sel.length, ...rest]);
  };

  return async function translate(text) {
    const ids = tokenizer.encode(text).ids;
    const S = Math.min(ids.length + 1, maxPositions);
    const src = new BigInt64Array(S);
    for (let i = 0; i < S - 1; i++) src[i] = BigInt(ids[i]);
    src[S - 1] = BigInt(EOS);
    const encOut = await timed(enc, 'encoder', { src_ids: new ort.Tensor('int64', src, [1, S]) });
    const crossBy = new Map(); // N -> the cross K/V tiled to N rows
    const crossFor = (n) => {
      if (!crossBy.has(n)) {
        const c = {};
        for (let l = 0; l < L; l++) {
          for (const kv of ['k', 'v']) c[`cross_${kv}_${l}`] = gather(encOut[`cross_${kv}_${l}`], new Array(n).fill(0));
        }
        crossBy.set(n, c);
      }
      return crossBy.get(n);
    };
    const feeds = {};
    for (let l = 0; l < L; l++) {
      feeds[`past_k_${l}`] = new ort.Tensor('float32', new Float32Array(0), [1, H, 0, dh]);
      feeds[`past_v_${l}`] = new ort.Tensor('float32', new Float32Array(0), [1, H, 0, dh]);
    }
    const limit = Math.min(2 * S + 10, maxPositions - 1);
    let alive = [{ tokens: [], rows: [], score: 0 }];
    const finished = [];
    const stepMaps = [];
    const k2 = 2 * beam;
    for (let t = 1; t <= limit; t++) {
      const n = alive.length;
      Object.assign(feeds, crossFor(n));
      feeds.token = new ort.Tensor('int64', BigInt64Array.from(alive, (h) => BigInt(h.tokens.length ? h.tokens.at(-1) : BOS)), [n, 1]);
      feeds.pos = new ort.Tensor('int64', BigInt64Array.of(BigInt(t - 1)), [1]);
      const r = await timed(dec, 'decoder', feeds);
      if (maps) stepMaps.push({ self: r.decoder_self.data, cross: r.cross.data, n });
      const logp = r.logprobs.data;
      // top 2k candidates by (value desc, flat index asc)
      const topV = [];
      const topI = [];
      for (let i = 0; i < n; i++) {
        const base = alive[i].score;
        for (let w = 0; w < V; w++) {
          const c = f32(base + logp[i * V + w]);
          if (topV.length === k2 && !(c > topV[k2 - 1])) continue;
          let at = topV.length;
          while (at > 0 && c > topV[at - 1]) at--;
          topV.splice(at, 0, c);
          topI.splice(at, 0, i * V + w);
          if (topV.length > k2) {
            topV.pop();
            topI.pop();
          }
        }
      }
      const last = t === limit;
      const next = [];
      for (let j = 0; j < topV.length; j++) {
        const i = Math.floor(topI[j] / V);
        const w = topI[j] - i * V;
        const h = alive[i];
        const hyp = { tokens: [...h.tokens, w], rows: [...h.rows, i], score: topV[j], parent: i };
        if (w === EOS || last) {
          finished.push(hyp);
          if (finished.length === pool) break;
        } else {
          next.push(hyp);
          if (next.length === beam) break;
        }
      }
      if (finished.length >= pool || last || next.length === 0) break;
      // The engine's early stop (src/decode/search.h), so that both sides run the same steps: stop once no live
      // hypothesis can still be chosen (its score only falls; its value is at most score / the largest lp ahead).
      if (finished.length > 0) {
        const bestValue = Math.max(...finished.map((h) => h.score / lp(h.tokens.length)));
        const lpA = lp(t + 1);
        const lpB = lp(limit);
        if (next.every((h) => h.score / (h.score <= 0 ? Math.max(lpA, lpB) : Math.min(lpA, lpB)) <= bestValue)) break;
      }
      const sel = next.map((h) => h.parent);
      for (let l = 0; l < L; l++) {
        feeds[`past_k_${l}`] = gather(r[`present_k_${l}`], sel);
        feeds[`past_v_${l}`] = gather(r[`present_v_${l}`], sel);
      }
      alive = next;
    }
    let best = null;
    let bestValue = -Infinity;
    for (const h of finished) {
      const v = h.score / lp(h.tokens.length);
      if (best === null || v > bestValue) {
        best = h;
        bestValue = v;
      }
    }
    const targetIds = Int32Array.from(best.tokens);
    const result = { text: tokenizer.decode(targetIds.filter((x) => x !== EOS)), source_ids: Int32Array.from(src, Number),
      target_ids: targetIds, attentions: [], score: best.score };
    if (maps) {
      const T = best.tokens.length;
      const es = encOut.encoder_self.data;
      for (let l = 0; l < Le; l++) {
        for (let h = 0; h < H; h++) {
          result.attentions.push({ name: 'encoder_self', layer: l, head: h, dims: [S, S],
            data: es.slice((l * H + h) * S * S, (l * H + h + 1) * S * S) });
        }
      }
      for (const [name, cols] of [['decoder_self', (t) => t + 1], ['cross', () => S]]) {
        for (let l = 0; l < L; l++) {
          for (let h = 0; h < H; h++) {
            const width = name === 'cross' ? S : T;
            const m = new Float32Array(T * width);
            for (let t = 0; t < T; t++) {
              const sm = stepMaps[t];
              const c = cols(t);
              const src2 = name === 'cross' ? sm.cross : sm.self;
              const off = ((l * sm.n + best.rows[t]) * H + h) * c;
              m.set(src2.subarray(off, off + c), t * width);
            }
            result.attentions.push({ name, layer: l, head: h, dims: [T, width], data: m });
          }
        }
      }
    }
    return result;
  };
}

// The RNN translators (de-en-rnn-general, de-en-rnn-additive), greedy: the encoder graph gives the memory, the
// attention keys and the decoder's first state; each step feeds the state back. With maps: the one 'cross' map
// [T,S] (layer −1, head −1), as the pipeline returns it.
export async function createOrtRnnTranslator(ort, outDir, bundleDir, tokenizer, maps, sessionOptions) {
  const meta = JSON.parse(readFileSync(path.join(outDir, `${path.basename(bundleDir)}.json`), 'utf8'));
  const enc = await ort.InferenceSession.create(readGraph(outDir, `${meta.name}.encoder.onnx`), sessionOptions);
  const dec = await ort.InferenceSession.create(readGraph(outDir, `${meta.name}.decoder.${maps ? 'maps' : 'nomaps'}.onnx`), sessionOptions);
  const V = meta.vocab_size;
  return async function translate(text) {
    const ids = tokenizer.encode(text).ids;
    const S = ids.length + 1;
    const src = new BigInt64Array(S);
    for (let i = 0; i < S - 1; i++) src[i] = BigInt(ids[i]);
    src[S - 1] = BigInt(EOS);
    const e = await timed(enc, 'encoder', { src_ids: new ort.Tensor('int64', src, [1, S]) });
    const feeds = { memory: e.memory, keys: e.keys };
    for (const s of meta.state) feeds[s] = e[s];
    const maxLen = 2 * S + 10;
    const out = [];
    const rows = [];
    let prev = BOS;
    for (let t = 0; t < maxLen; t++) {
      feeds.token = new ort.Tensor('int64', BigInt64Array.of(BigInt(prev)), [1]);
      const r = await timed(dec, 'decoder', feeds);
      const logits = r.logits.data;
      let best = 0;
      for (let v = 1; v < V; v++) if (logits[v] > logits[best]) best = v;
      for (const s of meta.state) feeds[s] = r[`next_${s}`];
      if (maps) rows.push(r.cross.data);
      out.push(best);
      prev = best;
      if (best === EOS) break;
    }
    const targetIds = Int32Array.from(out);
    const result = { text: tokenizer.decode(targetIds.filter((x) => x !== EOS)), source_ids: Int32Array.from(src, Number),
      target_ids: targetIds, attentions: [] };
    if (maps) {
      const m = new Float32Array(out.length * S);
      rows.forEach((r, t) => m.set(r, t * S));
      result.attentions.push({ name: 'cross', layer: -1, head: -1, dims: [out.length, S], data: m });
    }
    return result;
  };
}

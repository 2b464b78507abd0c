// What the converter knows of each Hugging Face architecture (docs/DESIGN.md §5 "Converted bundles"): the config
// fields it reads (with the defaults of Hugging Face's config class), the options it refuses, the checkpoint classes
// it accepts, and every tensor of the canonical state_dict with its shape — the engine's src/models/hf_<arch>.cpp
// reads exactly these names. Tensor names are Hugging Face's own, with the head model's prefix ("bert.",
// "distilbert.", "transformer.", "model.", "vit.").
//
// canonical(key) maps a checkpoint key to { name } (kept under that name), { drop: why } (a buffer or head the
// engine does not use), { tie: name } (a tied copy, see ties: dropped after checking it is equal) or { sinusoidal:
// name } (Marian's fixed position table, dropped after checking it is the table the engine computes). A kept name
// that expected() does not list is an error naming the checkpoint's key. expected(hp, head) lists [name, shape, optional?] in the order weights.safetensors stores them.

import { ConvertError } from './errors.js';

export { ConvertError };

const MAX_LAYERS = 1024;
const ACTIVATIONS = ['gelu', 'gelu_new', 'gelu_pytorch_tanh', 'relu', 'silu', 'swish'];

/** hf_config with the config class's defaults under it; checks that every size is a positive integer. */
function resolve(cfg, defaults, sizes) {
  const hp = { ...defaults };
  for (const [k, v] of Object.entries(cfg)) if (v !== null || !(k in defaults)) hp[k] = v;
  for (const k of sizes) {
    const max = /layers|n_layer/.test(k) ? MAX_LAYERS : 1 << 24;
    if (!Number.isSafeInteger(hp[k]) || hp[k] <= 0 || hp[k] > max) {
      throw new ConvertError(`config.json: "${k}" must be an integer from 1 to ${max}, got ${JSON.stringify(hp[k])}`);
    }
  }
  for (const k of ['layer_norm_eps', 'layer_norm_epsilon']) {
    if (k in hp && !(typeof hp[k] === 'number' && hp[k] > 0 && hp[k] < 1)) {
      throw new ConvertError(`config.json: "${k}" must be a number between 0 and 1, got ${JSON.stringify(hp[k])}`);
    }
  }
  for (const k of ['scale_embedding', 'tie_word_embeddings']) {
    if (k in hp && typeof hp[k] !== 'boolean') throw new ConvertError(`config.json: "${k}" must be true or false, got ${JSON.stringify(hp[k])}`);
  }
  // Special token ids the engine looks up in the embedding (eos_token_id may be a list).
  for (const k of ['pad_token_id', 'bos_token_id', 'eos_token_id', 'decoder_start_token_id', 'forced_eos_token_id']) {
    const v = hp[k];
    if (v === undefined || v === null || !('vocab_size' in hp)) continue;
    const ids = Array.isArray(v) ? v : [v];
    if (!ids.every((id) => Number.isSafeInteger(id) && id >= 0 && id < hp.vocab_size)) {
      throw new ConvertError(`config.json: "${k}" ${JSON.stringify(v)} is not a token id below "vocab_size" (${hp.vocab_size})`);
    }
  }
  return hp;
}

function refuse(cond, what) {
  if (cond) throw new ConvertError(`config.json: ${what} is not supported by attnlens (the engine does not implement it)`);
}

function activation(hp, key) {
  refuse(!ACTIVATIONS.includes(hp[key]), `"${key}": ${JSON.stringify(hp[key])} (supported: ${ACTIVATIONS.join(', ')})`);
}

function divides(hp, heads, width) {
  if (hp[width] % hp[heads] !== 0) {
    throw new ConvertError(`config.json: "${width}" (${hp[width]}) is not a multiple of "${heads}" (${hp[heads]})`);
  }
}

const lin = (name, out, inp) => [[`${name}.weight`, [out, inp]], [`${name}.bias`, [out]]];
const norm = (name, n) => [[`${name}.weight`, [n]], [`${name}.bias`, [n]]];
const optional = (list) => list.map(([n, s]) => [n, s, true]);
const range = (n) => Array.from({ length: n }, (_, i) => i);

/** A canonicaliser for a model whose base keys take `prefix` (added when the checkpoint is the base model, saved
 * without it) and whose head keys match `head`; `drops` are [pattern, why] of keys the engine does not read. */
function prefixed(prefix, head, drops, rename = (k) => k) {
  return (key) => {
    const rel = key.startsWith(prefix) ? key.slice(prefix.length) : key;
    for (const [re, why] of drops) if (re.test(rel)) return { drop: why };
    if (head.test(rel)) return { name: rel };
    return { name: prefix + rename(rel) };
  };
}

// Old BERT checkpoints (the original TensorFlow conversions) name LayerNorm's parameters gamma and beta.
const layerNormNames = (k) => k.replace(/LayerNorm\.gamma$/, 'LayerNorm.weight').replace(/LayerNorm\.beta$/, 'LayerNorm.bias');

export const ARCHITECTURES = {
  bert: {
    architecture: 'hf-bert',
    classes: { BertModel: 'base', BertForSequenceClassification: 'classifier', BertForMaskedLM: 'base', BertForPreTraining: 'base' },
    tasks: { base: ['feature-extraction'], classifier: ['text-classification', 'feature-extraction'] },
    tokenizer: 'wordpiece',
    config(cfg) {
      const hp = resolve(cfg, { vocab_size: 30522, hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12,
        intermediate_size: 3072, hidden_act: 'gelu', max_position_embeddings: 512, type_vocab_size: 2, layer_norm_eps: 1e-12,
        position_embedding_type: 'absolute', is_decoder: false, add_cross_attention: false },
      ['vocab_size', 'hidden_size', 'num_hidden_layers', 'num_attention_heads', 'intermediate_size', 'max_position_embeddings', 'type_vocab_size']);
      refuse(hp.position_embedding_type !== 'absolute', `"position_embedding_type": ${JSON.stringify(hp.position_embedding_type)} (only "absolute")`);
      refuse(hp.is_decoder === true, '"is_decoder": true (a BERT decoder)');
      refuse(hp.add_cross_attention === true, '"add_cross_attention": true');
      activation(hp, 'hidden_act');
      divides(hp, 'num_attention_heads', 'hidden_size');
      return hp;
    },
    canonical: prefixed('bert.', /^classifier\.(weight|bias)$/,
      [[/^embeddings\.position_ids$/, 'a buffer (position ids 0..n-1)'], [/^cls\./, 'the pre-training (masked LM / next sentence) head']],
      layerNormNames),
    expected(hp, head) {
      const H = hp.hidden_size;
      const I = hp.intermediate_size;
      const e = 'bert.embeddings.';
      const list = [[`${e}word_embeddings.weight`, [hp.vocab_size, H]], [`${e}position_embeddings.weight`, [hp.max_position_embeddings, H]],
        [`${e}token_type_embeddings.weight`, [hp.type_vocab_size, H]], ...norm(`${e}LayerNorm`, H)];
      for (const i of range(hp.num_hidden_layers)) {
        const l = `bert.encoder.layer.${i}.`;
        list.push(...lin(`${l}attention.self.query`, H, H), ...lin(`${l}attention.self.key`, H, H), ...lin(`${l}attention.self.value`, H, H),
          ...lin(`${l}attention.output.dense`, H, H), ...norm(`${l}attention.output.LayerNorm`, H),
          ...lin(`${l}intermediate.dense`, I, H), ...lin(`${l}output.dense`, H, I), ...norm(`${l}output.LayerNorm`, H));
      }
      const pooler = lin('bert.pooler.dense', H, H);
      list.push(...(head ? pooler : optional(pooler)));
      if (head) list.push(...lin('classifier', head, H));
      return list;
    },
    ties: [],
  },

  distilbert: {
    architecture: 'hf-distilbert',
    classes: { DistilBertModel: 'base', DistilBertForSequenceClassification: 'classifier', DistilBertForMaskedLM: 'base' },
    tasks: { base: ['feature-extraction'], classifier: ['text-classification', 'feature-extraction'] },
    tokenizer: 'wordpiece',
    config(cfg) {
      const hp = resolve(cfg, { vocab_size: 30522, max_position_embeddings: 512, n_layers: 6, n_heads: 12, dim: 768,
        hidden_dim: 3072, activation: 'gelu' }, ['vocab_size', 'max_position_embeddings', 'n_layers', 'n_heads', 'dim', 'hidden_dim']);
      activation(hp, 'activation');
      divides(hp, 'n_heads', 'dim');
      return hp;
    },
    canonical: prefixed('distilbert.', /^(pre_classifier|classifier)\.(weight|bias)$/,
      [[/^embeddings\.position_ids$/, 'a buffer (position ids 0..n-1)'], [/^vocab_(transform|layer_norm|projector)\./, 'the masked-LM head']]),
    expected(hp, head) {
      const D = hp.dim;
      const e = 'distilbert.embeddings.';
      const list = [[`${e}word_embeddings.weight`, [hp.vocab_size, D]], [`${e}position_embeddings.weight`, [hp.max_position_embeddings, D]],
        ...norm(`${e}LayerNorm`, D)];
      for (const i of range(hp.n_layers)) {
        const l = `distilbert.transformer.layer.${i}.`;
        list.push(...lin(`${l}attention.q_lin`, D, D), ...lin(`${l}attention.k_lin`, D, D), ...lin(`${l}attention.v_lin`, D, D),
          ...lin(`${l}attention.out_lin`, D, D), ...norm(`${l}sa_layer_norm`, D),
          ...lin(`${l}ffn.lin1`, hp.hidden_dim, D), ...lin(`${l}ffn.lin2`, D, hp.hidden_dim), ...norm(`${l}output_layer_norm`, D));
      }
      if (head) list.push(...lin('pre_classifier', D, D), ...lin('classifier', head, D));
      return list;
    },
    ties: [],
  },

  gpt2: {
    architecture: 'hf-gpt2',
    classes: { GPT2Model: 'base', GPT2LMHeadModel: 'base' },
    tasks: { base: ['text-generation'] },
    tokenizer: 'bpe',
    config(cfg) {
      const hp = resolve(cfg, { vocab_size: 50257, n_positions: 1024, n_embd: 768, n_layer: 12, n_head: 12, n_inner: null,
        activation_function: 'gelu_new', layer_norm_epsilon: 1e-5, scale_attn_weights: true, scale_attn_by_inverse_layer_idx: false,
        reorder_and_upcast_attn: false, add_cross_attention: false, tie_word_embeddings: true },
      ['vocab_size', 'n_positions', 'n_embd', 'n_layer', 'n_head']);
      if (hp.n_inner === null) hp.n_inner = 4 * hp.n_embd;
      resolve(hp, {}, ['n_inner']);
      // scale_attn_weights and scale_attn_by_inverse_layer_idx are read by the engine (src/models/hf_gpt2.cpp).
      refuse(hp.reorder_and_upcast_attn === true, '"reorder_and_upcast_attn": true');
      refuse(hp.add_cross_attention === true, '"add_cross_attention": true');
      for (const k of ['scale_attn_weights', 'scale_attn_by_inverse_layer_idx']) {
        if (typeof hp[k] !== 'boolean') throw new ConvertError(`config.json: "${k}" must be true or false, got ${JSON.stringify(hp[k])}`);
      }
      activation(hp, 'activation_function');
      divides(hp, 'n_head', 'n_embd');
      return hp;
    },
    canonical: prefixed('transformer.', /^lm_head\.weight$/, [[/^h\.\d+\.attn\.(bias|masked_bias)$/, 'a buffer (the causal mask)']]),
    expected(hp) {
      const E = hp.n_embd;
      const list = [['transformer.wte.weight', [hp.vocab_size, E]], ['transformer.wpe.weight', [hp.n_positions, E]]];
      for (const i of range(hp.n_layer)) {
        const l = `transformer.h.${i}.`;
        // Conv1D weights in Hugging Face's layout [in, out].
        list.push(...norm(`${l}ln_1`, E), [`${l}attn.c_attn.weight`, [E, 3 * E]], [`${l}attn.c_attn.bias`, [3 * E]],
          [`${l}attn.c_proj.weight`, [E, E]], [`${l}attn.c_proj.bias`, [E]], ...norm(`${l}ln_2`, E),
          [`${l}mlp.c_fc.weight`, [E, hp.n_inner]], [`${l}mlp.c_fc.bias`, [hp.n_inner]],
          [`${l}mlp.c_proj.weight`, [hp.n_inner, E]], [`${l}mlp.c_proj.bias`, [E]]);
      }
      list.push(...norm('transformer.ln_f', E));
      list.push(['lm_head.weight', [hp.vocab_size, E], true]);
      return list;
    },
    // [copy, original, what happens when they differ]
    ties: [['lm_head.weight', 'transformer.wte.weight', 'keep']],
  },

  marian: {
    architecture: 'hf-marian',
    classes: { MarianMTModel: 'base' },
    tasks: { base: ['translation'] },
    tokenizer: 'marian',
    config(cfg) {
      const hp = resolve(cfg, { vocab_size: 58101, decoder_vocab_size: null, max_position_embeddings: 1024, encoder_layers: 12,
        encoder_ffn_dim: 4096, encoder_attention_heads: 16, decoder_layers: 12, decoder_ffn_dim: 4096, decoder_attention_heads: 16,
        activation_function: 'gelu', d_model: 1024, scale_embedding: false, pad_token_id: 58100, eos_token_id: 0,
        decoder_start_token_id: 58100, share_encoder_decoder_embeddings: true },
      ['vocab_size', 'max_position_embeddings', 'encoder_layers', 'encoder_ffn_dim', 'encoder_attention_heads', 'decoder_layers',
        'decoder_ffn_dim', 'decoder_attention_heads', 'd_model']);
      refuse(hp.share_encoder_decoder_embeddings === false,
        '"share_encoder_decoder_embeddings": false (separate source and target vocabularies)');
      refuse(hp.decoder_vocab_size !== null && hp.decoder_vocab_size !== hp.vocab_size,
        `"decoder_vocab_size": ${hp.decoder_vocab_size} different from "vocab_size" (${hp.vocab_size})`);
      activation(hp, 'activation_function');
      divides(hp, 'encoder_attention_heads', 'd_model');
      divides(hp, 'decoder_attention_heads', 'd_model');
      return hp;
    },
    canonical: (key) => {
      if (key === 'final_logits_bias' || key === 'lm_head.weight') return { name: key };
      const rel = key.startsWith('model.') ? key.slice(6) : key;
      if (/^(encoder|decoder)\.embed_positions\.weight$/.test(rel)) return { sinusoidal: `model.${rel}` };
      if (/^(encoder|decoder)\.embed_tokens\.weight$/.test(rel)) return { tie: `model.${rel}` };
      if (/^(shared\.weight|(encoder|decoder)\.layers\.)/.test(rel)) return { name: `model.${rel}` };
      return null;
    },
    expected(hp) {
      const d = hp.d_model;
      const attn = (p) => [...lin(`${p}.q_proj`, d, d), ...lin(`${p}.k_proj`, d, d), ...lin(`${p}.v_proj`, d, d), ...lin(`${p}.out_proj`, d, d)];
      const list = [['model.shared.weight', [hp.vocab_size, d]]];
      for (const i of range(hp.encoder_layers)) {
        const l = `model.encoder.layers.${i}.`;
        list.push(...attn(`${l}self_attn`), ...norm(`${l}self_attn_layer_norm`, d), ...lin(`${l}fc1`, hp.encoder_ffn_dim, d),
          ...lin(`${l}fc2`, d, hp.encoder_ffn_dim), ...norm(`${l}final_layer_norm`, d));
      }
      for (const i of range(hp.decoder_layers)) {
        const l = `model.decoder.layers.${i}.`;
        list.push(...attn(`${l}self_attn`), ...norm(`${l}self_attn_layer_norm`, d), ...attn(`${l}encoder_attn`),
          ...norm(`${l}encoder_attn_layer_norm`, d), ...lin(`${l}fc1`, hp.decoder_ffn_dim, d), ...lin(`${l}fc2`, d, hp.decoder_ffn_dim),
          ...norm(`${l}final_layer_norm`, d));
      }
      list.push(['final_logits_bias', [1, hp.vocab_size]], ['lm_head.weight', [hp.vocab_size, d], true]);
      return list;
    },
    ties: [['model.encoder.embed_tokens.weight', 'model.shared.weight', 'refuse'],
      ['model.decoder.embed_tokens.weight', 'model.shared.weight', 'refuse'], ['lm_head.weight', 'model.shared.weight', 'keep']],
    sinusoidal: (hp) => [hp.max_position_embeddings, hp.d_model],
  },

  vit: {
    architecture: 'hf-vit',
    classes: { ViTModel: 'base', ViTForImageClassification: 'classifier' },
    tasks: { base: ['feature-extraction'], classifier: ['image-classification', 'feature-extraction'] },
    tokenizer: 'image',
    config(cfg) {
      const hp = resolve(cfg, { hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072,
        hidden_act: 'gelu', layer_norm_eps: 1e-12, image_size: 224, patch_size: 16, num_channels: 3, qkv_bias: true },
      ['hidden_size', 'num_hidden_layers', 'num_attention_heads', 'intermediate_size', 'num_channels']);
      for (const k of ['image_size', 'patch_size']) {
        const v = Array.isArray(hp[k]) && hp[k].length === 2 ? hp[k] : [hp[k], hp[k]];
        if (!v.every((x) => Number.isSafeInteger(x) && x > 0 && x <= 1 << 16)) {
          throw new ConvertError(`config.json: "${k}" must be a positive integer or [height, width], got ${JSON.stringify(hp[k])}`);
        }
        hp[`${k}_hw`] = v;
      }
      const [ih, iw] = hp.image_size_hw;
      const [ph, pw] = hp.patch_size_hw;
      if (ih % ph || iw % pw) throw new ConvertError(`config.json: "image_size" ${ih}x${iw} is not a whole number of ${ph}x${pw} patches`);
      hp.num_patches = (ih / ph) * (iw / pw);
      refuse(hp.qkv_bias === false, '"qkv_bias": false');
      refuse(hp.num_channels !== 3, `"num_channels": ${hp.num_channels} (only 3, RGB)`);
      activation(hp, 'hidden_act');
      divides(hp, 'num_attention_heads', 'hidden_size');
      return hp;
    },
    canonical: prefixed('vit.', /^classifier\.(weight|bias)$/, [[/^embeddings\.mask_token$/, 'the masked-image-modelling token']]),
    expected(hp, head) {
      const H = hp.hidden_size;
      const I = hp.intermediate_size;
      const [ph, pw] = hp.patch_size_hw;
      const e = 'vit.embeddings.';
      const list = [[`${e}cls_token`, [1, 1, H]], [`${e}position_embeddings`, [1, hp.num_patches + 1, H]],
        [`${e}patch_embeddings.projection.weight`, [H, hp.num_channels, ph, pw]], [`${e}patch_embeddings.projection.bias`, [H]]];
      for (const i of range(hp.num_hidden_layers)) {
        const l = `vit.encoder.layer.${i}.`;
        list.push(...norm(`${l}layernorm_before`, H), ...lin(`${l}attention.attention.query`, H, H), ...lin(`${l}attention.attention.key`, H, H),
          ...lin(`${l}attention.attention.value`, H, H), ...lin(`${l}attention.output.dense`, H, H), ...norm(`${l}layernorm_after`, H),
          ...lin(`${l}intermediate.dense`, I, H), ...lin(`${l}output.dense`, H, I));
      }
      list.push(...norm('vit.layernorm', H));
      if (head) list.push(...lin('classifier', head, H));
      else list.push(...optional(lin('vit.pooler.dense', H, H)));
      return list;
    },
    dropWithHead: [/^vit\.pooler\./, 'the pooler (unused by the image classifier)'],
    ties: [],
  },
};

/** The sizes a model card reports: [label, value] pairs. */
export function describeSizes(modelType, hp) {
  const pick = {
    bert: [['layers', 'num_hidden_layers'], ['hidden size', 'hidden_size'], ['heads', 'num_attention_heads'], ['feed-forward', 'intermediate_size'], ['vocabulary', 'vocab_size'], ['positions', 'max_position_embeddings']],
    distilbert: [['layers', 'n_layers'], ['hidden size', 'dim'], ['heads', 'n_heads'], ['feed-forward', 'hidden_dim'], ['vocabulary', 'vocab_size'], ['positions', 'max_position_embeddings']],
    gpt2: [['layers', 'n_layer'], ['hidden size', 'n_embd'], ['heads', 'n_head'], ['feed-forward', 'n_inner'], ['vocabulary', 'vocab_size'], ['positions', 'n_positions']],
    marian: [['encoder layers', 'encoder_layers'], ['decoder layers', 'decoder_layers'], ['hidden size', 'd_model'], ['encoder heads', 'encoder_attention_heads'], ['decoder heads', 'decoder_attention_heads'], ['vocabulary', 'vocab_size']],
    vit: [['layers', 'num_hidden_layers'], ['hidden size', 'hidden_size'], ['heads', 'num_attention_heads'], ['feed-forward', 'intermediate_size'], ['image size', 'image_size'], ['patch size', 'patch_size']],
  }[modelType];
  return pick.map(([label, key]) => [label, JSON.stringify(hp[key])]);
}

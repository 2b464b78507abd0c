// The two RNN translators of models/training/translation/models.py, ported line by line. Both share one embedding
// matrix E (V×e) for source, target and output layer (Press & Wolf 2017) and an output bias b_out (V).
//
// attention "additive" — RnnAdditive (Bahdanau, Cho & Bengio 2015, app. A):
//   h_i = [GRU_fwd(E x)_i ; GRU_bwd(E x)_i]                 (S, 2H)   bi-GRU encoder   (nn/gru.h)
//   s_0 = tanh(W_init h<-_1 + b_init)                        h<-_1 = backward state at the first token
//   e_ti = vᵀ tanh(W_q s_{t−1} + b_q + U h_i)                U h_i computed once, no bias
//   a_t = softmax(e_t);  c_t = Σ_i a_ti h_i
//   s_t = GRUCell([E y_{t−1}; c_t], s_{t−1})
//   o_t = tanh(W_r [s_t; c_t; E y_{t−1}] + b_r);  logits_t = o_t Eᵀ + b_out
// tensors: embed.weight, encoder.{weight,bias}_{ih,hh}_l0[_reverse], init_proj.{weight,bias}, attn_key.weight,
//          attn_query.{weight,bias}, attn_v.weight, decoder.{weight,bias}_{ih,hh}, readout.{weight,bias}, out_bias
//
// attention "general" — RnnGeneral (Luong, Pham & Manning 2015, sec. 3.1 and 3.3; input feeding):
//   hbar_i = [LSTM_fwd(E x)_i ; LSTM_bwd(E x)_i]            (S, D), D = 2H = decoder hidden   (nn/lstm.h)
//   (h_0, c_0) of every decoder layer = ([h_fwd_last; h_bwd_first], [c_fwd_last; c_bwd_first])
//   x_t = [E y_{t−1}; htilde_{t−1}],  htilde_0 = 0;  stacked LSTMCells, layer l > 0 takes layer l−1's new h
//   score_ti = h_tᵀ W_a hbar_i  (W_a hbar_i computed once);  a_t = softmax;  c_t = Σ_i a_ti hbar_i
//   htilde_t = tanh(W_c [c_t; h_t]);  logits_t = htilde_t Eᵀ + b_out
// tensors: embed.weight, encoder.{weight,bias}_{ih,hh}_l0[_reverse], decoder.<l>.{weight,bias}_{ih,hh},
//          attn_w.weight, attn_combine.weight, out_bias
//
// Both return one attention map per decoding step over the source positions: "cross" [T,S] (layer −1, head −1).
// Both decode a list's sources together (start_many: one decoder row per source, each attending over its own).
// Config (export.py / bundle.py): architecture "rnn-seq2seq", attention, vocab_size, embedding_dim,
// encoder_hidden, encoder_cell, decoder_cell, decoder_hidden, decoder_layers, input_feeding, attention_dim
// (additive), shared_embeddings, output_bias; optional max_source_positions (default 256: the API truncates
// longer sources, which keeps the cost of any input bounded).
#pragma once

#include <memory>

#include "io/bundle.h"
#include "models/seq2seq.h"

namespace attnlens::models {

// The RNN translator a bundle describes; Error naming the key when the config is not one of the two families.
std::unique_ptr<Seq2SeqModel> make_rnn_seq2seq(const io::Bundle& bundle);

}  // namespace attnlens::models

// Show, Attend and Tell soft-attention LSTM decoder (Xu et al. 2015, arXiv:1502.03044), ported line by line from
// models/training/captioning/sat.py (the equations at its top; ShowAttendTell.step, greedy_decode, beam_decode).
// Per image, a = grid features [L × D] (L = g² cells, row-major y·g + x, g = 7 at 224² input; D = 1280 + extras):
//
//   p     = a W_pᵀ + b_p                            feat_proj                 [L × P]  (fixed PCA projection)
//   h_0   = tanh(W_ih0 mean_i(p_i) + b), c_0 likewise   init_h, init_c       [H]
//   keys  = p W_kᵀ + b_k                            att_feat                  [L × A]  (once per image)
//   each step, previous word y (y_0 = <start>):
//   e_i   = wᵀ tanh(keys_i + W_q h + b_q) + b_w     att_hidden, att_score     additive score (SAT eq. 4)
//   (decoder.score_smoothing = k > 0: e_i ← the mean of e over the k × k cells around cell i inside the grid,
//    attention::smooth_grid_scores, sat.smooth_scores)
//   α     = softmax_i(e)                                                       (eq. 5)
//   z     = Σ_i α_i p_i;  β = σ(w_bᵀ h + b_b)       gate                      (eq. 6/13, sec. 4.2.1)
//   x     = [E[y] ; β·z]                            embed
//   h, c  = LSTMCell(x, (h, c))                     lstm (PyTorch gate order; nn/lstm.h)
//   logits = W_o h + b_o                            fc                        [V]
//
// decoder.context = "output" (sat.py's context="output"; the default "lstm" is the paper's order above): the LSTM
// reads the word alone and the image reaches a word only through that word's attention, computed after the LSTM:
//   h, c  = LSTMCell(E[y], (h, c))                  lstm.weight_ih            [4H × M]
//   e, α, z as above with the query W_q h of the new h;  β = σ(w_bᵀ h + b_b)
//   logits = W_o [h ; β·z] + b_o                    fc                        [V × (H + P)]
//
// Decoding (sat.py, rule for rule):
//   greedy  y_t = argmax logits (ties → lowest id); stop after <end> (its step is kept in alphas/logits/betas,
//           not in tokens) or after max_len steps.
//   beam    each step extends every active hypothesis by every word and keeps the `beam` best extensions overall
//           (score = float32 sum of log-softmax; equal scores → lower flat index hyp·V + w, torch.topk's order);
//           kept ones ending in <end> are finished and leave the active set. Stop when `beam` have finished, none
//           is active, or after max_len steps. Answer = the finished hypothesis with the best score (first one on
//           ties; score / len^length_norm when length_norm > 0), or the best active one when none finished.
//   forced  teacher forcing of given words w_1..w_n (sat.forced_decode): feed <start>, w_1, …, w_n; step t scores
//           w_{t+1} (step n scores <end>) by log-softmax of its logits. Steps = n + 1, like a greedy caption that
//           chose exactly these words and then <end>.
//   banned  greedy and beam take an optional list of word ids that are never chosen (the API bans <unk> unless
//           CaptionParams.allow_unk): greedy takes the argmax over the other words, beam never keeps an extension
//           by a banned word. The probabilities are not renormalised (log-softmax over the whole vocabulary, so
//           scores stay comparable with unbanned search); with an empty list both are sat.py's search exactly.
//   This differs from decode/search.h (which refills the beam with `k` live hypotheses and finishes separately,
//   with GNMT penalties), so the captioner keeps this search: the trained model's reference is sat.beam_decode.
//   Hypotheses are not copied: each step keeps α and β of every row it ran plus the row's parent and fed word, and
//   the answer's tokens, α and β come out of one backtrack at the end (memory O(steps · beam · L)).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "io/bundle.h"
#include "kernels/kernels.h"
#include "nn/linear.h"
#include "nn/lstm.h"

namespace attnlens::models {

struct SatConfig {
  std::size_t vocab_size = 0, feat_dim = 0, proj_dim = 0, embed_dim = 0, hidden_dim = 0, att_dim = 0;
  std::size_t max_len = 30;
  int start_id = 1, end_id = 2;
  std::size_t score_smoothing = 0;  // k > 0: scores smoothed over k × k cells before the softmax (smooth_grid_scores)
  bool context_output = false;      // decoder.context "output": z feeds the output layer, not the LSTM (see above)
};

struct SatDecodeResult {
  std::vector<int> tokens;     // generated ids; the final <end> is NOT included (see `finished`)
  bool finished = false;       // an <end> was chosen: its step is the last row of alphas/betas/logits
  std::vector<float> alphas;   // [steps × L]
  std::vector<float> betas;    // [steps]
  std::vector<float> logits;   // [steps × V] (greedy only; empty for beam and forced)
  std::vector<float> logprobs; // [steps] forced only: log-probability of each step's word (<end> last)
  std::size_t steps = 0;
  float score = 0;             // sum of log-probabilities (beam; for greedy the chosen words' log-probabilities)
};

class ShowAttendTell {
 public:
  ShowAttendTell() = default;
  // Tensors "<prefix><sat.ShowAttendTell state_dict name>", sizes from config.json "decoder" (Error naming the
  // key or tensor on any mismatch).
  static ShowAttendTell from_bundle(const io::Bundle& bundle, const std::string& prefix = "decoder.");

  const SatConfig& config() const { return cfg_; }

  struct Encoded {
    std::size_t cells = 0;
    std::vector<float> p;     // [L × P]
    std::vector<float> keys;  // [L × A]
    std::vector<float> h0, c0;  // [H]
  };
  // grid [cells × feat_dim] → projected features, keys and the initial state.
  Encoded encode(const float* grid, std::size_t cells) const;

  // Buffers one step needs, sized by the first step and reused by the next ones (no allocation per step).
  struct StepScratch {
    std::vector<float> q, tmp, x, gates, smooth, out;
    std::vector<const Encoded*> encs;  // the image each row attends over
  };
  // One step of one hypothesis: h, c [H] in/out; writes logits [V], alpha [L] and beta.
  void step(const Encoded& enc, int prev_word, float* h, float* c, float* logits, float* alpha, float* beta) const;
  void step(const Encoded& enc, int prev_word, float* h, float* c, float* logits, float* alpha, float* beta,
            StepScratch& scratch) const;
  // The same for k hypotheses at once (a beam's rows): words [k], h, c [k × H] in/out, logits [k × V], alpha
  // [k × L], beta [k]. Each packed product reads its weights once per pair of rows; every row's results have the
  // same bits as step() on that row alone (step() is this with k = 1).
  void step_rows(const Encoded& enc, std::size_t k, const int* words, float* h, float* c, float* logits,
                 float* alpha, float* beta, StepScratch& scratch) const;
  // The same when row r attends over its own image encs[r] (a list of images decoded together); every image has
  // the same number of cells L. Row r's results have the same bits as step() on that row and image alone.
  void step_rows(const Encoded* const* encs, std::size_t k, const int* words, float* h, float* c, float* logits,
                 float* alpha, float* beta, StepScratch& scratch) const;

  // max_len 0 → the config's max_len. `banned`: word ids never chosen (see above; ids outside the vocabulary and
  // the end id are an Error: a search that may never finish is a caller bug).
  SatDecodeResult greedy(const Encoded& enc, std::size_t max_len = 0, const std::vector<int>& banned = {}) const;
  // Greedy captions of several images decoded together: each step's products take every unfinished image's row
  // at once (kernels::linear_packed reads the weights once per pair of rows). Result i equals greedy(*encs[i])
  // bit for bit. The images must have the same number of cells.
  std::vector<SatDecodeResult> greedy_many(const std::vector<const Encoded*>& encs, std::size_t max_len = 0,
                                           const std::vector<int>& banned = {}) const;
  SatDecodeResult beam(const Encoded& enc, std::size_t beam, std::size_t max_len = 0, double length_norm = 0,
                       const std::vector<int>& banned = {}) const;
  // Teacher forcing of `words` (ids, no <start>/<end>; may be empty: then only <end> is scored): tokens = words,
  // finished = true, steps = words.size() + 1, alphas/betas/logprobs per step, score = Σ logprobs.
  SatDecodeResult force(const Encoded& enc, const std::vector<int>& words) const;

 private:
  std::vector<char> ban_mask(const std::vector<int>& banned) const;
  // α, z and β of k rows for the query states h [k × H]: α into alpha [k × L], β·z into zs (row r at zs + r·z_stride),
  // β into beta [k]; q = W_q h + b_q is computed here.
  void attend_rows(const Encoded* const* encs, std::size_t k, const float* h, float* alpha, float* zs,
                   std::size_t z_stride, float* beta, StepScratch& scratch) const;

  SatConfig cfg_;
  std::vector<float> proj_w_, proj_b_;      // [P × D], [P]
  std::vector<float> init_h_w_, init_h_b_;  // [H × P], [H]
  std::vector<float> init_c_w_, init_c_b_;
  std::vector<float> att_feat_w_, att_feat_b_;      // [A × P], [A]
  nn::Linear att_hidden_;                           // [A × H], packed (as every weight a step reads)
  std::vector<float> att_score_w_;                  // [A]
  float att_score_b_ = 0;
  std::vector<float> gate_w_;  // [H]
  float gate_b_ = 0;
  std::vector<float> embed_;   // [V × M]
  kernels::PackedMatrix lstm_p_ih_, lstm_p_hh_;  // [4H × (M+P)] ([4H × M] with context "output"), [4H × H], packed
  std::vector<float> lstm_bias_;                 // b_ih + b_hh [4H]
  nn::Linear fc_;                                // [V × H] ([V × (H+P)] with context "output"), packed
};

}  // namespace attnlens::models

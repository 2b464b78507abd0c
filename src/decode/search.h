// Greedy and beam search over a small step interface, shared by every sequence decoder (the translators, later the
// captioner). The algorithm is models/training/translation/decoding.py, rule for rule, so that the engine returns
// the very tokens PyTorch returns:
//
//   greedy   y_t = argmax_w logits_t[w] (ties → lowest id); stops after </s> (kept in the output) or at the limit.
//   beam     alive = [(tokens = [], score = 0, coverage = 0)], finished = []
//            each step: cand[i, w] = alive[i].score + log_softmax(logits_i)[w]   (float32)
//            walk candidates by descending cand, equal values by ascending flat index i·V + w:
//              w == </s> (or the last allowed step) → finished (stop the walk at |finished| == n)
//              otherwise                            → next alive (stop the walk at |next alive| == k)
//            stop when |finished| ≥ n, at the last step, or when nothing stays alive — or earlier, once no alive
//              hypothesis can still be chosen: its score S can only fall (log-probabilities are ≤ 0), so it ends
//              with a value ≤ S / max(lp) over the lengths it can still reach (beta ≥ 0 makes cp ≤ 0); when that
//              bound is ≤ the best finished value for every alive one, the choice below is already made. This
//              returns exactly what the full rule returns (only `hypotheses` counts fewer) and saves the steps
//              a beam spent finishing hypotheses that could not win.
//            n = c·k finished hypotheses are collected (c = candidates_per_beam, 1 = the classic rule; a larger
//              pool lets hypotheses that end later, often the ones that translate every clause, compete)
//            choice: the finished hypothesis with the highest  score / lp(L) + cp,  ties → earliest finished;
//              lp(L) = ((5 + L) / 6)^alpha  (GNMT length penalty, Wu et al. 2016 eq. 14; L counts </s>),
//              cp    = beta · Σ_i log(min(Σ_t a_{t,i}, 1))  (GNMT coverage penalty; a_t = the step's attention
//                      signal over the source positions; beta = 0 switches it off).
// A hypothesis is never copied: each step keeps, per row it ran, the row's parent at the step before and the token
// it was fed; the chosen hypothesis (its tokens and the model row that produced each one) comes out of one backtrack
// at the end. Whatever the model recorded per (step, row) during the search — its attention maps — is read back
// through SearchResult::rows (models/seq2seq.h: Seq2SeqDecoder::trace_hypothesis).
#pragma once

#include <cstddef>
#include <vector>

namespace attnlens::decode {

// One decoder over `rows()` hypotheses that share one encoded source. A model implements this for search; the
// search never sees weights or caches.
class StepModel {
 public:
  virtual ~StepModel() = default;
  virtual std::size_t vocab_size() const = 0;
  // Length of the attention signal written by step() (source positions), for the coverage penalty.
  virtual std::size_t source_length() const = 0;
  // Number of hypotheses the model currently holds (1 after the model was started).
  virtual std::size_t rows() const = 0;
  // Feeds prev[r] (the previous token of row r, <s> at the first step) to every row and advances one position.
  // logits: rows × vocab_size; attention (may be null): rows × source_length, each row the attention signal of
  // this step (its own distribution over source positions).
  virtual void step(const int* prev, float* logits, float* attention) = 0;
  // Keeps the rows `parents` (new row r = old row parents[r]; a parent may repeat); rows() becomes parents.size().
  virtual void reorder(const std::vector<int>& parents) = 0;
};

inline constexpr int kMaxCandidatesPerBeam = 8;

struct SearchParams {
  int num_beams = 1;         // 1 = greedy
  int max_new_tokens = 0;    // hard limit on generated tokens (≥ 1)
  double alpha = 0.6;        // GNMT length penalty exponent
  double coverage_beta = 0;  // GNMT coverage penalty weight (0 = off)
  int candidates_per_beam = 1;  // finished hypotheses collected for the choice: this × num_beams (1 … 8)
  int bos_id = 2;
  int eos_id = 3;
};

struct SearchResult {
  std::vector<int> tokens;  // generated ids, the final </s> included when one was produced
  std::vector<int> rows;    // rows[t]: the model row whose step t produced tokens[t] (greedy: all 0)
  float score = 0;          // sum of log-probabilities (float32, as accumulated)
  double normalised = 0;    // score / lp + cp (beam); equal to score for greedy
  bool finished = false;    // ended with </s>
  int hypotheses = 1;       // finished hypotheses when the search stopped (the choice was made among them)
};

// Greedy decoding (model must hold 1 row).
SearchResult greedy_search(StepModel& model, const SearchParams& params);
// Greedy decoding of several independent hypotheses at once (a list of sentences, models/seq2seq.h start_many):
// the model holds one row per entry of max_new_tokens, in order; each row is decoded exactly as greedy_search
// decodes it alone (same rule, same float sums), a row leaving the batch (reorder) when it ends. Result i belongs
// to row i; its `rows` give the model row that produced each token (rows move up as others leave).
std::vector<SearchResult> greedy_search_many(StepModel& model, const std::vector<int>& max_new_tokens, int bos_id,
                                             int eos_id);
// Beam search as specified above (model must hold 1 row; it is reordered as the beam evolves).
SearchResult beam_search(StepModel& model, const SearchParams& params);
// Either of the two, by params.num_beams.
SearchResult search(StepModel& model, const SearchParams& params);

}  // namespace attnlens::decode

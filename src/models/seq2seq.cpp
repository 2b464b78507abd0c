// Teacher forcing shared by the translators (see seq2seq.h).
#include "models/seq2seq.h"

#include "common.h"

namespace attnlens::models {

std::vector<float> teacher_force(Seq2SeqDecoder& decoder, const std::vector<int>& tgt_in, AttentionTrace* trace) {
  require(decoder.rows() == 1, "teacher forcing: the decoder must hold exactly one row");
  const bool tracing = trace != nullptr && trace->enabled();
  const std::size_t T = tgt_in.size(), vocab = decoder.vocab_size();
  if (tracing) decoder.record_maps(1, T);
  std::vector<float> logits(T * vocab);
  for (std::size_t t = 0; t < T; ++t) decoder.step(&tgt_in[t], logits.data() + t * vocab, nullptr);
  if (tracing) decoder.trace_hypothesis(std::vector<int>(T, 0), *trace);
  return logits;
}

void Seq2SeqModel::query_key_vectors(const std::vector<int>&, const std::vector<int>&, AttentionTrace&) const {
  throw Error("query/key vectors: this model's attention is not dot-product attention (only transformer-seq2seq "
              "translators have them)");
}

}  // namespace attnlens::models

// Text as people type it, around the translator's model (api/translation_input.h).
#include "api/translation_input.h"

#include <algorithm>
#include <utility>

#include "text/recase.h"
#include "text/sentences.h"
#include "text/utf8.h"

namespace attnlens::api::detail {

namespace {

// The UTF-16 string index (as JavaScript counts, text::utf16_units: a 4-byte sequence is two code units, every other
// character one, an encoded surrogate and each U+FFFD of ill-formed bytes one) of `s` at each of its bytes; a byte
// inside a character maps to the character's end.
std::vector<std::uint32_t> utf16_index(std::string_view s) {
  std::vector<std::size_t> offsets;
  const std::u32string cps = text::decode_wtf8(s, &offsets);
  std::vector<std::uint32_t> units(s.size() + 1, 0);
  std::uint32_t u = 0;
  for (std::size_t k = 0; k < cps.size(); ++k) {
    const std::uint32_t next = u + (cps[k] > 0xFFFF ? 2 : 1);
    units[offsets[k]] = u;
    for (std::size_t b = offsets[k] + 1; b < offsets[k + 1]; ++b) units[b] = next;
    u = next;
  }
  units[s.size()] = u;
  return units;
}

struct Block {
  std::size_t rows, cols;
  const float* data;
};

// Blocks of the same leading size (`lead` matrices each) → one [lead, ΣR, ΣC] matrix, block i at rows ΣR<i and
// columns ΣC<i, zeros elsewhere: every row sums to what it summed to.
std::vector<float> block_diagonal(const std::vector<Block>& blocks, std::size_t lead, std::size_t& rows,
                                  std::size_t& cols) {
  rows = 0, cols = 0;
  for (const Block& b : blocks) rows += b.rows, cols += b.cols;
  std::vector<float> out(lead * rows * cols, 0.0f);
  std::size_t r0 = 0, c0 = 0;
  for (const Block& b : blocks) {
    for (std::size_t l = 0; l < lead; ++l)
      for (std::size_t r = 0; r < b.rows; ++r)
        std::copy_n(b.data + (l * b.rows + r) * b.cols, b.cols, out.begin() + ((l * rows + r0 + r) * cols + c0));
    r0 += b.rows, c0 += b.cols;
  }
  return out;
}

// The sentences' traces → one trace of block-diagonal maps; empty when their maps differ (kinds, layers, heads,
// ranks or leading dims), or when any of them is empty.
AttentionTrace combine_traces(const std::vector<const AttentionTrace*>& traces) {
  AttentionTrace out;
  const AttentionTrace& first = *traces.front();
  for (const AttentionTrace* t : traces) {
    if (t->size() != first.size() || t->empty()) return out;
    for (std::size_t i = 0; i < first.size(); ++i) {
      const MapView a = first[i], b = (*t)[i];
      if (a.name != b.name || a.layer != b.layer || a.head != b.head || a.dims.size() != b.dims.size() ||
          a.dims.size() < 2 || !std::equal(a.dims.begin(), a.dims.end() - 2, b.dims.begin()))
        return out;
    }
  }
  for (std::size_t i = 0; i < first.size(); ++i) {
    const MapView m0 = first[i];
    std::vector<std::size_t> dims(m0.dims.begin(), m0.dims.end() - 2);
    std::size_t lead = 1;
    for (std::size_t d : dims) lead *= d;
    std::vector<Block> blocks;
    for (const AttentionTrace* t : traces) {
      const MapView m = (*t)[i];
      blocks.push_back({m.dims[m.dims.size() - 2], m.dims.back(), m.data.data()});
    }
    std::size_t rows = 0, cols = 0;
    const std::vector<float> data = block_diagonal(blocks, lead, rows, cols);
    dims.push_back(rows), dims.push_back(cols);
    out.record(m0.name, m0.layer, m0.head, m0.step, dims, data.data());
  }
  return out;
}

// Several sentences' results (placed in the input) → the whole input's: text joined with ' ', tokens, ids, words
// and links concatenated (pieces and links re-indexed, target words indexing the joined text), score summed, every
// map block-diagonal (each sentence attended only to itself), number copies re-indexed with their sentence.
TranslationResult combine(std::vector<TranslationResult> sentences, bool dropped) {
  TranslationResult out;
  std::size_t src_tok = 0, tgt_tok = 0, src_words = 0, tgt_words = 0, tgt_bytes = 0, tgt_units = 0;
  std::vector<Block> align_blocks;
  bool maps = true;
  for (std::size_t k = 0; k < sentences.size(); ++k) {
    const TranslationResult& s = sentences[k];
    if (k > 0) out.text += ' ';
    out.text += s.text;
    out.source_tokens.insert(out.source_tokens.end(), s.source_tokens.begin(), s.source_tokens.end());
    out.target_tokens.insert(out.target_tokens.end(), s.target_tokens.begin(), s.target_tokens.end());
    out.source_ids.insert(out.source_ids.end(), s.source_ids.begin(), s.source_ids.end());
    out.target_ids.insert(out.target_ids.end(), s.target_ids.begin(), s.target_ids.end());
    for (WordSpan w : s.source_words) {
      w.first_piece += src_tok, w.end_piece += src_tok;
      out.source_words.push_back(std::move(w));
    }
    for (WordSpan w : s.target_words) {
      w.first_piece += tgt_tok, w.end_piece += tgt_tok;
      w.byte_begin += tgt_bytes, w.byte_end += tgt_bytes, w.start += tgt_units, w.end += tgt_units;
      out.target_words.push_back(std::move(w));
    }
    for (analysis::Link l : s.alignment) {
      l.source += static_cast<int>(src_words), l.target += static_cast<int>(tgt_words);
      out.alignment.push_back(l);
    }
    for (analysis::NumberCopy c : s.number_copies) {
      c.target_word += static_cast<int>(tgt_words);
      c.sentence = static_cast<int>(k);
      out.number_copies.push_back(std::move(c));
    }
    maps = maps && !s.alignment_map.empty();
    align_blocks.push_back({s.target_words.size(), s.source_words.size(), s.alignment_map.data()});
    src_tok += s.source_tokens.size(), tgt_tok += s.target_tokens.size();
    src_words += s.source_words.size(), tgt_words += s.target_words.size();
    tgt_bytes += s.text.size() + 1;
    tgt_units += utf16_index(s.text).back() + 1;
    out.truncated = out.truncated || s.truncated;
    out.score += s.score;
    out.source_pieces += s.source_pieces;
  }
  std::vector<const AttentionTrace*> traces, word_traces;
  for (const auto& s : sentences) traces.push_back(&s.attentions), word_traces.push_back(&s.word_attentions);
  out.attentions = combine_traces(traces);
  out.word_attentions = combine_traces(word_traces);
  if (maps) {
    std::size_t rows = 0, cols = 0;
    out.alignment_map = block_diagonal(align_blocks, 1, rows, cols);
  }
  out.alignment_method = sentences.front().alignment_method;
  out.num_beams = sentences.front().num_beams;
  out.truncated = out.truncated || dropped;
  out.placed = true;
  out.source_start = sentences.front().source_start;
  out.source_end = sentences.back().source_end;
  out.split = true;
  out.sentences = std::move(sentences);
  return out;
}

}  // namespace

PreparedInput::PreparedInput(std::string_view input) : prepared(text::prepare_text(input)), units(utf16_index(input)) {}

void PreparedInput::place_words(std::vector<WordSpan>& words, std::size_t base) const {
  const std::size_t n = prepared.text.size();
  for (WordSpan& w : words) {
    const std::size_t b = prepared.to_input_begin[std::min(base + w.byte_begin, n)];
    const std::size_t e = prepared.to_input_end[std::min(base + w.byte_end, n)];
    w.byte_begin = b, w.byte_end = e;
    w.start = units[std::min<std::size_t>(b, units.size() - 1)];
    w.end = units[std::min<std::size_t>(e, units.size() - 1)];
  }
}

void set_string_indices(std::vector<WordSpan>& words, std::string_view text) {
  const std::vector<std::uint32_t> units = utf16_index(text);
  for (WordSpan& w : words) {
    w.start = units[std::min(w.byte_begin, text.size())];
    w.end = units[std::min(w.byte_end, text.size())];
  }
}

InputPlan plan_input(std::string_view input, bool restore_case, std::size_t max_source_ids, const PieceCount& pieces) {
  InputPlan plan;
  plan.input = PreparedInput(input);
  const std::string& t = plan.input.prepared.text;
  const std::vector<text::TextSpan> spans = text::split_sentences(t);
  std::size_t used = 0;
  for (const text::TextSpan& span : spans) {
    SentenceUnit u;
    u.begin = span.begin, u.end = span.end;
    const std::string_view sentence(t.data() + span.begin, span.end - span.begin);
    u.text = restore_case ? text::restore_case(sentence, pieces) : std::string(sentence);
    u.recased = u.text != sentence;
    if (spans.size() > 1) {
      const std::size_t need = pieces(u.text) + 1;
      if (!plan.sentences.empty() && used + need > max_source_ids) {
        plan.dropped = true;
        break;
      }
      used += std::min(need, max_source_ids);
    }
    plan.sentences.push_back(std::move(u));
  }
  return plan;
}

TranslationResult assemble_input(const InputPlan& plan, std::vector<TranslationResult> results) {
  if (plan.sentences.empty()) {  // nothing to translate: the empty result, no sentences
    TranslationResult out = std::move(results.front());
    out.placed = true, out.split = true;
    return out;
  }
  const PreparedInput& in = plan.input;
  for (std::size_t k = 0; k < results.size(); ++k) {
    TranslationResult& r = results[k];
    const SentenceUnit& u = plan.sentences[k];
    in.place_words(r.source_words, u.begin);
    r.placed = true;
    r.source_start = in.units[in.prepared.to_input_begin[u.begin]];
    r.source_end = in.units[in.prepared.to_input_end[u.end]];
    if (u.recased) r.source_text = u.text;
  }
  if (results.size() == 1 && !plan.dropped) {  // one sentence: its result, and itself as the one sentence
    TranslationResult out = results.front();
    out.split = true, out.sentence_is_self = true;
    out.sentences = std::move(results);
    return out;
  }
  return combine(std::move(results), plan.dropped);
}

}  // namespace attnlens::api::detail

#include "text/bpe.h"

#include <algorithm>
#include <fstream>
#include <queue>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common.h"
#include "text/utf8.h"

namespace attnlens::text {

namespace {

constexpr char32_t kMarkerCp = 0x2581;

// Steps 1–3 of the pipeline (see bpe.h), on code points.
std::vector<std::u32string> pretokenize_cps(std::string_view text) {
  const std::u32string cps = decode_utf8(text);
  std::vector<std::u32string> out;
  bool after_space = true;  // the dummy prefix: the first pre-token carries the marker too
  std::u32string word;
  auto flush_word = [&] {
    if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  };
  for (char32_t cp : cps) {
    if (cp == kMarkerCp) cp = U'_';  // the marker is reserved
    switch (classify(cp)) {
      case CharClass::kSpace:
        flush_word();
        after_space = true;
        break;
      case CharClass::kPunct:
        flush_word();
        out.emplace_back();
        if (after_space) out.back().push_back(kMarkerCp);
        out.back().push_back(cp);
        after_space = false;
        break;
      case CharClass::kWord:
        if (word.empty() && after_space) word.push_back(kMarkerCp);
        word.push_back(cp);
        after_space = false;
        break;
    }
  }
  flush_word();
  return out;
}

std::string cp_to_utf8(char32_t cp) {
  std::string s;
  append_utf8(s, cp);
  return s;
}


std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  require(static_cast<bool>(in), "cannot open '" + path + "' for reading (does it exist?)");
  std::ostringstream ss;
  ss << in.rdbuf();
  require(!in.bad(), "error while reading '" + path + "'");
  return ss.str();
}

// ---- learning ----

struct LearnWord {
  std::vector<int> symbols;
  std::int64_t freq = 0;
};

struct PairEntry {
  std::int64_t count;
  int left, right;
};

}  // namespace

std::vector<std::string> bpe_pretokenize(std::string_view text) {
  std::vector<std::string> out;
  for (const auto& p : pretokenize_cps(text)) out.push_back(encode_utf8(p));
  return out;
}

BpeTokenizer BpeTokenizer::learn(const std::vector<std::string>& lines, const BpeLearnOptions& options) {
  std::string joined;
  for (const auto& l : lines) {
    joined += l;
    joined += '\n';
  }
  std::istringstream in(joined);
  return learn(std::vector<std::istream*>{&in}, options);
}

BpeTokenizer BpeTokenizer::learn(std::vector<std::istream*> inputs, const BpeLearnOptions& options) {
  require(options.num_merges >= 0, "BPE learn: the number of merges must be >= 0 (got " +
                                        std::to_string(options.num_merges) + ")");
  require(options.min_frequency >= 1, "BPE learn: the minimum character frequency must be >= 1 (got " +
                                          std::to_string(options.min_frequency) + ")");
  // Pre-token frequencies.
  std::unordered_map<std::u32string, std::int64_t> word_counts;
  std::string line;
  for (std::istream* in : inputs) {
    while (std::getline(*in, line))
      for (auto& p : pretokenize_cps(line)) ++word_counts[std::move(p)];
  }

  // Character vocabulary: frequency desc, then code point.
  std::unordered_map<char32_t, std::int64_t> char_counts;
  for (const auto& [w, f] : word_counts)
    for (char32_t cp : w) char_counts[cp] += f;
  std::vector<std::pair<char32_t, std::int64_t>> chars;
  for (const auto& [cp, f] : char_counts)
    if (f >= options.min_frequency) chars.emplace_back(cp, f);
  std::sort(chars.begin(), chars.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });

  BpeTokenizer tok;
  for (int i = 0; i < kNumSpecialTokens; ++i) tok.vocab_.push_back(kSpecialTokens[i]);
  for (const auto& [cp, f] : chars) {
    tok.char_to_id_[cp] = static_cast<int>(tok.vocab_.size());
    tok.vocab_.push_back(cp_to_utf8(cp));
  }
  for (std::size_t i = 0; i < tok.vocab_.size(); ++i) tok.piece_to_id_[tok.vocab_[i]] = static_cast<int>(i);

  std::vector<LearnWord> words;
  words.reserve(word_counts.size());
  for (const auto& [w, f] : word_counts) {
    LearnWord lw;
    lw.freq = f;
    for (char32_t cp : w) {
      auto it = tok.char_to_id_.find(cp);
      lw.symbols.push_back(it == tok.char_to_id_.end() ? kUnkId : it->second);
    }
    words.push_back(std::move(lw));
  }
  word_counts.clear();

  // Incremental pair statistics: counts, and which words may contain each pair (lists can hold stale entries;
  // a word is checked before it is used).
  std::unordered_map<std::uint64_t, std::int64_t> pair_count;
  std::unordered_map<std::uint64_t, std::vector<int>> pair_words;
  auto usable = [](int a, int b) { return a != kUnkId && b != kUnkId; };
  for (int w = 0; w < static_cast<int>(words.size()); ++w) {
    const auto& s = words[w].symbols;
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      if (!usable(s[i], s[i + 1])) continue;
      const std::uint64_t k = pair_key(s[i], s[i + 1]);
      pair_count[k] += words[w].freq;
      auto& list = pair_words[k];
      if (list.empty() || list.back() != w) list.push_back(w);
    }
  }

  const auto& vocab = tok.vocab_;
  auto lower_priority = [&vocab](const PairEntry& a, const PairEntry& b) {
    if (a.count != b.count) return a.count < b.count;
    // Equal counts: the lexicographically smaller (left, right) pair wins, i.e. has the higher priority.
    const int c = vocab[a.left].compare(vocab[b.left]);
    if (c != 0) return c > 0;
    return vocab[a.right] > vocab[b.right];
  };
  std::priority_queue<PairEntry, std::vector<PairEntry>, decltype(lower_priority)> heap(lower_priority);
  for (const auto& [k, c] : pair_count)
    heap.push({c, static_cast<int>(k >> 32), static_cast<int>(k & 0xFFFFFFFFu)});

  std::vector<int> seen_at_merge(words.size(), -1);
  std::unordered_map<std::uint64_t, std::int64_t> delta;
  while (static_cast<int>(tok.merges_.size()) < options.num_merges && !heap.empty()) {
    const PairEntry top = heap.top();
    heap.pop();
    const std::uint64_t key = pair_key(top.left, top.right);
    auto cit = pair_count.find(key);
    if (cit == pair_count.end() || cit->second != top.count) continue;  // stale entry
    if (top.count < 2) break;  // every remaining pair occurs once: merging would only memorise single words

    const int rank = static_cast<int>(tok.merges_.size());
    const std::string merged = vocab[top.left] + vocab[top.right];
    int result;
    auto pit = tok.piece_to_id_.find(merged);
    if (pit != tok.piece_to_id_.end()) {
      result = pit->second;  // the same string reached through another split: one piece, one id
    } else {
      result = static_cast<int>(tok.vocab_.size());
      tok.vocab_.push_back(merged);
      tok.piece_to_id_.emplace(merged, result);
    }
    tok.merges_.emplace_back(vocab[top.left], vocab[top.right]);
    tok.merge_rules_[key] = {rank, result};

    delta.clear();
    std::vector<int> candidates = std::move(pair_words[key]);
    pair_words.erase(key);
    for (int w : candidates) {
      if (seen_at_merge[w] == rank) continue;
      seen_at_merge[w] = rank;
      auto& s = words[w].symbols;
      const std::int64_t f = words[w].freq;
      bool has = false;
      for (std::size_t i = 0; i + 1 < s.size() && !has; ++i) has = s[i] == top.left && s[i + 1] == top.right;
      if (!has) continue;
      for (std::size_t i = 0; i + 1 < s.size(); ++i)
        if (usable(s[i], s[i + 1])) delta[pair_key(s[i], s[i + 1])] -= f;
      std::vector<int> merged_symbols;
      merged_symbols.reserve(s.size());
      for (std::size_t i = 0; i < s.size(); ++i) {
        if (i + 1 < s.size() && s[i] == top.left && s[i + 1] == top.right) {
          merged_symbols.push_back(result);
          ++i;
        } else {
          merged_symbols.push_back(s[i]);
        }
      }
      s = std::move(merged_symbols);
      for (std::size_t i = 0; i + 1 < s.size(); ++i) {
        if (!usable(s[i], s[i + 1])) continue;
        const std::uint64_t k = pair_key(s[i], s[i + 1]);
        delta[k] += f;
        // Only pairs with the new symbol can be new to this word; the others already list it.
        if (s[i] == result || s[i + 1] == result) {
          auto& list = pair_words[k];
          if (list.empty() || list.back() != w) list.push_back(w);
        }
      }
    }
    for (const auto& [k, d] : delta) {
      if (d == 0) continue;
      std::int64_t& c = pair_count[k];
      c += d;
      if (c > 0) {
        heap.push({c, static_cast<int>(k >> 32), static_cast<int>(k & 0xFFFFFFFFu)});
      } else {
        pair_count.erase(k);
      }
    }
    pair_count.erase(key);
  }
  return tok;
}

// ---- loading / saving ----

BpeTokenizer BpeTokenizer::from_pieces(std::vector<std::string> vocab,
                                       std::vector<std::pair<std::string, std::string>> merges,
                                       const std::string& source, const std::string& merges_source) {
  require(vocab.size() >= static_cast<std::size_t>(kNumSpecialTokens),
          source + ": the vocabulary has " + std::to_string(vocab.size()) + " entries; it must start with " +
              "<pad> <unk> <s> </s>");
  for (int i = 0; i < kNumSpecialTokens; ++i)
    require(vocab[i] == kSpecialTokens[i], source + ": vocabulary entry " + std::to_string(i) + " is '" + vocab[i] +
                                               "' but must be '" + kSpecialTokens[i] + "'");
  BpeTokenizer tok;
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    const std::string& p = vocab[i];
    require(!p.empty(), source + ": vocabulary entry " + std::to_string(i) + " is empty");
    require(sanitize_utf8(p) == p, source + ": vocabulary entry " + std::to_string(i) + " is not valid UTF-8");
    require(p.find_first_of(" \t\r\n") == std::string::npos,
            source + ": vocabulary entry " + std::to_string(i) + " contains white space");
    const bool inserted = tok.piece_to_id_.emplace(p, static_cast<int>(i)).second;
    require(inserted, source + ": piece '" + p + "' appears twice in the vocabulary (ids " +
                          std::to_string(tok.piece_to_id_[p]) + " and " + std::to_string(i) + ")");
    if (i >= static_cast<std::size_t>(kNumSpecialTokens)) {
      const std::u32string cps = decode_utf8(p);
      if (cps.size() == 1) tok.char_to_id_[cps[0]] = static_cast<int>(i);
    }
  }
  std::vector<bool> produced(vocab.size(), false);  // by id: the result of some merge
  for (std::size_t r = 0; r < merges.size(); ++r) {
    const auto& [l, rt] = merges[r];
    const std::string where = source + ": merge " + std::to_string(r + 1) + " ('" + l + " " + rt + "')";
    auto li = tok.piece_to_id_.find(l), ri = tok.piece_to_id_.find(rt), mi = tok.piece_to_id_.find(l + rt);
    require(li != tok.piece_to_id_.end() && li->second >= kNumSpecialTokens,
            where + ": left part is not a vocabulary piece");
    require(ri != tok.piece_to_id_.end() && ri->second >= kNumSpecialTokens,
            where + ": right part is not a vocabulary piece");
    require(mi != tok.piece_to_id_.end(), where + ": the merged piece is not in the vocabulary");
    const bool inserted =
        tok.merge_rules_.emplace(pair_key(li->second, ri->second), MergeRule{static_cast<int>(r), mi->second}).second;
    require(inserted, where + ": the same merge appears twice");
    produced[static_cast<std::size_t>(mi->second)] = true;
  }
  // The merges must fit the vocabulary: encoding reaches a longer piece only through a merge, so a piece that no
  // merge produces means the merges file is empty, cut short or from another training run — and the model would
  // only ever see characters (a "translation" of gibberish, with no error).
  for (std::size_t i = kNumSpecialTokens; i < vocab.size(); ++i) {
    if (produced[i] || decode_utf8(vocab[i]).size() == 1) continue;
    throw Error((merges_source.empty() ? source : merges_source) + ": no merge produces vocabulary piece " +
                std::to_string(i) + " ('" + vocab[i] + "') of " + source + " (" + std::to_string(merges.size()) +
                " merges for " + std::to_string(vocab.size()) + " pieces): the merges do not fit the vocabulary " +
                "(an empty or truncated merges file, or one from another training run?)");
  }
  tok.vocab_ = std::move(vocab);
  tok.merges_ = std::move(merges);
  return tok;
}

BpeTokenizer BpeTokenizer::from_text(std::string_view vocab_text, std::string_view merges_text,
                                     const std::string& source, const std::string& merges_source) {
  std::vector<std::string> vocab;
  for (auto line : split_lines(vocab_text)) vocab.emplace_back(line);
  std::vector<std::pair<std::string, std::string>> merges;
  std::size_t n = 0;
  for (auto line : split_lines(merges_text)) {
    ++n;
    const std::size_t sp = line.find(' ');
    require(sp != std::string_view::npos && sp > 0 && sp + 1 < line.size() &&
                line.find(' ', sp + 1) == std::string_view::npos,
            source + ": merges line " + std::to_string(n) + " must be 'left right', got '" + std::string(line) + "'");
    merges.emplace_back(std::string(line.substr(0, sp)), std::string(line.substr(sp + 1)));
  }
  return from_pieces(std::move(vocab), std::move(merges), source, merges_source);
}

BpeTokenizer BpeTokenizer::load(const std::string& prefix) {
  const std::string vocab_text = read_file(prefix + ".vocab");
  const std::string merges_text = read_file(prefix + ".merges");
  return from_text(vocab_text, merges_text, "BPE model '" + prefix + "'", "'" + prefix + ".merges'");
}

BpeTokenizer BpeTokenizer::from_json(const nlohmann::json& j, const std::string& source) {
  require(j.is_object(), source + ": expected an object {\"type\": \"bpe\", \"vocab\": [...], \"merges\": [...]}");
  require(j.contains("type") && j["type"] == "bpe", source + ": \"type\" must be \"bpe\"");
  require(j.contains("vocab") && j["vocab"].is_array(), source + ": \"vocab\" must be an array of strings");
  require(j.contains("merges") && j["merges"].is_array(), source + ": \"merges\" must be an array of strings");
  std::vector<std::string> vocab;
  for (const auto& v : j["vocab"]) {
    require(v.is_string(), source + ": \"vocab\" entry " + std::to_string(vocab.size()) + " is not a string");
    vocab.push_back(v.get<std::string>());
  }
  std::string merges_text;
  for (const auto& m : j["merges"]) {
    require(m.is_string(), source + ": a \"merges\" entry is not a string");
    const std::string s = m.get<std::string>();
    require(s.find('\n') == std::string::npos, source + ": a \"merges\" entry contains a line break");
    merges_text += s;
    merges_text += '\n';
  }
  std::string vocab_text;
  for (const auto& v : vocab) {
    require(v.find('\n') == std::string::npos, source + ": a \"vocab\" entry contains a line break");
    vocab_text += v;
    vocab_text += '\n';
  }
  return from_text(vocab_text, merges_text, source);
}

nlohmann::json BpeTokenizer::to_json() const {
  nlohmann::json j;
  j["type"] = "bpe";
  j["vocab"] = vocab_;
  nlohmann::json merges = nlohmann::json::array();
  for (const auto& [l, r] : merges_) merges.push_back(l + " " + r);
  j["merges"] = std::move(merges);
  return j;
}

std::string BpeTokenizer::vocab_text() const {
  std::string s;
  for (const auto& p : vocab_) {
    s += p;
    s += '\n';
  }
  return s;
}

std::string BpeTokenizer::merges_text() const {
  std::string s;
  for (const auto& [l, r] : merges_) {
    s += l;
    s += ' ';
    s += r;
    s += '\n';
  }
  return s;
}

void BpeTokenizer::save(const std::string& prefix) const {
  for (const auto& [path, contents] :
       {std::pair{prefix + ".vocab", vocab_text()}, std::pair{prefix + ".merges", merges_text()}}) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    require(static_cast<bool>(out), "cannot open '" + path + "' for writing");
    out << contents;
    out.flush();
    require(static_cast<bool>(out), "error while writing '" + path + "'");
  }
}

// ---- encoding / decoding ----

void BpeTokenizer::encode_pretoken(std::u32string_view pretoken, std::vector<int>& out) const {
  const std::size_t n = pretoken.size();
  std::vector<int> sym(n), next(n), prev(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto it = char_to_id_.find(pretoken[i]);
    sym[i] = it == char_to_id_.end() ? kUnkId : it->second;
    next[i] = i + 1 < n ? static_cast<int>(i + 1) : -1;
    prev[i] = static_cast<int>(i) - 1;
  }
  // Lowest rank first, leftmost first among equal ranks; entries go stale when a neighbour changes and are
  // re-validated on pop (the rank of the pair now at `pos` must still be the entry's rank). O(n log n).
  using Entry = std::pair<int, int>;  // (rank, position of the left symbol)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  auto rule_at = [&](int pos) -> const MergeRule* {
    if (pos < 0 || next[pos] < 0) return nullptr;
    auto it = merge_rules_.find(pair_key(sym[pos], sym[next[pos]]));
    return it == merge_rules_.end() ? nullptr : &it->second;
  };
  auto push = [&](int pos) {
    if (const MergeRule* r = rule_at(pos)) heap.emplace(r->rank, pos);
  };
  for (std::size_t i = 0; i + 1 < n; ++i) push(static_cast<int>(i));
  std::vector<char> alive(n, 1);
  while (!heap.empty()) {
    const auto [rank, pos] = heap.top();
    heap.pop();
    if (!alive[pos]) continue;
    const MergeRule* r = rule_at(pos);
    if (r == nullptr || r->rank != rank) continue;
    const int right = next[pos];
    sym[pos] = r->result;
    alive[right] = 0;
    next[pos] = next[right];
    if (next[pos] >= 0) prev[next[pos]] = pos;
    push(prev[pos]);
    push(pos);
  }
  for (int i = n > 0 ? 0 : -1; i >= 0; i = next[i]) out.push_back(sym[i]);
}

std::vector<int> BpeTokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  for (const auto& p : pretokenize_cps(text)) encode_pretoken(p, ids);
  return ids;
}

std::vector<std::string> BpeTokenizer::encode_pieces(std::string_view text) const {
  std::vector<std::string> pieces;
  for (int id : encode(text)) pieces.push_back(vocab_[id]);
  return pieces;
}

const std::string& BpeTokenizer::piece(int id) const {
  require(id >= 0 && static_cast<std::size_t>(id) < vocab_.size(),
          "token id " + std::to_string(id) + " is outside the vocabulary (size " + std::to_string(vocab_.size()) +
              ")");
  return vocab_[id];
}

int BpeTokenizer::id_of(const std::string& p) const {
  auto it = piece_to_id_.find(p);
  return it == piece_to_id_.end() ? kUnkId : it->second;
}

std::string BpeTokenizer::decode(const std::vector<int>& ids) const {
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (int id : ids) pieces.push_back(piece(id));
  return decode_pieces(pieces);
}

std::string BpeTokenizer::decode_pieces(const std::vector<std::string>& pieces) const {
  std::string out;
  const std::string_view marker = kSpaceMarker;
  for (const auto& p : pieces) {
    if (p == kSpecialTokens[kPadId] || p == kSpecialTokens[kBosId] || p == kSpecialTokens[kEosId]) continue;
    std::size_t i = 0;
    while (i < p.size()) {
      if (p.compare(i, marker.size(), marker) == 0) {
        out += ' ';
        i += marker.size();
      } else {
        out += p[i++];
      }
    }
  }
  if (!out.empty() && out.front() == ' ') out.erase(0, 1);
  return sanitize_utf8(out);  // pieces given by a caller may hold anything
}

}  // namespace attnlens::text

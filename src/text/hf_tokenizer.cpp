#include "text/hf_tokenizer.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <queue>

#include "common.h"
#include "text/hf_charsmap.h"
#include "text/utf8.h"

namespace attnlens::text {

namespace hu = hf_unicode;
using hu::AlignedChar;
using hu::AlignedText;

namespace {

AlignedText from_utf8(std::string_view s, std::uint32_t begin, std::uint32_t end) {
  AlignedText t;
  for (char32_t c : decode_utf8(s)) t.push_back({c, begin, end});
  return t;
}

std::string to_utf8(const AlignedText& t, std::size_t from = 0, std::size_t to = std::string::npos) {
  std::string s;
  to = std::min(to, t.size());
  for (std::size_t i = from; i < to; ++i) append_utf8(s, t[i].cp);
  return s;
}

bool starts_with(const AlignedText& t, std::string_view s) {
  const std::u32string p = decode_utf8(s);
  if (p.empty() || p.size() > t.size()) return false;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (t[i].cp != p[i]) return false;
  return true;
}

void trim(AlignedText& t, bool left, bool right) {
  std::size_t a = 0, b = t.size();
  if (left) while (a < b && hu::is_js_space(t[a].cp)) ++a;
  if (right) while (b > a && hu::is_js_space(t[b - 1].cp)) --b;
  t = AlignedText(t.begin() + a, t.begin() + b);
}

// BERT's CJK ranges (the "Chinese characters" of BertNormalizer).
bool is_chinese(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

AlignedText strip_marks(const AlignedText& t) {
  AlignedText out;
  for (const AlignedChar& c : hu::nfd(t))
    if (hu::category(c.cp) != hu::Gc::Mn) out.push_back(c);
  return out;
}

AlignedText bert_normalize(const NormalizerStep& s, const AlignedText& in) {
  AlignedText t;
  for (const AlignedChar& c : in) {
    if (s.clean_text) {
      const hu::Gc g = hu::category(c.cp);
      const bool control = c.cp != '\t' && c.cp != '\n' && c.cp != '\r' &&
                           (g == hu::Gc::Cc || g == hu::Gc::Cf || g == hu::Gc::Co || g == hu::Gc::Cs);
      if (c.cp == 0 || c.cp == kReplacementChar || control) continue;
      if (hu::is_js_space(c.cp)) {
        t.push_back({U' ', c.begin, c.end});
        continue;
      }
    }
    if (s.handle_chinese_chars && is_chinese(c.cp)) {
      t.push_back({U' ', c.begin, c.end});
      t.push_back(c);
      t.push_back({U' ', c.begin, c.end});
    } else {
      t.push_back(c);
    }
  }
  if (s.lowercase) {
    t = hu::to_lower(t);
    if (s.strip_accents != 0) t = strip_marks(t);
  } else if (s.strip_accents == 1) {
    t = strip_marks(t);
  }
  return t;
}

AlignedText replace(const NormalizerStep& s, const AlignedText& t) {
  const std::u32string pat = decode_utf8(s.pattern);
  AlignedText out;
  for (std::size_t i = 0; i < t.size();) {
    std::size_t n = 0;  // characters matched at i
    if (s.min_repeat > 0) {
      while (i + n < t.size() && t[i + n].cp == pat[0]) ++n;
      if (n < static_cast<std::size_t>(s.min_repeat)) n = 0;
    } else if (!pat.empty() && i + pat.size() <= t.size()) {
      n = pat.size();
      for (std::size_t k = 0; k < pat.size(); ++k)
        if (t[i + k].cp != pat[k]) n = 0;
    }
    if (n == 0) {
      out.push_back(t[i++]);
      continue;
    }
    for (char32_t c : decode_utf8(s.content)) out.push_back({c, t[i].begin, t[i + n - 1].end});
    i += n;
  }
  return out;
}

// SentencePiece's normaliser over the charsmap: at each position the longest prefix in the trie is replaced by its
// string; without a match the character stays.
AlignedText precompiled(const NormalizerStep& s, const AlignedText& t) {
  const std::string bytes = to_utf8(t);
  std::vector<std::size_t> char_at(bytes.size() + 1, 0);  // byte → index of its character in t
  for (std::size_t i = 0, b = 0; i < t.size(); ++i) {
    std::string one;
    append_utf8(one, t[i].cp);
    for (std::size_t k = 0; k < one.size(); ++k) char_at[b++] = i;
  }
  const Charsmap map(s.charsmap);
  AlignedText out;
  for (std::size_t pos = 0; pos < bytes.size();) {
    const auto [len, repl] = map.longest_prefix(std::string_view(bytes).substr(pos));
    const std::size_t first = char_at[pos];
    if (len == 0) {
      out.push_back(t[first]);
      std::string one;
      append_utf8(one, t[first].cp);
      pos += one.size();
      continue;
    }
    const std::size_t last = char_at[pos + len - 1];
    for (char32_t c : decode_utf8(repl)) out.push_back({c, t[first].begin, t[last].end});
    pos += len;
  }
  return out;
}

// GPT-2's pattern 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ at position i: the
// length of the match (every position matches something).
std::size_t gpt2_match(const AlignedText& t, std::size_t i) {
  const std::size_t n = t.size();
  auto letter = [&](std::size_t k) { return k < n && hu::is_letter(hu::category(t[k].cp)); };
  auto number = [&](std::size_t k) { return k < n && hu::is_number(hu::category(t[k].cp)); };
  auto space = [&](std::size_t k) { return k < n && hu::is_js_space(t[k].cp); };
  auto other = [&](std::size_t k) { return k < n && !space(k) && !letter(k) && !number(k); };
  if (t[i].cp == '\'') {
    static const char* const kSuffixes[] = {"s", "t", "re", "ve", "m", "ll", "d"};
    for (const char* suf : kSuffixes) {
      const std::size_t len = std::strlen(suf);
      bool ok = i + len < n;
      for (std::size_t k = 0; ok && k < len; ++k) ok = t[i + 1 + k].cp == static_cast<char32_t>(suf[k]);
      if (ok) return 1 + len;
    }
  }
  const std::size_t j = t[i].cp == ' ' ? i + 1 : i;
  auto run = [&](auto&& pred) {
    std::size_t k = j;
    while (pred(k)) ++k;
    return k > j ? k - i : 0;
  };
  if (std::size_t m = run(letter)) return m;
  if (std::size_t m = run(number)) return m;
  if (std::size_t m = run(other)) return m;
  std::size_t k = i;
  while (space(k)) ++k;
  if (k > i) return (k < n && k - i > 1) ? k - i - 1 : k - i;  // \s+(?!\S), else \s+
  return 1;
}

void bytes_to_unicode(char32_t (&map)[256]) {
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    map[b] = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
  }
}

std::string cleanup(std::string s) {
  static const std::pair<const char*, const char*> kRules[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
      {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) {
    std::string out;
    const std::size_t flen = std::strlen(from);
    for (std::size_t i = 0; i < s.size();) {
      if (s.compare(i, flen, from) == 0) {
        out += to;
        i += flen;
      } else {
        out += s[i++];
      }
    }
    s = std::move(out);
  }
  return s;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s.compare(i, from.size(), from) == 0) {
      out += to;
      i += from.size();
    } else {
      out += s[i++];
    }
  }
  return out;
}

std::string rank_key(const std::string& a, const std::string& b) { return std::to_string(a.size()) + ':' + a + b; }

}  // namespace

HfTokenizer::HfTokenizer(TokenizerSpec spec) : spec_(std::move(spec)) {
  for (const auto& [token, id] : spec_.model.vocab) {
    vocab_.emplace(token, id);
    by_id_.emplace(id, token);
  }
  for (std::size_t i = 0; i < spec_.added_tokens.size(); ++i) {
    const HfAddedToken& a = spec_.added_tokens[i];
    require(!a.content.empty(), spec_.name + ": added_tokens[" + std::to_string(i) + "].content is empty");
    added_.emplace(a.content, static_cast<int>(i));
    vocab_[a.content] = a.id;
    by_id_[a.id] = a.content;
  }
  const ModelSpec& m = spec_.model;
  for (std::size_t r = 0; r < m.merges.size(); ++r)
    ranks_.emplace(rank_key(m.merges[r].first, m.merges[r].second), static_cast<int>(r));
  if (m.kind == ModelSpec::Kind::kUnigram) {
    require(m.scores.size() == m.vocab.size(), spec_.name + ": model.vocab: every piece needs a score");
    float min_score = std::numeric_limits<float>::max();
    for (std::size_t i = 0; i < m.vocab.size(); ++i) {
      const auto& [piece, id] = m.vocab[i];
      if (id == m.unk_id || piece.empty() || (i < m.control.size() && m.control[i])) continue;
      unigram_.emplace(piece, static_cast<int>(i));
      max_piece_bytes_ = std::max(max_piece_bytes_, piece.size());
      min_score = std::min(min_score, m.scores[i]);
    }
    unk_score_ = (unigram_.empty() ? 0.0f : min_score) - 10.0f;
    require(m.unk_id >= 0 && by_id_.count(m.unk_id), spec_.name + ": model.unk_id is not an id of model.vocab");
    unk_id_ = m.unk_id;
  } else if (!m.unk_token.empty()) {
    const auto it = vocab_.find(m.unk_token);
    require(it != vocab_.end(), spec_.name + ": model.unk_token \"" + m.unk_token + "\" is not in model.vocab");
    unk_id_ = it->second;
  }
  if (!spec_.piece_ids.empty()) {
    by_id_.clear();
    for (const auto& [piece, id] : spec_.piece_ids) {
      pieces_.emplace(piece, id);
      by_id_.emplace(id, piece);
    }
  }
}

std::vector<hu::AlignedText> HfTokenizer::split_added(const Text& text, bool normalized,
                                                      std::vector<int>* added) const {
  std::vector<Text> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size();) {
    int best = -1;
    std::size_t best_len = 0;
    for (const auto& [content, index] : added_) {
      if (spec_.added_tokens[index].normalized != normalized) continue;
      const std::u32string c = decode_utf8(content);
      if (c.size() <= best_len || i + c.size() > text.size()) continue;
      bool eq = true;
      for (std::size_t k = 0; eq && k < c.size(); ++k) eq = text[i + k].cp == c[k];
      if (eq) best = index, best_len = c.size();
    }
    if (best < 0) {
      ++i;
      continue;
    }
    if (i > start) out.emplace_back(text.begin() + start, text.begin() + i), added->push_back(-1);
    out.emplace_back(text.begin() + i, text.begin() + i + best_len);
    added->push_back(best);
    i += best_len;
    start = i;
  }
  if (start < text.size()) out.emplace_back(text.begin() + start, text.end()), added->push_back(-1);
  for (std::size_t k = 0; k < out.size(); ++k) {
    if ((*added)[k] < 0) continue;
    const HfAddedToken& a = spec_.added_tokens[(*added)[k]];
    if (a.lstrip && k > 0 && (*added)[k - 1] < 0) trim(out[k - 1], false, true);
    if (a.rstrip && k + 1 < out.size() && (*added)[k + 1] < 0) trim(out[k + 1], true, false);
  }
  return out;
}

hu::AlignedText HfTokenizer::normalize(Text t) const {
  for (const NormalizerStep& s : spec_.normalizers) {
    switch (s.kind) {
      case NormalizerStep::Kind::kBert: t = bert_normalize(s, t); break;
      case NormalizerStep::Kind::kLowercase: t = hu::to_lower(t); break;
      case NormalizerStep::Kind::kStripAccents: {
        Text out;
        for (const AlignedChar& c : t)
          if (hu::category(c.cp) != hu::Gc::Mn) out.push_back(c);
        t = std::move(out);
        break;
      }
      case NormalizerStep::Kind::kNfd: t = hu::nfd(t); break;
      case NormalizerStep::Kind::kStrip: trim(t, s.left, s.right); break;
      case NormalizerStep::Kind::kReplace: t = replace(s, t); break;
      case NormalizerStep::Kind::kPrepend:
        if (!t.empty()) {
          Text p = from_utf8(s.content, t.front().begin, t.front().begin);
          t.insert(t.begin(), p.begin(), p.end());
        }
        break;
      case NormalizerStep::Kind::kPrecompiled: t = precompiled(s, t); break;
    }
  }
  return t;
}

std::vector<hu::AlignedText> HfTokenizer::pre_tokenize(const Text& text, bool first_section) const {
  std::vector<Text> words{text};
  for (const PreTokenizerStep& s : spec_.pre_tokenizers) {
    std::vector<Text> next;
    for (Text& w : words) {
      switch (s.kind) {
        case PreTokenizerStep::Kind::kBert: {
          trim(w, true, true);
          for (std::size_t i = 0; i < w.size();) {
            auto punct = [&](char32_t c) {
              return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
                     (c >= 0x7B && c <= 0x7E) || hu::is_punctuation(hu::category(c));
            };
            if (punct(w[i].cp)) {
              next.emplace_back(w.begin() + i, w.begin() + i + 1);
              ++i;
            } else if (hu::is_js_space(w[i].cp)) {
              ++i;
            } else {
              std::size_t j = i;
              while (j < w.size() && !punct(w[j].cp) && !hu::is_js_space(w[j].cp)) ++j;
              next.emplace_back(w.begin() + i, w.begin() + j);
              i = j;
            }
          }
          break;
        }
        case PreTokenizerStep::Kind::kByteLevel: {
          if (s.add_prefix_space && (w.empty() || w.front().cp != ' ')) {
            const std::uint32_t at = w.empty() ? 0 : w.front().begin;
            w.insert(w.begin(), AlignedChar{U' ', at, at});
          }
          char32_t map[256];
          bytes_to_unicode(map);
          for (std::size_t i = 0; i < w.size();) {
            const std::size_t len = s.use_regex ? gpt2_match(w, i) : w.size() - i;
            Text piece;
            for (std::size_t k = i; k < i + len; ++k) {
              std::string b;
              append_utf8(b, w[k].cp);
              for (unsigned char byte : b) piece.push_back({map[byte], w[k].begin, w[k].end});
            }
            next.push_back(std::move(piece));
            i += len;
          }
          break;
        }
        case PreTokenizerStep::Kind::kMetaspace: {
          const std::u32string rep = decode_utf8(s.replacement);
          Text out;
          for (const AlignedChar& c : w) {
            if (c.cp == ' ')
              for (char32_t r : rep) out.push_back({r, c.begin, c.end});
            else
              out.push_back(c);
          }
          const bool prepend = s.prepend == PreTokenizerStep::Prepend::kAlways ||
                               (s.prepend == PreTokenizerStep::Prepend::kFirst && first_section);
          if (prepend && !starts_with(out, s.replacement)) {
            const std::uint32_t at = out.empty() ? 0 : out.front().begin;
            Text p = from_utf8(s.replacement, at, at);
            out.insert(out.begin(), p.begin(), p.end());
          }
          next.push_back(std::move(out));
          break;
        }
        case PreTokenizerStep::Kind::kWhitespaceSplit:
          for (std::size_t i = 0; i < w.size();) {
            if (hu::is_js_space(w[i].cp)) { ++i; continue; }
            std::size_t j = i;
            while (j < w.size() && !hu::is_js_space(w[j].cp)) ++j;
            next.emplace_back(w.begin() + i, w.begin() + j);
            i = j;
          }
          break;
      }
    }
    words = std::move(next);
  }
  return words;
}

void HfTokenizer::wordpiece(const Text& w, std::vector<Piece>& out) const {
  const ModelSpec& m = spec_.model;
  if (w.empty()) return;
  const Piece whole{m.unk_token, w.front().begin, w.back().end};
  if (w.size() > m.max_input_chars_per_word) {
    out.push_back(whole);
    return;
  }
  std::vector<Piece> subs;
  for (std::size_t start = 0; start < w.size();) {
    std::size_t end = w.size();
    std::string found;
    for (; end > start; --end) {
      std::string s = (start > 0 ? m.continuing_subword_prefix : std::string()) + to_utf8(w, start, end);
      if (vocab_.count(s)) {
        found = std::move(s);
        break;
      }
    }
    if (end == start) {
      out.push_back(whole);
      return;
    }
    subs.push_back({found, w[start].begin, w[end - 1].end});
    start = end;
  }
  out.insert(out.end(), subs.begin(), subs.end());
}

void HfTokenizer::bpe(const Text& w, std::vector<Piece>& out) const {
  const ModelSpec& m = spec_.model;
  if (w.empty()) return;
  if (m.ignore_merges) {
    std::string all = to_utf8(w);
    if (vocab_.count(all)) {
      out.push_back({all, w.front().begin, w.back().end});
      return;
    }
  }
  struct Sym {
    std::string text;
    std::uint32_t begin, end;
    int prev, next, version = 0;
    bool alive = true;
  };
  std::vector<Sym> syms;
  for (std::size_t i = 0; i < w.size(); ++i) {
    std::string s;
    append_utf8(s, w[i].cp);
    syms.push_back({s, w[i].begin, w[i].end, static_cast<int>(i) - 1, i + 1 < w.size() ? static_cast<int>(i) + 1 : -1});
  }
  if (!m.end_of_word_suffix.empty()) syms.back().text += m.end_of_word_suffix;
  struct Cand {
    int rank, left, right, vl, vr;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> queue;
  auto consider = [&](int l) {
    if (l < 0 || syms[l].next < 0) return;
    const int r = syms[l].next;
    const auto it = ranks_.find(rank_key(syms[l].text, syms[r].text));
    if (it != ranks_.end()) queue.push({it->second, l, r, syms[l].version, syms[r].version});
  };
  for (int i = 0; i + 1 < static_cast<int>(syms.size()); ++i) consider(i);
  while (!queue.empty()) {
    const Cand c = queue.top();
    queue.pop();
    Sym& l = syms[c.left];
    Sym& r = syms[c.right];
    if (!l.alive || !r.alive || l.next != c.right || l.version != c.vl || r.version != c.vr) continue;
    l.text += r.text;
    l.end = r.end;
    l.next = r.next;
    ++l.version;
    r.alive = false;
    if (r.next >= 0) syms[r.next].prev = c.left;
    consider(l.prev);
    consider(c.left);
  }
  bool prev_unk = false;
  for (int i = 0; i >= 0; i = syms[i].next) {
    const Sym& s = syms[i];
    if (vocab_.count(s.text)) {
      out.push_back({s.text, s.begin, s.end});
      prev_unk = false;
      continue;
    }
    if (m.byte_fallback) {
      std::vector<Piece> bytes;
      for (unsigned char b : s.text) {
        static const char* const kHex = "0123456789ABCDEF";
        bytes.push_back({std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">", s.begin, s.end});
      }
      if (std::all_of(bytes.begin(), bytes.end(), [&](const Piece& p) { return vocab_.count(p.token) > 0; })) {
        out.insert(out.end(), bytes.begin(), bytes.end());
        prev_unk = false;
        continue;
      }
    }
    if (m.unk_token.empty()) continue;
    if (m.fuse_unk && prev_unk) {
      out.back().end = s.end;
      continue;
    }
    out.push_back({m.unk_token, s.begin, s.end});
    prev_unk = true;
  }
}

void HfTokenizer::unigram(const Text& w, std::vector<Piece>& out) const {
  const ModelSpec& m = spec_.model;
  const std::string bytes = to_utf8(w);
  const std::size_t n = bytes.size();
  if (n == 0) return;
  std::vector<std::size_t> char_of(n + 1, w.size());  // byte → character index (at character starts)
  for (std::size_t i = 0, b = 0; i < w.size(); ++i) {
    char_of[b] = i;
    std::string one;
    append_utf8(one, w[i].cp);
    b += one.size();
  }
  struct Node {
    long start = -1;
    int piece = -2;  // index into vocab, -1 unknown
    float score = 0;
  };
  std::vector<Node> best(n + 1);
  best[0].start = 0;
  for (std::size_t pos = 0; pos < n;) {
    std::string one;
    append_utf8(one, w[char_of[pos]].cp);
    const std::size_t mblen = one.size();
    if (best[pos].start < 0) {  // unreachable (cannot happen: every character has a way through)
      pos += mblen;
      continue;
    }
    const float here = best[pos].score;
    bool single = false;
    for (std::size_t len = 1; len <= max_piece_bytes_ && pos + len <= n; ++len) {
      const auto it = unigram_.find(bytes.substr(pos, len));
      if (it == unigram_.end()) continue;
      if (len == mblen) single = true;
      const float cand = m.scores[it->second] + here;
      Node& target = best[pos + len];
      if (target.start < 0 || cand > target.score) target = {static_cast<long>(pos), it->second, cand};
    }
    if (!single) {
      const float cand = unk_score_ + here;
      Node& target = best[pos + mblen];
      if (target.start < 0 || cand > target.score) target = {static_cast<long>(pos), -1, cand};
    }
    pos += mblen;
  }
  struct Span {
    std::size_t start, end;
    int piece;
  };
  std::vector<Span> rev;  // the best path, last piece first; consecutive unknown characters fuse
  for (std::size_t end = n; end > 0;) {
    const Node& node = best[end];
    const std::size_t start = static_cast<std::size_t>(node.start);
    if (node.piece < 0 && !rev.empty() && rev.back().piece < 0)
      rev.back().start = start;
    else
      rev.push_back({start, end, node.piece});
    end = start;
  }
  for (auto it = rev.rbegin(); it != rev.rend(); ++it) {
    // The unknown token is the model's unknown piece; for MarianMT, SentencePiece's piece is the covered text
    // itself, which MarianTokenizer then looks up in vocab.json.
    std::string token = it->piece >= 0                ? m.vocab[it->piece].first
                        : !spec_.piece_ids.empty()    ? bytes.substr(it->start, it->end - it->start)
                                                      : id_to_token(unk_id_);
    out.push_back({std::move(token), w[char_of[it->start]].begin, w[char_of[it->end] - 1].end});
  }
}

void HfTokenizer::run_model(const Text& word, std::vector<Piece>& out) const {
  switch (spec_.model.kind) {
    case ModelSpec::Kind::kWordPiece: wordpiece(word, out); break;
    case ModelSpec::Kind::kBpe: bpe(word, out); break;
    case ModelSpec::Kind::kUnigram: unigram(word, out); break;
  }
}

int HfTokenizer::piece_id(const std::string& token) const {
  if (!spec_.piece_ids.empty()) {
    const auto it = pieces_.find(token);
    return it != pieces_.end() ? it->second : spec_.piece_unk_id;
  }
  const auto it = vocab_.find(token);
  if (it != vocab_.end()) return it->second;
  return unk_id_;
}

Encoding HfTokenizer::encode(std::string_view text, bool add_special_tokens) const {
  require(text.size() <= kMaxInputBytes, spec_.name + ": the text has " + std::to_string(text.size()) +
                                             " bytes; the tokenizer takes at most " + std::to_string(kMaxInputBytes));
  std::vector<std::size_t> offs;
  const std::u32string cps = decode_utf8(text, &offs);
  Text t(cps.size());
  for (std::size_t i = 0; i < cps.size(); ++i)
    t[i] = {cps[i], static_cast<std::uint32_t>(offs[i]), static_cast<std::uint32_t>(offs[i + 1])};
  std::vector<Piece> pieces;
  std::vector<bool> is_added;
  auto push_added = [&](int index, const Text& s) {
    pieces.push_back({spec_.added_tokens[index].content, s.front().begin, s.back().end});
    is_added.push_back(true);
  };
  std::vector<int> kinds;
  const std::vector<Text> sections = split_added(t, false, &kinds);
  for (std::size_t k = 0; k < sections.size(); ++k) {
    if (sections[k].empty()) continue;
    if (kinds[k] >= 0) {
      push_added(kinds[k], sections[k]);
      continue;
    }
    const Text norm = normalize(sections[k]);
    if (norm.empty()) continue;
    std::vector<int> sub_kinds;
    const std::vector<Text> subs = split_added(norm, true, &sub_kinds);
    for (std::size_t j = 0; j < subs.size(); ++j) {
      if (subs[j].empty()) continue;
      if (sub_kinds[j] >= 0) {
        push_added(sub_kinds[j], subs[j]);
        continue;
      }
      for (const Text& word : pre_tokenize(subs[j], k == 0)) run_model(word, pieces);
      is_added.resize(pieces.size(), false);
    }
  }
  Encoding e;
  auto add_special = [&](const std::vector<int>& ids) {
    for (int id : ids) {
      e.ids.push_back(id);
      e.tokens.push_back(id_to_token(id));
      e.offsets.emplace_back(0, 0);
    }
  };
  if (add_special_tokens) add_special(spec_.template_before);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const Piece& p = pieces[i];
    const int id = is_added[i] && spec_.piece_ids.empty() ? vocab_.at(p.token) : piece_id(p.token);
    e.ids.push_back(id);
    e.tokens.push_back(p.token);
    e.offsets.emplace_back(p.begin, p.end);
  }
  if (add_special_tokens) add_special(spec_.template_after);
  return e;
}

std::string HfTokenizer::decode(const std::vector<int>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  for (int id : ids) {
    const auto it = by_id_.find(id);
    std::string tok = it != by_id_.end() ? it->second : spec_.model.unk_token;
    if (skip_special_tokens) {
      const auto a = added_.find(tok);
      if (a != added_.end() && spec_.added_tokens[a->second].special) continue;
    }
    tokens.push_back(std::move(tok));
  }
  std::string text;
  if (spec_.decoders.empty()) {
    for (std::size_t i = 0; i < tokens.size(); ++i) text += (i ? " " : "") + tokens[i];
  }
  for (const DecoderStep& d : spec_.decoders) {
    std::vector<std::string> next;
    switch (d.kind) {
      case DecoderStep::Kind::kWordPiece:
        for (std::size_t i = 0; i < tokens.size(); ++i) {
          std::string tok = tokens[i];
          if (i != 0) {
            if (!d.prefix.empty() && tok.compare(0, d.prefix.size(), d.prefix) == 0)
              tok.erase(0, d.prefix.size());
            else
              tok = " " + tok;
          }
          next.push_back(d.cleanup ? cleanup(tok) : tok);
        }
        break;
      case DecoderStep::Kind::kByteLevel: {
        char32_t map[256];
        bytes_to_unicode(map);
        std::unordered_map<char32_t, unsigned char> back;
        for (int b = 0; b < 256; ++b) back[map[b]] = static_cast<unsigned char>(b);
        std::string bytes;
        auto flush = [&] {
          if (!bytes.empty()) next.push_back(sanitize_utf8(bytes));
          bytes.clear();
        };
        for (const std::string& tok : tokens) {
          if (added_.count(tok)) {
            flush();
            next.push_back(tok);
            continue;
          }
          for (char32_t c : decode_utf8(tok)) {
            const auto it = back.find(c);
            bytes += static_cast<char>(it != back.end() ? it->second : 0);
          }
        }
        flush();
        break;
      }
      case DecoderStep::Kind::kMetaspace:
        for (std::size_t i = 0; i < tokens.size(); ++i) {
          std::string tok = replace_all(tokens[i], d.replacement, " ");
          if (i == 0 && !tok.empty() && tok[0] == ' ') tok.erase(0, 1);
          next.push_back(tok);
        }
        break;
    }
    tokens = std::move(next);
    text.clear();
    for (const std::string& tok : tokens) text += tok;
  }
  return spec_.clean_up_tokenization_spaces ? cleanup(text) : text;
}

int HfTokenizer::token_to_id(std::string_view token) const {
  const std::string t(token);
  if (!spec_.piece_ids.empty()) {
    const auto it = pieces_.find(t);
    return it != pieces_.end() ? it->second : -1;
  }
  const auto it = vocab_.find(t);
  return it != vocab_.end() ? it->second : -1;
}

std::string HfTokenizer::id_to_token(int id) const {
  const auto it = by_id_.find(id);
  return it != by_id_.end() ? it->second : std::string();
}

std::size_t HfTokenizer::vocab_size() const { return by_id_.size(); }

}  // namespace attnlens::text

// Numbers copied by alignment (see number_copy.h).
#include "analysis/number_copy.h"

#include <algorithm>
#include <tuple>

#include "common.h"

namespace attnlens::analysis {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_joiner(char c) { return c == '.' || c == ',' || c == ':'; }

// The digit groups alone: "2:30" and "2.30" are the same groups; "230" ("2,50" → "250") and "375,5" are not.
std::string digit_groups(std::string_view number) {
  std::string out;
  for (char c : number) out += is_digit(c) ? c : '|';
  return out;
}

// "37,5" → "37" "," "5": digit runs and joiners, as the word rule (text/word_spans.h) splits a number.
std::vector<std::string> number_parts(std::string_view number) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < number.size();) {
    std::size_t j = i + 1;
    if (is_digit(number[i]))
      while (j < number.size() && is_digit(number[j])) ++j;
    parts.emplace_back(number.substr(i, j - i));
    i = j;
  }
  return parts;
}

// The number's words cover exactly its bytes, and each word is one of its parts ("375 , 5"; not "3rd").
bool whole_words(const NumberSpan& n, const std::vector<text::WordSpan>& words) {
  if (n.first_word < 0) return false;
  const auto parts = number_parts(n.text);
  const std::size_t count = static_cast<std::size_t>(n.end_word - n.first_word);
  if (count != 1 && count != parts.size()) return false;
  std::size_t at = n.byte_begin;
  for (std::size_t k = 0; k < count; ++k) {
    const auto& w = words[static_cast<std::size_t>(n.first_word) + k];
    const std::size_t len = count == 1 ? n.text.size() : parts[k].size();
    if (w.byte_begin != at || w.byte_end != at + len) return false;
    at += len;
  }
  return at == n.byte_end;
}

}  // namespace

std::vector<NumberSpan> find_numbers(std::string_view text, const std::vector<text::WordSpan>& words) {
  std::vector<NumberSpan> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!is_digit(text[i])) {
      ++i;
      continue;
    }
    const std::size_t begin = i;
    while (i < text.size()) {
      if (is_digit(text[i])) {
        ++i;
      } else if (is_joiner(text[i]) && i + 1 < text.size() && is_digit(text[i + 1])) {
        i += 2;
      } else {
        break;
      }
    }
    NumberSpan n{std::string(text.substr(begin, i - begin)), begin, i, -1, -1};
    for (std::size_t w = 0; w < words.size(); ++w) {
      if (words[w].byte_end <= begin || words[w].byte_begin >= i) continue;
      if (n.first_word < 0) n.first_word = static_cast<int>(w);
      n.end_word = static_cast<int>(w) + 1;
    }
    out.push_back(std::move(n));
  }
  return out;
}

std::string english_number(std::string_view german) {
  // Split into digit groups and the joiners between them.
  std::vector<std::string_view> groups;
  std::string joiners;
  std::size_t start = 0;
  for (std::size_t i = 0; i < german.size(); ++i)
    if (is_joiner(german[i])) {
      groups.push_back(german.substr(start, i - start));
      joiners += german[i];
      start = i + 1;
    }
  groups.push_back(german.substr(start));
  if (joiners.empty()) return std::string(german);
  // Thousands grouped by dots, optionally with a decimal comma at the end: 1.000, 250.000,50.
  const std::size_t comma = joiners.find(',');
  const bool one_comma_last = comma == std::string::npos || (comma == joiners.size() - 1 && joiners.find(',', comma + 1) == std::string::npos);
  const std::size_t dots = comma == std::string::npos ? joiners.size() : comma;
  const bool only_dots_before = joiners.substr(0, dots).find_first_not_of('.') == std::string::npos;
  bool grouped = groups[0].size() <= 3 && groups[0].size() >= 1;
  for (std::size_t g = 1; g <= dots; ++g) grouped = grouped && groups[g].size() == 3;
  if (one_comma_last && only_dots_before && (dots == 0 || grouped)) {
    std::string out(groups[0]);
    for (std::size_t g = 1; g <= dots; ++g) out += "," + std::string(groups[g]);
    if (comma != std::string::npos) out += "." + std::string(groups.back());
    return out;
  }
  return std::string(german);  // times, dates and anything else: as written
}

std::vector<NumberCopy> plan_number_copies(std::string_view source_text, const std::vector<text::WordSpan>& source_words,
                                           std::string_view target_text, const std::vector<text::WordSpan>& target_words,
                                           const std::vector<float>& alignment_map) {
  const std::size_t ns = source_words.size(), nt = target_words.size();
  require(alignment_map.size() == nt * ns, "number copy: the alignment map does not match the words");
  const auto src = find_numbers(source_text, source_words);
  const auto tgt = find_numbers(target_text, target_words);
  if (src.empty() || tgt.empty()) return {};
  std::vector<bool> src_used(src.size(), false), tgt_done(tgt.size(), false);
  // Target numbers with a source number's digit groups keep it and use it up: the model wrote that number, perhaps
  // in another notation ("2:30" for "2.30 Uhr", "37.5" for "37,5").
  for (std::size_t t = 0; t < tgt.size(); ++t)
    for (std::size_t s = 0; s < src.size(); ++s)
      if (!src_used[s] && digit_groups(tgt[t].text) == digit_groups(src[s].text)) {
        src_used[s] = true;
        tgt_done[t] = true;
        break;
      }
  // The rest: target numbers that are whole words, matched greedily by alignment weight.
  std::vector<std::tuple<float, std::size_t, std::size_t>> candidates;  // (weight, target number, source number)
  for (std::size_t t = 0; t < tgt.size(); ++t) {
    if (tgt_done[t] || !whole_words(tgt[t], target_words)) continue;  // e.g. "3rd"
    const std::size_t n_words = static_cast<std::size_t>(tgt[t].end_word - tgt[t].first_word);
    for (std::size_t s = 0; s < src.size(); ++s) {
      if (src_used[s] || src[s].first_word < 0) continue;
      // Several target words ("375 , 5") are replaced word for word, so the notation must have as many parts.
      if (n_words > 1 && number_parts(english_number(src[s].text)).size() != n_words) continue;
      float w = 0;  // mean over the target number's words of their weight on the source number's words
      for (int r = tgt[t].first_word; r < tgt[t].end_word; ++r)
        for (int c = src[s].first_word; c < src[s].end_word; ++c)
          w += alignment_map[static_cast<std::size_t>(r) * ns + static_cast<std::size_t>(c)];
      w /= static_cast<float>(n_words);
      if (w >= kMinNumberWeight) candidates.emplace_back(w, t, s);
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
  std::vector<NumberCopy> out;
  for (const auto& [w, t, s] : candidates) {
    if (tgt_done[t] || src_used[s]) continue;
    tgt_done[t] = true;
    src_used[s] = true;
    out.push_back({static_cast<int>(s), tgt[t].first_word, tgt[t].text, english_number(src[s].text), w});
  }
  std::sort(out.begin(), out.end(), [](const NumberCopy& a, const NumberCopy& b) { return a.target_word < b.target_word; });
  return out;
}

void apply_number_copies(const std::vector<NumberCopy>& copies, std::string& target_text,
                         std::vector<text::WordSpan>& target_words) {
  // Word k becomes `text`; the words after it shift.
  auto replace_word = [&](std::size_t k, const std::string& text) {
    auto& w = target_words[k];
    require(w.byte_end <= target_text.size() && w.byte_begin <= w.byte_end, "number copy: word outside the text");
    target_text.replace(w.byte_begin, w.byte_end - w.byte_begin, text);
    const std::ptrdiff_t delta = static_cast<std::ptrdiff_t>(text.size()) -
                                 static_cast<std::ptrdiff_t>(w.byte_end - w.byte_begin);
    w.text = text;
    w.byte_end = w.byte_begin + text.size();
    for (std::size_t j = k + 1; j < target_words.size(); ++j) {
      target_words[j].byte_begin = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(target_words[j].byte_begin) + delta);
      target_words[j].byte_end = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(target_words[j].byte_end) + delta);
    }
  };
  // From the last copy back, so earlier offsets stay valid while splicing.
  for (auto it = copies.rbegin(); it != copies.rend(); ++it) {
    const std::size_t first = static_cast<std::size_t>(it->target_word);
    require(it->target_word >= 0 && first < target_words.size(), "number copy: target word out of range");
    // The model's number is one word ("250") or one word per part ("375" "," "5"), as plan_number_copies found it.
    if (target_words[first].text == it->model_text) {
      replace_word(first, it->text);
      continue;
    }
    const auto model_parts = number_parts(it->model_text);
    const auto parts = number_parts(it->text);
    require(parts.size() == model_parts.size() && first + parts.size() <= target_words.size(),
            "number copy: the number's words do not match");
    for (std::size_t k = parts.size(); k-- > 0;) {
      require(target_words[first + k].text == model_parts[k], "number copy: the number's words do not match");
      replace_word(first + k, parts[k]);
    }
  }
}

}  // namespace attnlens::analysis

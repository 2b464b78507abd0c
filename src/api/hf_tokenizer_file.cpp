#include "api/hf_tokenizer_file.h"

#include <cmath>
#include <limits>

#include "common.h"
#include "io/config.h"
#include "text/hf_charsmap.h"
#include "text/utf8.h"

namespace attnlens::api {

using io::ConfigObject;
using nlohmann::json;
using text::DecoderStep;
using text::NormalizerStep;
using text::PreTokenizerStep;
using text::TokenizerSpec;

namespace {

constexpr std::int64_t kMaxId = std::numeric_limits<int>::max();

std::string base64_decode(const ConfigObject& o, const std::string& key) {
  const std::string in = o.string(key);
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char ch : in) {
    int v;
    if (ch >= 'A' && ch <= 'Z') v = ch - 'A';
    else if (ch >= 'a' && ch <= 'z') v = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9') v = ch - '0' + 52;
    else if (ch == '+') v = 62;
    else if (ch == '/') v = 63;
    else if (ch == '=') break;
    else o.fail(key, "is not base64");
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

[[noreturn]] void unsupported(const ConfigObject& o, const std::string& type, const char* supported) {
  o.fail("type", type + " is not supported (supported: " + supported + ")");
}

void parse_normalizer(const ConfigObject& o, std::vector<NormalizerStep>& out) {
  const std::string type = o.string("type");
  NormalizerStep s;
  if (type == "Sequence") {
    const json& list = o.array("normalizers");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string key = "normalizers." + std::to_string(i);
      if (!list[i].is_object()) o.fail(key, "expected an object");
      parse_normalizer(ConfigObject(list[i], o.file(), o.key_path(key)), out);
    }
    return;
  } else if (type == "BertNormalizer") {
    s.kind = NormalizerStep::Kind::kBert;
    s.clean_text = o.has("clean_text") ? o.boolean("clean_text") : true;
    s.handle_chinese_chars = o.has("handle_chinese_chars") ? o.boolean("handle_chinese_chars") : true;
    s.lowercase = o.has("lowercase") ? o.boolean("lowercase") : true;
    s.strip_accents = !o.has("strip_accents") || o.at("strip_accents").is_null() ? -1 : o.boolean("strip_accents");
  } else if (type == "Lowercase") {
    s.kind = NormalizerStep::Kind::kLowercase;
  } else if (type == "StripAccents") {
    s.kind = NormalizerStep::Kind::kStripAccents;
  } else if (type == "NFD") {
    s.kind = NormalizerStep::Kind::kNfd;
  } else if (type == "Strip") {
    s.kind = NormalizerStep::Kind::kStrip;
    s.left = o.has("strip_left") && o.boolean("strip_left");
    s.right = o.has("strip_right") && o.boolean("strip_right");
  } else if (type == "Prepend") {
    s.kind = NormalizerStep::Kind::kPrepend;
    s.content = o.string("prepend");
  } else if (type == "Replace") {
    s.kind = NormalizerStep::Kind::kReplace;
    s.content = o.string("content");
    const ConfigObject p = o.object("pattern");
    if (p.has("String")) {
      s.pattern = p.string("String");
      if (s.pattern.empty()) p.fail("String", "is empty");
    } else {
      const std::string re = p.string("Regex");
      const std::u32string cps = text::decode_utf8(re);
      std::string first;
      if (!cps.empty()) text::append_utf8(first, cps[0]);
      const std::string rest = re.substr(first.size());
      const bool special = first.size() == 1 && std::string("\\^$.|?*+()[]{}").find(first[0]) != std::string::npos;
      int n = 0;
      if (rest == "+") n = 1;
      else if (rest.size() > 3 && rest.front() == '{' && rest.substr(rest.size() - 2) == ",}" &&
               rest.find_first_not_of("0123456789", 1) == rest.size() - 2 && rest.size() < 8)
        n = std::stoi(rest.substr(1, rest.size() - 3));
      if (cps.empty() || special || n < 1)
        p.fail("Regex", "\"" + re + "\" is not supported (supported: one literal character followed by + or {n,})");
      s.pattern = first;
      s.min_repeat = n;
    }
  } else if (type == "Precompiled") {
    s.kind = NormalizerStep::Kind::kPrecompiled;
    if (o.at("precompiled_charsmap").is_null()) return;  // no charsmap: nothing to do
    s.charsmap = base64_decode(o, "precompiled_charsmap");
    try {
      text::Charsmap check(s.charsmap);
    } catch (const Error& e) {
      o.fail("precompiled_charsmap", e.what());
    }
  } else {
    unsupported(o, type, "BertNormalizer, Lowercase, StripAccents, NFD, Strip, Replace, Prepend, Precompiled, Sequence");
  }
  out.push_back(std::move(s));
}

void parse_pre_tokenizer(const ConfigObject& o, std::vector<PreTokenizerStep>& out) {
  const std::string type = o.string("type");
  PreTokenizerStep s;
  if (type == "Sequence") {
    const json& list = o.array("pretokenizers");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string key = "pretokenizers." + std::to_string(i);
      if (!list[i].is_object()) o.fail(key, "expected an object");
      parse_pre_tokenizer(ConfigObject(list[i], o.file(), o.key_path(key)), out);
    }
    return;
  } else if (type == "BertPreTokenizer") {
    s.kind = PreTokenizerStep::Kind::kBert;
  } else if (type == "ByteLevel") {
    s.kind = PreTokenizerStep::Kind::kByteLevel;
    s.add_prefix_space = o.has("add_prefix_space") && o.boolean("add_prefix_space");
    s.use_regex = !o.has("use_regex") || o.boolean("use_regex");
  } else if (type == "Metaspace") {
    s.kind = PreTokenizerStep::Kind::kMetaspace;
    s.replacement = o.string_or("replacement", s.replacement);
    if (text::decode_utf8(s.replacement).size() != 1) o.fail("replacement", "must be one character");
    if (o.has("prepend_scheme")) {
      const std::string p = o.string("prepend_scheme");
      if (p == "always") s.prepend = PreTokenizerStep::Prepend::kAlways;
      else if (p == "first") s.prepend = PreTokenizerStep::Prepend::kFirst;
      else if (p == "never") s.prepend = PreTokenizerStep::Prepend::kNever;
      else o.fail("prepend_scheme", "\"" + p + "\" is not one of always, first, never");
    } else if (o.has("add_prefix_space") && !o.boolean("add_prefix_space")) {
      s.prepend = PreTokenizerStep::Prepend::kNever;
    }
  } else if (type == "WhitespaceSplit") {
    s.kind = PreTokenizerStep::Kind::kWhitespaceSplit;
  } else {
    unsupported(o, type, "BertPreTokenizer, ByteLevel, Metaspace, WhitespaceSplit, Sequence");
  }
  out.push_back(std::move(s));
}

void parse_model(const ConfigObject& o, TokenizerSpec& spec) {
  text::ModelSpec& m = spec.model;
  std::string type = o.string_or("type", "");
  if (type.empty()) type = o.has("merges") ? "BPE" : o.has("vocab") && o.at("vocab").is_array() ? "Unigram" : "WordPiece";
  if (type == "Unigram") {
    m.kind = text::ModelSpec::Kind::kUnigram;
    const json& vocab = o.array("vocab");
    for (std::size_t i = 0; i < vocab.size(); ++i) {
      const json& e = vocab[i];
      if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number() || !std::isfinite(e[1].get<double>()))
        o.fail("vocab." + std::to_string(i), "expected [piece, score]");
      m.vocab.emplace_back(e[0].get<std::string>(), static_cast<int>(i));
      m.scores.push_back(static_cast<float>(e[1].get<double>()));
    }
    if (!o.has("unk_id") || o.at("unk_id").is_null()) o.fail("unk_id", "is missing (a Unigram model needs one)");
    m.unk_id = static_cast<int>(o.integer("unk_id", 0, static_cast<std::int64_t>(vocab.size()) - 1));
    if (o.has("byte_fallback") && o.boolean("byte_fallback")) o.fail("byte_fallback", "true is not supported");
    m.control.assign(m.vocab.size(), false);
    for (const text::HfAddedToken& a : spec.added_tokens)
      if (a.special && a.id >= 0 && static_cast<std::size_t>(a.id) < m.vocab.size() && m.vocab[a.id].first == a.content)
        m.control[a.id] = true;
    return;
  }
  if (type != "WordPiece" && type != "BPE") unsupported(o, type, "WordPiece, BPE, Unigram");
  const ConfigObject vocab = o.object("vocab");
  for (auto it = vocab.json().begin(); it != vocab.json().end(); ++it)
    m.vocab.emplace_back(it.key(), static_cast<int>(vocab.integer(it.key(), 0, kMaxId)));
  if (type == "WordPiece") {
    m.kind = text::ModelSpec::Kind::kWordPiece;
    m.unk_token = o.string_or("unk_token", "[UNK]");
    m.continuing_subword_prefix = o.string_or("continuing_subword_prefix", "##");
    m.max_input_chars_per_word = static_cast<std::size_t>(o.integer_or("max_input_chars_per_word", 100, 0, 1 << 30));
    return;
  }
  m.kind = text::ModelSpec::Kind::kBpe;
  m.unk_token = o.has("unk_token") && !o.at("unk_token").is_null() ? o.string("unk_token") : "";
  m.end_of_word_suffix = o.has("end_of_word_suffix") && !o.at("end_of_word_suffix").is_null()
                             ? o.string("end_of_word_suffix") : "";
  m.byte_fallback = o.has("byte_fallback") && o.boolean("byte_fallback");
  m.ignore_merges = o.has("ignore_merges") && o.boolean("ignore_merges");
  m.fuse_unk = o.has("fuse_unk") && o.boolean("fuse_unk");
  const json& merges = o.array("merges");
  for (std::size_t i = 0; i < merges.size(); ++i) {
    const json& e = merges[i];
    if (e.is_string()) {
      const std::string s = e.get<std::string>();
      const std::size_t sp = s.find(' ');
      if (sp == std::string::npos) o.fail("merges." + std::to_string(i), "\"" + s + "\" has no space");
      const std::size_t sp2 = s.find(' ', sp + 1);
      m.merges.emplace_back(s.substr(0, sp), s.substr(sp + 1, sp2 == std::string::npos ? std::string::npos : sp2 - sp - 1));
    } else if (e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string()) {
      m.merges.emplace_back(e[0].get<std::string>(), e[1].get<std::string>());
    } else {
      o.fail("merges." + std::to_string(i), "expected \"left right\" or [left, right]");
    }
  }
}

int special_id(const ConfigObject& o, const std::string& key, const std::string& token) {
  const ConfigObject st = o.object(key);
  const ConfigObject t = st.object(token);
  const json& ids = t.array("ids");
  if (ids.size() != 1 || !ids[0].is_number_integer()) t.fail("ids", "expected one integer id");
  const std::int64_t id = ids[0].get<std::int64_t>();
  if (id < 0 || id > kMaxId) t.fail("ids", "id out of range");
  return static_cast<int>(id);
}

void parse_post_processor(const ConfigObject& o, TokenizerSpec& spec) {
  const std::string type = o.string("type");
  if (type == "ByteLevel") return;
  if (type == "Sequence") {
    const json& list = o.array("processors");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string key = "processors." + std::to_string(i);
      if (!list[i].is_object()) o.fail(key, "expected an object");
      parse_post_processor(ConfigObject(list[i], o.file(), o.key_path(key)), spec);
    }
    return;
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    for (const char* key : {"cls", "sep"}) {
      const json& pair = o.array(key);
      if (pair.size() != 2 || !pair[1].is_number_integer() || pair[1].get<std::int64_t>() < 0 ||
          pair[1].get<std::int64_t>() > kMaxId)
        o.fail(key, "expected [token, id]");
      (std::string(key) == "cls" ? spec.template_before : spec.template_after) = {pair[1].get<int>()};
    }
    return;
  }
  if (type != "TemplateProcessing") unsupported(o, type, "TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence");
  const json& single = o.array("single");
  bool seen_a = false;
  spec.template_before.clear();
  spec.template_after.clear();
  for (std::size_t i = 0; i < single.size(); ++i) {
    const std::string key = "single." + std::to_string(i);
    if (!single[i].is_object()) o.fail(key, "expected an object");
    const ConfigObject item(single[i], o.file(), o.key_path(key));
    if (item.has("Sequence")) {
      if (item.object("Sequence").string("id") != "A") item.fail("Sequence.id", "expected \"A\"");
      seen_a = true;
    } else {
      const int id = special_id(o, "special_tokens", item.object("SpecialToken").string("id"));
      (seen_a ? spec.template_after : spec.template_before).push_back(id);
    }
  }
  if (!seen_a) o.fail("single", "has no Sequence A");
}

void parse_decoder(const ConfigObject& o, std::vector<DecoderStep>& out) {
  const std::string type = o.string("type");
  DecoderStep d;
  if (type == "Sequence") {
    const json& list = o.array("decoders");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string key = "decoders." + std::to_string(i);
      if (!list[i].is_object()) o.fail(key, "expected an object");
      parse_decoder(ConfigObject(list[i], o.file(), o.key_path(key)), out);
    }
    return;
  } else if (type == "WordPiece") {
    d.kind = DecoderStep::Kind::kWordPiece;
    d.prefix = o.string_or("prefix", "##");
    d.cleanup = !o.has("cleanup") || o.boolean("cleanup");
  } else if (type == "ByteLevel") {
    d.kind = DecoderStep::Kind::kByteLevel;
  } else if (type == "Metaspace") {
    d.kind = DecoderStep::Kind::kMetaspace;
    d.replacement = o.string_or("replacement", d.replacement);
  } else {
    unsupported(o, type, "WordPiece, ByteLevel, Metaspace, Sequence");
  }
  out.push_back(std::move(d));
}

json parse_json(const std::string& text, const std::string& file) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(file + ": not valid JSON (" + e.what() + ")");
  }
}

}  // namespace

TokenizerSpec parse_hf_tokenizer(const std::string& json_text, const std::string& file) {
  const json doc = parse_json(json_text, file);
  if (!doc.is_object()) throw Error(file + ": expected a JSON object");
  const ConfigObject top(doc, file);
  TokenizerSpec spec;
  spec.name = file;
  if (top.has("added_tokens")) {
    const json& list = top.array("added_tokens");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string key = "added_tokens." + std::to_string(i);
      if (!list[i].is_object()) top.fail(key, "expected an object");
      const ConfigObject a(list[i], file, key);
      text::HfAddedToken t;
      t.id = static_cast<int>(a.integer("id", 0, kMaxId));
      t.content = a.string("content");
      if (t.content.empty()) a.fail("content", "is empty");
      t.special = a.has("special") && a.boolean("special");
      t.normalized = a.has("normalized") ? a.boolean("normalized") : !t.special;
      t.lstrip = a.has("lstrip") && a.boolean("lstrip");
      t.rstrip = a.has("rstrip") && a.boolean("rstrip");
      spec.added_tokens.push_back(std::move(t));
    }
  }
  for (const char* key : {"normalizer", "pre_tokenizer", "post_processor", "decoder"}) {
    if (!top.has(key) || top.at(key).is_null()) continue;
    const ConfigObject o = top.object(key);
    const std::string k = key;
    if (k == "normalizer") parse_normalizer(o, spec.normalizers);
    else if (k == "pre_tokenizer") parse_pre_tokenizer(o, spec.pre_tokenizers);
    else if (k == "post_processor") parse_post_processor(o, spec);
    else parse_decoder(o, spec.decoders);
  }
  parse_model(top.object("model"), spec);
  return spec;
}

void add_marian_vocab(TokenizerSpec& spec, const std::string& vocab_json, const std::string& file) {
  const json doc = parse_json(vocab_json, file);
  if (!doc.is_object()) throw Error(file + ": expected a JSON object of piece → id");
  const ConfigObject top(doc, file);
  for (auto it = doc.begin(); it != doc.end(); ++it)
    spec.piece_ids.emplace_back(it.key(), static_cast<int>(top.integer(it.key(), 0, kMaxId)));
  spec.piece_unk_id = static_cast<int>(top.integer("<unk>", 0, kMaxId));
  spec.template_before.clear();
  spec.template_after = {static_cast<int>(top.integer("</s>", 0, kMaxId))};
  spec.added_tokens.clear();
  for (const char* t : {"</s>", "<unk>", "<pad>"})
    if (top.has(t)) spec.added_tokens.push_back({static_cast<int>(top.integer(t, 0, kMaxId)), t, true, false, false, false});
}

text::HfTokenizer load_hf_tokenizer(const io::Bundle& bundle) {
  const ConfigObject tok = bundle.config_object().object("tokenizer");
  const std::string type = tok.string("type");
  if (type != "hf") tok.fail("type", "\"" + type + "\": expected \"hf\"");
  const std::string file = tok.string("file");
  TokenizerSpec spec = parse_hf_tokenizer(bundle.file(file), file + " in " + bundle.name());
  if (tok.has("vocab")) {
    const std::string vocab = tok.string("vocab");
    add_marian_vocab(spec, bundle.file(vocab), vocab + " in " + bundle.name());
  }
  if (tok.has("clean_up_tokenization_spaces")) spec.clean_up_tokenization_spaces = tok.boolean("clean_up_tokenization_spaces");
  return text::HfTokenizer(std::move(spec));
}

}  // namespace attnlens::api

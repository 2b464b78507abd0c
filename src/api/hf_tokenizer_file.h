// tokenizer.json (Hugging Face `tokenizers`' serialisation) → text::TokenizerSpec, and the tokenizer of a converted
// bundle (config "tokenizer": {"type": "hf", "file": "tokenizer.json"} and, for MarianMT, "vocab": "vocab.json").
// Every failure is an attnlens::Error naming the file and the key: a component type the engine does not implement
// is named as such ("tokenizer.json in x: key \"normalizer.type\": NFKC is not supported (supported: ...)").
#pragma once

#include <string>

#include "io/bundle.h"
#include "text/hf_tokenizer.h"

namespace attnlens::api {

// `file` names the file in messages ("tokenizer.json in models/x").
text::TokenizerSpec parse_hf_tokenizer(const std::string& json_text, const std::string& file);

// MarianTokenizer's ids: the pieces map through vocab.json (a piece not in it → "<unk>"'s id), "</s>" ends every
// encoding, and "</s>", "<unk>", "<pad>" are its special tokens.
void add_marian_vocab(text::TokenizerSpec& spec, const std::string& vocab_json, const std::string& file);

text::HfTokenizer load_hf_tokenizer(const io::Bundle& bundle);

}  // namespace attnlens::api

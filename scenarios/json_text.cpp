#include "scenarios/json_text.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "scenarios/json_reader.hpp"

namespace dtsim {
namespace {

using json = nlohmann::json;

// "line L, column C" of the character at `offset` (both from 1).
std::string line_and_column(const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
  const std::size_t newline = offset == 0 ? std::string::npos : text.rfind('\n', offset - 1);
  const std::size_t column = newline == std::string::npos ? offset + 1 : offset - newline;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// nlohmann's SAX events built into a document as its own DOM parser would, with the depth and duplicate-key checks made
// before anything deeper is built. Parsing stops at the first problem (a handler returning false).
class CheckedDocument final : public nlohmann::json_sax<json> {
public:
  CheckedDocument(json& root, const std::string& text) : root_(root), text_(text) {}

  const std::string& error() const { return error_; }

  bool null() override { return add(json(nullptr)); }
  bool boolean(bool value) override { return add(json(value)); }
  bool number_integer(number_integer_t value) override { return add(json(value)); }
  bool number_unsigned(number_unsigned_t value) override { return add(json(value)); }
  bool number_float(number_float_t value, const string_t& /*text*/) override { return add(json(value)); }
  bool string(string_t& value) override { return add(json(std::move(value))); }
  bool binary(binary_t& value) override { return add(json::binary(std::move(value))); }  // not in JSON text
  bool start_object(std::size_t /*elements*/) override { return open(json::object()); }
  bool start_array(std::size_t /*elements*/) override { return open(json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool key(string_t& name) override {
    Frame& top = stack_.back();
    if (top.container->contains(name)) {
      error_ = path_with(name) + ": duplicate key (each key may appear once in an object)";
      return false;
    }
    top.key = std::move(name);
    return true;
  }

  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& e) override {
    if (e.id == 406) {  // out_of_range: a number strtod turns into infinity
      const std::size_t start = position >= last_token.size() ? position - last_token.size() : 0;
      error_ = "not valid JSON (" + line_and_column(text_, start) + ": number " + last_token +
               " is beyond a double's range, about 1.8e308)";
      return false;
    }
    std::string what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    if (what.starts_with("[json.exception.") && what.find("] ") != std::string::npos) {
      what = what.substr(what.find("] ") + 2);
    }
    error_ = "not valid JSON (" + what + ")";
    return false;
  }

private:
  struct Frame {
    json* container;
    std::string key;  // an object's key whose value comes next
  };

  // Where the next value goes: the root, the end of the open array or the open object's key.
  json* place(json&& value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Frame& top = stack_.back();
    if (top.container->is_array()) {
      top.container->push_back(std::move(value));
      return &top.container->back();
    }
    json& slot = (*top.container)[top.key];
    slot = std::move(value);
    return &slot;
  }

  bool add(json&& value) {
    place(std::move(value));
    return true;
  }

  bool open(json&& container) {
    json* placed = place(std::move(container));
    if (stack_.size() == max_json_depth) {
      std::string where = path_with("");
      if (where.size() > 80) where = where.substr(0, 77) + "...";
      error_ = where + ": nested deeper than " + std::to_string(max_json_depth) + " levels (objects and arrays)";
      return false;
    }
    stack_.push_back(Frame{placed, {}});
    return true;
  }

  bool close() {
    stack_.pop_back();
    return true;
  }

  // The JSON path of the value being read in the innermost open container, as JsonObject writes paths
  // ("cluster.fabric.radix", "train.stragglers[0].worker"); `name` names it in an open object.
  std::string path_with(const std::string& name) const {
    std::string path;
    for (std::size_t i = 0; i < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      const bool last = i + 1 == stack_.size();
      if (f.container->is_array()) {
        path += "[" + std::to_string(f.container->size() - 1) + "]";  // the value being read is the last element
      } else {
        path += (path.empty() ? "" : ".") + (last && !name.empty() ? name : f.key);
      }
    }
    return path.empty() ? "top level" : path;
  }

  json& root_;
  const std::string& text_;
  std::vector<Frame> stack_;
  std::string error_;
};

}  // namespace

json parse_json_text(const std::string& text) {
  // (the parser takes a NUL byte for the end of the text, so whatever follows one would go unread)
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos) {
    throw ScenarioError("a NUL byte at offset " + std::to_string(nul) + ": expected JSON text");
  }
  json root;
  CheckedDocument document(root, text);
  const bool ok = json::sax_parse(text, &document, json::input_format_t::json, true, false);
  if (!ok) throw ScenarioError(document.error().empty() ? std::string("not valid JSON") : document.error());
  return root;
}

}  // namespace dtsim

// YAML text -> JSON value plus source map, built from yaml-cpp's event stream rather than
// from a YAML::Node tree. Working from events is what lets hostile documents be refused
// cheaply:
//  - text that is not UTF-8 is refused before parsing, naming the line and column of the
//    first bad byte (otherwise the bytes travel into strings and fail much later, when a
//    JSON document is written);
//  - an alias to a node that is still open (`&a {x: *a}`) is a cycle: refused at once
//    instead of being followed forever;
//  - each anchor remembers how many nodes it holds, so an alias is priced before it is
//    copied, and a document whose aliases would expand past kMaxAliasNodes (a "billion
//    laughs") is refused after copying at most that many nodes;
//  - no YAML::Node tree is kept beside the JSON value, which halves the peak memory of a
//    large eval set. An aliased subtree gets one source mark (the alias's); the nodes
//    inside it fall back to it, as SourceMap::find does for any unmarked pointer.
// Nesting depth is bounded by yaml-cpp's own DepthGuard (a ParserException).
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <memory>
#include <sstream>
#include <unordered_map>

#include "harness/scenario/source_map.h"
#include "harness/scenario/yaml_text.h"

namespace isoharness::scenario {

namespace {

Mark to_mark(const YAML::Mark& m) {
  if (m.line < 0) return {};
  return Mark{m.line + 1, m.column + 1};
}

// Thrown by the handler to stop parsing at the first error that makes going on pointless.
struct Stop {};

class JsonBuilder : public YAML::EventHandler {
 public:
  JsonBuilder(nlohmann::json& root, SourceMap& source, std::vector<Diagnostic>& errors)
      : root_(root), source_(source), errors_(errors) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (refuse_key(mark)) return;
    place(mark, nullptr, anchor, 1);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& raw) override {
    const std::string value = utf8_after_escapes(raw);
    if (!stack_.empty() && stack_.back().is_map && stack_.back().want_key) {
      take_key(mark, value);
      remember(anchor, value, 1);
      return;
    }
    const bool quoted = tag == "!" || tag == "tag:yaml.org,2002:str";
    place(mark, quoted ? nlohmann::json(value) : plain_scalar(value), anchor, 1);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (refuse_key(mark)) return;
    auto it = anchors_.find(anchor);
    if (it == anchors_.end() || !it->second.complete) {
      fail(mark,
           "an alias refers to a node that contains it (a cycle); aliases may only repeat a finished node");
    }
    const Anchored& a = *it->second.value;
    alias_nodes_ += it->second.nodes;
    if (alias_nodes_ > kMaxAliasNodes) {
      fail(mark,
           "aliases expand to more than " + std::to_string(kMaxAliasNodes) +
               " nodes (a billion-laughs document?); write the repeated parts out or use fewer aliases");
    }
    count_nodes(mark, it->second.nodes);
    place(mark, a, 0, 0);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, nlohmann::json::array(), anchor, false);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, nlohmann::json::object(), anchor, true);
  }
  void OnMapEnd() override { close(); }

 private:
  using Anchored = nlohmann::json;
  struct AnchorEntry {
    std::shared_ptr<const Anchored> value;  // set when the node is complete
    std::size_t nodes = 0;
    bool complete = false;
  };
  struct Frame {
    nlohmann::json* node = nullptr;
    std::string pointer;
    bool is_map = false;
    bool want_key = true;     // maps: the next event is a key
    bool drop_value = false;  // maps: the key was refused, so is its value
    std::string key;          // maps: the key whose value comes next
    YAML::Mark key_mark;
    std::size_t next_index = 0;  // sequences
    YAML::anchor_t anchor = 0;
    std::size_t nodes_at_open = 0;
    std::unique_ptr<nlohmann::json> dropped;  // storage for a refused subtree
  };

  [[noreturn]] void fail(const YAML::Mark& mark, std::string message) {
    Mark m = to_mark(mark);
    errors_.push_back({source_.file(), m.line, m.column, "", std::move(message)});
    throw Stop{};
  }

  void count_nodes(const YAML::Mark& mark, std::size_t n) {
    nodes_ += n;
    if (nodes_ > kMaxYamlNodes) {
      fail(mark, "document has more than " + std::to_string(kMaxYamlNodes) + " nodes");
    }
  }

  bool dropping() const { return dropping_depth_ > 0; }

  void take_key(const YAML::Mark& mark, const std::string& key) {
    Frame& f = stack_.back();
    f.want_key = false;
    f.key = key;
    f.key_mark = mark;
    f.drop_value = false;
    if (!dropping() && f.node->contains(key)) {
      Mark m = to_mark(mark);
      errors_.push_back({source_.file(), m.line, m.column, "",
                         "duplicate key '" + key + "' (each key may appear once in a mapping)"});
      f.drop_value = true;
    }
  }

  // A key that is not a plain scalar (a null, an alias, a sequence or a mapping): refused,
  // and the value after it is dropped. Returns true when the event was such a key and is
  // fully handled (collections go on as a dropped subtree).
  bool refuse_key(const YAML::Mark& mark) {
    if (stack_.empty() || !stack_.back().is_map || !stack_.back().want_key) return false;
    Frame& f = stack_.back();
    f.want_key = false;
    f.drop_value = true;
    if (!dropping()) {
      Mark m = to_mark(mark);
      errors_.push_back({source_.file(), m.line, m.column, "", "mapping keys must be plain strings"});
    }
    return true;
  }

  // Where the next value goes: its slot and pointer. nullptr slot = dropped.
  nlohmann::json* slot(std::string& pointer) {
    if (stack_.empty()) {
      pointer.clear();
      return &root_;
    }
    Frame& f = stack_.back();
    if (f.is_map) {
      f.want_key = true;
      pointer = pointer_join(f.pointer, f.key);
      if (f.drop_value) return nullptr;
      return &(*f.node)[f.key];
    }
    pointer = pointer_join(f.pointer, f.next_index++);
    f.node->push_back(nullptr);
    return &f.node->back();
  }

  void mark_at(const std::string& pointer, const YAML::Mark& mark) {
    if (dropping()) return;
    // A value in a mapping is located at its key, the most useful place to point at.
    if (!stack_.empty() && stack_.back().is_map && stack_.back().key_mark.line >= 0) {
      source_.set(pointer, to_mark(stack_.back().key_mark));
    } else {
      source_.set(pointer, to_mark(mark));
    }
  }

  void remember(YAML::anchor_t anchor, const nlohmann::json& value, std::size_t nodes) {
    if (anchor == YAML::NullAnchor) return;
    anchors_[anchor] = AnchorEntry{std::make_shared<const Anchored>(value), nodes, true};
  }

  void place(const YAML::Mark& mark, nlohmann::json value, YAML::anchor_t anchor, std::size_t nodes) {
    if (nodes) count_nodes(mark, nodes);
    remember(anchor, value, nodes);
    std::string pointer;
    nlohmann::json* target = slot(pointer);
    if (!target) return;
    mark_at(pointer, mark);
    *target = std::move(value);
  }

  void open(const YAML::Mark& mark, nlohmann::json empty, YAML::anchor_t anchor, bool is_map) {
    const bool as_key = refuse_key(mark);
    count_nodes(mark, 1);
    std::string pointer;
    nlohmann::json* target = as_key ? nullptr : slot(pointer);
    Frame f;
    f.is_map = is_map;
    f.anchor = anchor;
    f.nodes_at_open = nodes_;
    f.pointer = pointer;
    if (anchor != YAML::NullAnchor) anchors_[anchor] = AnchorEntry{};
    if (target) {
      mark_at(pointer, mark);
      *target = std::move(empty);
      f.node = target;
    } else {
      f.dropped = std::make_unique<nlohmann::json>(std::move(empty));
      f.node = f.dropped.get();
      ++dropping_depth_;
    }
    stack_.push_back(std::move(f));
  }

  void close() {
    Frame& f = stack_.back();
    if (f.anchor != YAML::NullAnchor) {
      anchors_[f.anchor] =
          AnchorEntry{std::make_shared<const Anchored>(*f.node), nodes_ - f.nodes_at_open + 1, true};
    }
    if (f.dropped) --dropping_depth_;
    stack_.pop_back();
  }

  nlohmann::json& root_;
  SourceMap& source_;
  std::vector<Diagnostic>& errors_;
  std::vector<Frame> stack_;
  std::unordered_map<YAML::anchor_t, AnchorEntry> anchors_;
  std::size_t nodes_ = 0;
  std::size_t alias_nodes_ = 0;
  int dropping_depth_ = 0;
};

}  // namespace

YamlDocument parse_yaml(std::string_view text, const std::string& file) {
  YamlDocument doc{nullptr, SourceMap(file)};
  if (text.size() > kMaxYamlBytes) {
    throw UserError({Diagnostic{file, 0, 0, "", "file is larger than 16 MiB"}});
  }
  if (auto bad = first_invalid_utf8(text)) {
    throw UserError(
        {Diagnostic{file, bad->line, bad->column, "",
                    "the file is not UTF-8 text (byte 0x" + bad->byte_hex + " here); save it as UTF-8"}});
  }
  if (auto bad = first_control_character(text)) {
    throw UserError(
        {Diagnostic{file, bad->line, bad->column, "",
                    "a control character (byte 0x" + bad->byte_hex + " here) is not allowed in YAML"}});
  }
  std::vector<Diagnostic> errors;
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    JsonBuilder builder(doc.value, doc.source, errors);
    parser.HandleNextDocument(builder);
  } catch (const Stop&) {
  } catch (const YAML::DeepRecursion& e) {
    Mark m = to_mark(e.mark);
    throw UserError({Diagnostic{file, m.line, m.column, "",
                                "nested more than " + std::to_string(e.depth() - 1) + " levels deep"}});
  } catch (const YAML::Exception& e) {
    Mark m = to_mark(e.mark);
    throw UserError({Diagnostic{file, m.line, m.column, "", "YAML syntax error: " + e.msg}});
  }
  if (!errors.empty()) throw UserError(std::move(errors));
  return doc;
}

}  // namespace isoharness::scenario

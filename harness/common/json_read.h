#pragma once
// Typed readers for JSON written outside the harness: by a sandbox (isoprobe's posture and
// bench documents), by the platform (`hawk status`) or by a witness. nlohmann's
// `value(key, default)` and `get<T>()` throw `type_error` when the key holds another type,
// and whoever writes the document chooses its types, so such a document must never reach
// them. These readers never throw: a member of the wrong type reads as absent, and a
// `JsonReader` also records it as a schema problem so the caller can report it.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace isoharness::common {

// The member `key` of `obj`, or nullptr when obj is not an object or has no such member.
inline const nlohmann::json* json_member(const nlohmann::json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

inline std::optional<std::string> json_string(const nlohmann::json& obj, std::string_view key) {
  const auto* m = json_member(obj, key);
  if (!m || !m->is_string()) return std::nullopt;
  return m->get_ref<const std::string&>();
}

inline std::optional<long long> json_int(const nlohmann::json& obj, std::string_view key) {
  const auto* m = json_member(obj, key);
  if (!m || !m->is_number_integer()) return std::nullopt;
  if (m->is_number_unsigned() && m->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    return std::nullopt;
  return m->get<long long>();
}

inline std::optional<double> json_number(const nlohmann::json& obj, std::string_view key) {
  const auto* m = json_member(obj, key);
  if (!m || !m->is_number()) return std::nullopt;
  return m->get<double>();
}

inline std::optional<bool> json_bool(const nlohmann::json& obj, std::string_view key) {
  const auto* m = json_member(obj, key);
  if (!m || !m->is_boolean()) return std::nullopt;
  return m->get<bool>();
}

// The string member, or `fallback` when it is absent or of another type.
inline std::string json_string_or(const nlohmann::json& obj, std::string_view key,
                                  std::string fallback = {}) {
  auto s = json_string(obj, key);
  return s ? std::move(*s) : std::move(fallback);
}

// The member when it is an array (or an object), else nullptr.
inline const nlohmann::json* json_array(const nlohmann::json& obj, std::string_view key) {
  const auto* m = json_member(obj, key);
  return m && m->is_array() ? m : nullptr;
}
inline const nlohmann::json* json_object(const nlohmann::json& obj, std::string_view key) {
  const auto* m = json_member(obj, key);
  return m && m->is_object() ? m : nullptr;
}

// The string elements of an array member; elements of another type are skipped.
inline std::vector<std::string> json_strings(const nlohmann::json& obj, std::string_view key) {
  std::vector<std::string> out;
  if (const auto* a = json_array(obj, key))
    for (const auto& v : *a)
      if (v.is_string()) out.push_back(v.get_ref<const std::string&>());
  return out;
}

// The same readers, noting each member that is present with the wrong type as a schema
// problem ("<where>.<key>: not a string"). An absent or null member is not a problem here;
// the caller decides whether it was required.
class JsonReader {
 public:
  std::optional<std::string> string(const nlohmann::json& obj, std::string_view key, std::string_view where) {
    return typed(obj, key, where, "a string", json_string(obj, key));
  }
  std::optional<long long> integer(const nlohmann::json& obj, std::string_view key, std::string_view where) {
    return typed(obj, key, where, "an integer", json_int(obj, key));
  }
  std::optional<double> number(const nlohmann::json& obj, std::string_view key, std::string_view where) {
    return typed(obj, key, where, "a number", json_number(obj, key));
  }
  std::optional<bool> boolean(const nlohmann::json& obj, std::string_view key, std::string_view where) {
    return typed(obj, key, where, "a boolean", json_bool(obj, key));
  }
  const std::vector<std::string>& problems() const { return problems_; }
  void note(std::string problem) { problems_.push_back(std::move(problem)); }

 private:
  template <typename T>
  std::optional<T> typed(const nlohmann::json& obj, std::string_view key, std::string_view where,
                         std::string_view kind, std::optional<T> got) {
    const auto* m = json_member(obj, key);
    if (!got && m && !m->is_null())
      problems_.push_back(std::string(where) + "." + std::string(key) + ": not " + std::string(kind));
    return got;
  }
  std::vector<std::string> problems_;
};

}  // namespace isoharness::common

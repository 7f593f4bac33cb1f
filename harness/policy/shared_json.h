// An immutable JSON value that plan items share when they render the same. A large eval
// set has tens of thousands of items with a handful of distinct values and expect blocks;
// each item holding its own copy made a 50,000-item plan cost over 1 GB. Reads look like
// reads of a const nlohmann::json.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

namespace isoharness::policy {

class SharedJson {
 public:
  SharedJson() : value_(null_value()) {}
  SharedJson(nlohmann::json value)  // NOLINT(google-explicit-constructor): assigned like a json
      : value_(std::make_shared<const nlohmann::json>(std::move(value))) {}
  explicit SharedJson(std::shared_ptr<const nlohmann::json> value) : value_(std::move(value)) {}

  const nlohmann::json& get() const { return *value_; }
  operator const nlohmann::json&() const { return *value_; }  // NOLINT(google-explicit-constructor)
  const nlohmann::json* operator->() const { return value_.get(); }
  const nlohmann::json& operator*() const { return *value_; }

  // A missing key reads as null (a const json's operator[] would be undefined there).
  const nlohmann::json& operator[](const std::string& key) const {
    auto it = value_->find(key);
    return it == value_->end() ? *null_value() : *it;
  }
  bool contains(const std::string& key) const { return value_->contains(key); }
  auto items() const { return value_->items(); }

 private:
  static const std::shared_ptr<const nlohmann::json>& null_value() {
    static const auto null = std::make_shared<const nlohmann::json>();
    return null;
  }
  std::shared_ptr<const nlohmann::json> value_;
};

// Hands out one SharedJson per distinct value (by its serialisation).
class JsonInterner {
 public:
  SharedJson intern(nlohmann::json value) {
    std::string key = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    auto [it, fresh] = seen_.try_emplace(std::move(key));
    if (fresh) it->second = std::make_shared<const nlohmann::json>(std::move(value));
    return SharedJson(it->second);
  }

 private:
  std::unordered_map<std::string, std::shared_ptr<const nlohmann::json>> seen_;
};

}  // namespace isoharness::policy

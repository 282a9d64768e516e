// Reading Slurm's JSON across releases (see slurm_json.h).
#include "slurm_json.h"

#include <cmath>
#include <memory>

#include "util/text.h"

namespace vgpu::slurm_json {

namespace {
constexpr int64_t kEmptyResult = 9003;  // ESLURM_REST_EMPTY_RESULT ("Nothing found")
}  // namespace

Result<Json::Value> Parse(const std::string& text) {
  Json::CharReaderBuilder b;
  b["collectComments"] = false;
  b["failIfExtra"] = true;  // "{...} trailing text" is not one value
  std::unique_ptr<Json::CharReader> reader(b.newCharReader());
  Json::Value root;
  std::string errors;
  try {
    if (!reader->parse(text.data(), text.data() + text.size(), &root, &errors))
      return Result<Json::Value>::Error(OneLine(errors));
  } catch (const Json::Exception& e) {
    return Result<Json::Value>::Error(OneLine(e.what()));
  }
  return root;
}

std::optional<double> Number(const Json::Value& v) {
  if (v.isObject()) {
    const Json::Value& set = v["set"];
    if (set.isBool() && !set.asBool()) return std::nullopt;
    return Number(v["number"]);
  }
  if (!v.isNumeric() || v.isBool()) return std::nullopt;
  double d = v.asDouble();
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

std::optional<uint64_t> Whole(const Json::Value& v) {
  if (v.isUInt64()) return v.asUInt64();
  std::optional<double> d = Number(v);
  if (!d || *d < 0 || *d >= 18446744073709551616.0 || std::floor(*d) != *d) return std::nullopt;
  return static_cast<uint64_t>(*d);
}

int64_t Time(const Json::Value& v) {
  std::optional<double> d = Number(v);
  if (!d || !(*d >= -9223372036854775808.0 && *d < 9223372036854775808.0)) return 0;
  return static_cast<int64_t>(*d);
}

const Json::Value& Get(const Json::Value& v, const char* key) {
  return v.isObject() ? v[key] : Json::Value::nullSingleton();
}

std::string StringOr(const Json::Value& v, const std::string& fallback) {
  return v.isString() ? v.asString() : fallback;
}

std::vector<std::string> Strings(const Json::Value& v) {
  if (v.isString()) return {v.asString()};
  std::vector<std::string> out;
  if (v.isArray())
    for (const Json::Value& e : v)
      if (e.isString()) out.push_back(e.asString());
  return out;
}

std::string Errors(const Json::Value& doc) {
  const Json::Value& errors = Get(doc, "errors");
  if (!errors.isArray()) return "";
  std::string out;
  for (const Json::Value& e : errors) {
    if (!e.isObject()) continue;
    std::optional<double> number = Number(e["error_number"]);
    std::string what = StringOr(e["description"]);
    if ((number && *number == kEmptyResult) || what == "Nothing found") continue;
    if (what.empty()) what = StringOr(e["error"], "unknown error");
    else if (e["error"].isString()) what += " (" + e["error"].asString() + ")";
    if (e["source"].isString()) what += " in " + e["source"].asString();
    out += (out.empty() ? "" : "; ") + what;
  }
  return out;
}

}  // namespace vgpu::slurm_json

// The chip catalog: parsing and validating chips.d/*.json, and lookups.
//
// Contract: nothing here throws. jsoncpp may throw (Json::Exception, or
// std::bad_alloc); every call into it is inside a try block whose catch turns
// the failure into an error Status that names the file.
#include "devices/chip_catalog.h"

#include <json/json.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <system_error>
#include <utility>

#include "util/read_file.h"
#include "util/text.h"

namespace vgpu {
namespace {

namespace fs = std::filesystem;

// Ids and GRES types end up in gres.conf Type= and in file names: keep them
// to characters that need no quoting anywhere.
bool IsToken(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// Reads the keys of one JSON object and produces "<source>: key "<path>" ..."
// messages. The first problem wins; later getters do nothing once failed.
class ObjectReader {
 public:
  ObjectReader(const Json::Value& obj, std::string source, std::string prefix)
      : obj_(obj), source_(std::move(source)), prefix_(std::move(prefix)) {}

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }

  void Fail(const std::string& key, const std::string& what) {
    if (error_.empty()) error_ = source_ + ": key \"" + prefix_ + key + "\" " + what;
  }

  // Unknown keys are rejected so that a misspelt optional key does not pass
  // silently; keys starting with '_' are free-form comments.
  void RejectUnknown(const std::set<std::string>& known) {
    for (const std::string& key : obj_.getMemberNames()) {
      if (!key.empty() && key[0] == '_') continue;
      if (known.count(key) == 0) Fail(key, "is not a known key (misspelt?)");
    }
  }

  bool Has(const char* key) const { return obj_.isMember(key); }

  std::string String(const char* key, bool required = true, const std::string& fallback = "") {
    if (failed()) return fallback;
    if (!obj_.isMember(key)) {
      if (required) Fail(key, "is missing");
      return fallback;
    }
    const Json::Value& v = obj_[key];
    if (!v.isString() || Trim(v.asString()).empty()) {
      Fail(key, "must be a non-empty string");
      return fallback;
    }
    return v.asString();
  }

  uint64_t PositiveU64(const char* key) {
    if (failed()) return 0;
    if (!obj_.isMember(key)) {
      Fail(key, "is missing");
      return 0;
    }
    const Json::Value& v = obj_[key];
    // isUInt64 is false for negatives and fractions; isBool is excluded
    // because jsoncpp converts true to 1.
    if (v.isBool() || !v.isUInt64() || v.asUInt64() == 0) {
      Fail(key, "must be a positive integer");
      return 0;
    }
    return v.asUInt64();
  }

  uint32_t PositiveU32(const char* key) {
    if (failed()) return 0;
    if (!obj_.isMember(key)) {
      Fail(key, "is missing");
      return 0;
    }
    const Json::Value& v = obj_[key];
    if (v.isBool() || !v.isUInt() || v.asUInt() == 0) {
      Fail(key, "must be a positive integer below 2^32");
      return 0;
    }
    return v.asUInt();
  }

  // Non-negative integers below `limit`; absent: empty.
  std::vector<uint32_t> IndexList(const char* key, uint32_t limit) {
    std::vector<uint32_t> out;
    if (failed() || !obj_.isMember(key)) return out;
    const Json::Value& v = obj_[key];
    if (!v.isArray() || v.empty()) {
      Fail(key, "must be a non-empty array of integers");
      return out;
    }
    for (Json::ArrayIndex i = 0; i < v.size(); ++i) {
      if (v[i].isBool() || !v[i].isUInt() || v[i].asUInt() >= limit) {
        Fail(std::string(key) + "[" + std::to_string(i) + "]",
             "must be an integer from 0 to " + std::to_string(limit - 1));
        return {};
      }
      out.push_back(v[i].asUInt());
    }
    return out;
  }

  std::vector<std::string> StringList(const char* key, bool required) {
    std::vector<std::string> out;
    if (failed()) return out;
    if (!obj_.isMember(key)) {
      if (required) Fail(key, "is missing");
      return out;
    }
    const Json::Value& v = obj_[key];
    if (!v.isArray()) {
      Fail(key, "must be an array of strings");
      return out;
    }
    for (Json::ArrayIndex i = 0; i < v.size(); ++i) {
      if (!v[i].isString() || Trim(v[i].asString()).empty()) {
        Fail(std::string(key) + "[" + std::to_string(i) + "]", "must be a non-empty string");
        return {};
      }
      out.push_back(v[i].asString());
    }
    if (required && out.empty()) Fail(key, "must list at least one entry");
    return out;
  }

 private:
  const Json::Value& obj_;
  std::string source_;
  std::string prefix_;
  std::string error_;
};

const std::set<std::string> kModelKeys = {
    "id", "vendor", "gres_type", "names", "memory_bytes", "compute_units", "compute_unit_name",
    "device_file", "shared_files", "visible_devices_env", "discovery", "slice_slots", "profiles"};
const std::set<std::string> kProfileKeys = {"name", "shares", "memory_bytes", "compute_units", "slots", "starts"};
const std::set<std::string> kDiscoveryValues = {"nvml", "dcmi", "rocm-smi", "none"};

Result<ChipModel> ParseModelValue(const Json::Value& root, const std::string& source) {
  if (!root.isObject()) return Result<ChipModel>::Error(source + ": the top level must be a JSON object");
  ObjectReader r(root, source, "");
  r.RejectUnknown(kModelKeys);
  ChipModel m;
  m.source = source;
  m.id = r.String("id");
  if (!r.failed() && !IsToken(m.id)) r.Fail("id", "must use only letters, digits, '-', '_' and '.'");
  m.vendor = r.String("vendor");
  m.gres_type = r.String("gres_type");
  if (!r.failed() && !IsToken(m.gres_type)) {
    r.Fail("gres_type", "must use only letters, digits, '-', '_' and '.'");
  }
  m.names = r.StringList("names", true);
  m.memory_bytes = r.PositiveU64("memory_bytes");
  m.compute_units = r.PositiveU32("compute_units");
  m.compute_unit_name = r.String("compute_unit_name", false, "CU");
  m.device_file = r.String("device_file");
  if (!r.failed() && m.device_file[0] != '/') r.Fail("device_file", "must be an absolute path");
  m.shared_files = r.StringList("shared_files", false);
  m.visible_devices_env = r.String("visible_devices_env");
  m.discovery = r.String("discovery");
  if (!r.failed() && kDiscoveryValues.count(m.discovery) == 0) {
    r.Fail("discovery", "must be one of \"nvml\", \"dcmi\", \"rocm-smi\", \"none\"");
  }
  if (!r.failed() && r.Has("slice_slots")) {
    m.slice_slots = r.PositiveU32("slice_slots");
    if (!r.failed() && m.slice_slots > kMaxSliceSlots)
      r.Fail("slice_slots", "must be at most " + std::to_string(kMaxSliceSlots));
  }
  if (!r.failed() && r.Has("profiles")) {
    const Json::Value& list = root["profiles"];
    if (!list.isArray()) r.Fail("profiles", "must be an array of objects");
    for (Json::ArrayIndex i = 0; !r.failed() && i < list.size(); ++i) {
      std::string prefix = "profiles[" + std::to_string(i) + "].";
      if (!list[i].isObject()) {
        r.Fail("profiles[" + std::to_string(i) + "]", "must be an object");
        break;
      }
      ObjectReader pr(list[i], source, prefix);
      pr.RejectUnknown(kProfileKeys);
      SliceProfile p;
      p.name = pr.String("name");
      p.shares = pr.PositiveU32("shares");
      p.memory_bytes = pr.PositiveU64("memory_bytes");
      p.compute_units = pr.PositiveU32("compute_units");
      if (!pr.failed() && p.shares > 100) pr.Fail("shares", "must be at most 100 (shares of one device)");
      if (!pr.failed() && p.memory_bytes > m.memory_bytes) {
        pr.Fail("memory_bytes", "must not exceed the model's memory_bytes");
      }
      if (!pr.failed() && p.compute_units > m.compute_units) {
        pr.Fail("compute_units", "must not exceed the model's compute_units");
      }
      // Where the profile's slices may sit: only with the model's slots.
      if (!pr.failed() && (pr.Has("slots") || pr.Has("starts")) && m.slice_slots == 0)
        pr.Fail(pr.Has("slots") ? "slots" : "starts", "needs the model's \"slice_slots\"");
      if (!pr.failed() && m.slice_slots > 0) {
        p.slots = pr.PositiveU32("slots");
        p.starts = pr.IndexList("starts", m.slice_slots);
        if (!pr.failed() && p.starts.empty()) pr.Fail("starts", "is missing (the model has \"slice_slots\")");
        for (uint32_t start : p.starts)
          if (!pr.failed() && start + p.slots > m.slice_slots)
            pr.Fail("starts", "start " + std::to_string(start) + " with " + std::to_string(p.slots) +
                                  " slots goes past the model's " + std::to_string(m.slice_slots) + " slice_slots");
      }
      if (pr.failed()) return Result<ChipModel>::Error(pr.error());
      m.profiles.push_back(std::move(p));
    }
  }
  if (r.failed()) return Result<ChipModel>::Error(r.error());
  return m;
}

bool HasJsonSuffix(const fs::path& p) { return p.extension() == ".json"; }


// Loads one directory's models, sorted by file name, into `out`. A file that
// cannot be read or parsed is skipped with a problem that names it (and for
// JSON the line and column); so is a second file of one directory with an id
// already seen, a copy that was meant to be edited. A directory that cannot
// be listed is a problem too: one mistake must not take every model away.
void LoadDirectory(const fs::path& dir, std::vector<ChipModel>* out, std::vector<std::string>* problems) {
  std::error_code ec;
  fs::file_status st = fs::status(dir, ec);
  if (st.type() == fs::file_type::not_found) return;  // skipped by contract
  if (ec) return problems->push_back(dir.string() + ": " + ec.message() + "; directory skipped");
  if (!fs::is_directory(st)) return problems->push_back(dir.string() + ": not a directory; skipped");
  std::vector<fs::path> files;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code fec;
    if (HasJsonSuffix(it->path()) && it->is_regular_file(fec)) files.push_back(it->path());
  }
  if (ec) return problems->push_back(dir.string() + ": cannot list: " + ec.message() + "; directory skipped");
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  std::map<std::string, std::string> seen;  // id -> file, within this directory
  for (const fs::path& file : files) {
    Result<std::string> text = ReadTextFile(file.string());
    Result<ChipModel> model = text.ok() ? ChipCatalog::ParseModel(*text, file.string())
                                        : Result<ChipModel>(text.status());
    if (!model.ok()) {
      problems->push_back(model.message() + "; file skipped");
      continue;
    }
    auto dup = seen.find(model->id);
    if (dup != seen.end()) {
      problems->push_back(file.string() + ": key \"id\" \"" + model->id + "\" is already used by " + dup->second +
                          " in the same directory; file skipped");
      continue;
    }
    seen[model->id] = file.string();
    out->push_back(std::move(model).value());
  }
}

}  // namespace

Result<ChipModel> ChipCatalog::ParseModel(const std::string& json_text, const std::string& source) {
  try {
    Json::CharReaderBuilder builder;
    Json::CharReaderBuilder::strictMode(&builder.settings_);
    std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
    Json::Value root;
    std::string errors;
    if (!reader->parse(json_text.data(), json_text.data() + json_text.size(), &root, &errors)) {
      return Result<ChipModel>::Error(source + ": invalid JSON: " + OneLine(errors));
    }
    return ParseModelValue(root, source);
  } catch (const std::exception& e) {
    return Result<ChipModel>::Error(source + ": cannot parse: " + e.what());
  }
}

Result<ChipCatalog> ChipCatalog::LoadDirectories(const std::string& dirs) {
  ChipCatalog catalog;
  try {
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t colon = dirs.find(':', start);
      if (colon == std::string::npos) colon = dirs.size();
      std::string dir = dirs.substr(start, colon - start);
      start = colon + 1;
      if (dir.empty()) continue;
      std::vector<ChipModel> models;
      LoadDirectory(dir, &models, &catalog.problems_);
      for (ChipModel& m : models) catalog.Add(std::move(m));
    }
  } catch (const std::exception& e) {
    return Result<ChipCatalog>::Error("chip catalog " + dirs + ": " + e.what());
  }
  return catalog;
}

void ChipCatalog::Add(ChipModel model) {
  for (ChipModel& m : models_) {
    if (m.id == model.id) {
      m = std::move(model);
      return;
    }
  }
  models_.push_back(std::move(model));
}

const ChipModel* ChipCatalog::FindByName(const std::string& reported_name) const {
  std::string want = Lower(Trim(reported_name));
  if (want.empty()) return nullptr;
  for (const ChipModel& m : models_) {
    for (const std::string& n : m.names) {
      if (Lower(Trim(n)) == want) return &m;
    }
  }
  return nullptr;
}

const ChipModel* ChipCatalog::FindById(const std::string& id) const {
  for (const ChipModel& m : models_) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

bool ChipCatalog::KnowsType(const std::string& type) const {
  std::string want = Lower(Trim(type));
  if (want.empty()) return false;
  for (const ChipModel& m : models_) {
    if (Lower(m.gres_type) == want || Lower(m.id) == want) return true;
  }
  return false;
}

std::vector<std::string> ChipCatalog::Types() const {
  std::set<std::string> types;
  for (const ChipModel& m : models_) types.insert(m.gres_type);
  return std::vector<std::string>(types.begin(), types.end());
}

}  // namespace vgpu

// The "slices" file and profile choice; the drivers are in
// hardware_slice_mig.cc (NVML) and hardware_slice_vnpu.cc (DCMI).
#include "jobs/hardware_slice.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <sstream>

#include "jobs/job_limits.h"
#include "util/read_file.h"
#include "util/text.h"

namespace vgpu {
namespace {

constexpr int kSlicesVersion = 1;
constexpr char kHeader[] = "vgpu-slices";

bool PlainByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '/' || c == '+' || c == '-';
}

// A value as one blank-free token (see the file format in hardware_slice.h).
std::string Encode(const std::string& value) {
  if (value.empty()) return "-";
  if (value == "-") return "%2D";
  std::string out;
  for (unsigned char c : value) {
    if (PlainByte(c)) {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Encode's inverse; false when `token` is not something Encode writes.
bool Decode(const std::string& token, std::string* out) {
  out->clear();
  if (token == "-") return true;
  for (size_t i = 0; i < token.size(); ++i) {
    const char c = token[i];
    if (c == '%') {
      if (i + 2 >= token.size()) return false;
      const int hi = HexDigit(token[i + 1]), lo = HexDigit(token[i + 2]);
      if (hi < 0 || lo < 0) return false;
      *out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (PlainByte(static_cast<unsigned char>(c))) {
      *out += c;
    } else {
      return false;
    }
  }
  return true;
}

// The fields of a "slice" line, in the order SerializeSlices writes them.
enum Field { kVendor, kParent, kProfile, kDevice, kInstance, kSubInstance, kMemory, kJobDevice, kFieldCount };
constexpr const char* kFieldNames[kFieldCount] = {"vendor",   "parent",       "profile", "device",
                                                  "instance", "sub_instance", "memory",  "job_device"};
constexpr char kKnownFields[] = "vendor, parent, profile, device, instance, sub_instance, memory, job_device";

// Parses the fields of one "slice" line (after the keyword) into *s; an
// error message (without the location) when they are not right.
std::string ParseSliceFields(std::istringstream& words, HardwareSlice* s) {
  bool seen[kFieldCount] = {};
  std::string field;
  while (words >> field) {
    const size_t eq = field.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == field.size())
      return "\"" + field + "\" is not KEY=VALUE";
    const std::string key = field.substr(0, eq);
    int f = 0;
    while (f < kFieldCount && key != kFieldNames[f]) ++f;
    if (f == kFieldCount) return "unknown field \"" + key + "\" (known: " + kKnownFields + ")";
    if (seen[f]) return "field \"" + key + "\" given twice";
    seen[f] = true;
    std::string value;
    if (!Decode(field.substr(eq + 1), &value))
      return key + "=" + field.substr(eq + 1) + " is badly encoded (% must be followed by two hex digits)";
    uint64_t n = 0;
    switch (static_cast<Field>(f)) {
      case kVendor:
        s->vendor = Lower(value);
        if (s->vendor != "nvidia" && s->vendor != "ascend")
          return "vendor=" + value + " is not a slicing vendor (known: nvidia, ascend)";
        break;
      case kParent: s->parent = value; break;
      case kProfile: s->profile = value; break;
      case kDevice: s->device = value; break;
      case kInstance:
      case kSubInstance:
        if (!ParseU64(value, UINT32_MAX, &n)) return key + "=" + value + " is not an id (0..4294967295)";
        (f == kInstance ? s->instance : s->sub_instance) = static_cast<uint32_t>(n);
        break;
      case kMemory:
        if (!ParseU64(value, UINT64_MAX, &s->memory_bytes)) return "memory=" + value + " is not a byte count";
        break;
      case kJobDevice:
        if (!ParseU64(value, UINT32_MAX, &n)) return "job_device=" + value + " is not a device index";
        s->job_device = static_cast<uint32_t>(n);
        break;
      case kFieldCount: break;
    }
  }
  std::string missing;
  for (int f = 0; f < kFieldCount; ++f)
    if (!seen[f]) missing += std::string(missing.empty() ? "" : ", ") + kFieldNames[f] + "=";
  if (!missing.empty()) return "a slice needs " + missing + " (every field of the format)";
  // Only a partial slice (recorded before its compute instance was known)
  // has no device yet.
  const bool partial = s->sub_instance == kUnknownSubInstance;
  if (s->parent.empty() || s->profile.empty() || (s->device.empty() && !partial))
    return "parent=, profile= and device= must not be empty";
  return "";
}

}  // namespace

std::string SerializeSlices(const std::vector<HardwareSlice>& slices) {
  std::ostringstream o;
  o << kHeader << " " << kSlicesVersion << "\n";
  for (const HardwareSlice& s : slices) {
    o << "slice vendor=" << Encode(s.vendor) << " parent=" << Encode(s.parent) << " profile=" << Encode(s.profile)
      << " device=" << Encode(s.device) << " instance=" << s.instance << " sub_instance=" << s.sub_instance
      << " memory=" << s.memory_bytes << " job_device=" << s.job_device << "\n";
  }
  return o.str();
}

Result<std::vector<HardwareSlice>> ParseSlices(const std::string& text, const std::string& source) {
  using R = Result<std::vector<HardwareSlice>>;
  std::vector<HardwareSlice> out;
  std::istringstream in(text), words;
  std::string key;
  int line_no = 0;
  bool have_version = false;
  while (NextRecord(in, &line_no, &words, &key)) {
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    if (!have_version && key != kHeader)
      return R::Error(where + "not a vgpu slices file (the first line must be \"" + kHeader + " " +
                      std::to_string(kSlicesVersion) + "\"); it is written by vgpu-prolog");
    if (key == kHeader) {
      std::string value, extra;
      uint64_t v = 0;
      if (have_version) return R::Error(where + "\"" + kHeader + "\" twice");
      if (!(words >> value) || !ParseU64(value, 1000, &v) || v != kSlicesVersion || (words >> extra))
        return R::Error(where + "version \"" + value + "\" is not " + std::to_string(kSlicesVersion) +
                        "; the prolog and epilog are from different releases (remove the slices by hand: "
                        "nvidia-smi mig -dci/-dgi, npu-smi set -t destroy-vnpu)");
      have_version = true;
    } else if (key == "slice") {
      HardwareSlice s;
      const std::string error = ParseSliceFields(words, &s);
      if (!error.empty()) return R::Error(where + error);
      for (const HardwareSlice& o : out) {
        if (o.vendor == s.vendor && o.parent == s.parent && o.instance == s.instance &&
            o.sub_instance == s.sub_instance)
          return R::Error(where + "slice " + s.vendor + " " + s.parent + " instance " +
                          std::to_string(s.instance) + "/" + std::to_string(s.sub_instance) + " listed twice");
      }
      out.push_back(std::move(s));
    } else {
      return R::Error(where + "unknown record \"" + key + "\" (known: " + kHeader + ", slice)");
    }
  }
  if (!have_version)
    return R::Error(source + ": empty; a slices file starts with \"" + kHeader + " " +
                    std::to_string(kSlicesVersion) + "\"");
  return out;
}

std::string JobSlicesPath(const std::string& run_dir, uint32_t job_id) {
  return JobRunDir(run_dir, job_id) + ".slices";
}

Result<std::vector<HardwareSlice>> JobSlices(const std::string& run_dir, uint32_t job_id) {
  const std::string path = JobSlicesPath(run_dir, job_id);
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 && errno == ENOENT) return std::vector<HardwareSlice>();
  auto text = ReadTextFile(path);
  if (!text.ok()) return Result<std::vector<HardwareSlice>>::Error(text.message());
  return ParseSlices(*text, path);
}

}  // namespace vgpu

#include "config/vgpu_request.h"

#include <cctype>
#include <sstream>

#include "util/text.h"

namespace vgpu {
namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

// "10", "2k": the count, or false when `s` is not a count.
bool ParseCount(const std::string& s, uint64_t* out) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  size_t i = 0;
  uint64_t n = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    if (n > (UINT64_MAX - 9) / 10) return false;
    n = n * 10 + static_cast<uint64_t>(s[i++] - '0');
  }
  uint64_t scale = 1;
  if (i < s.size()) {
    switch (std::tolower(static_cast<unsigned char>(s[i++]))) {
      case 'k': scale = 1024; break;
      case 'm': scale = 1024 * 1024; break;
      case 'g': scale = 1024ull * 1024 * 1024; break;
      default: return false;
    }
  }
  if (i != s.size() || n > UINT64_MAX / scale) return false;
  *out = n * scale;
  return true;
}

std::string Show(const VgpuAsk& a) {
  return "vgpu" + (a.type.empty() ? "" : ":" + a.type) + ":" + std::to_string(a.count);
}

}  // namespace

Result<std::vector<VgpuAsk>> ParseVgpuTres(const std::string& tres) {
  std::vector<VgpuAsk> out;
  for (std::string entry : Split(tres, ',')) {
    entry = Trim(entry);
    if (entry.rfind("gres:", 0) == 0 || entry.rfind("gres/", 0) == 0) entry = entry.substr(5);
    std::vector<std::string> parts = Split(entry, ':');
    if (parts.empty() || Lower(parts[0]) != "vgpu") continue;
    VgpuAsk ask;
    ask.count = 1;
    if (parts.size() > 3)
      return Result<std::vector<VgpuAsk>>::Error("cannot read \"" + entry +
                                                 "\": expected vgpu[:type][:count]");
    if (parts.size() >= 2) {
      uint64_t n = 0;
      if (ParseCount(parts.back(), &n)) {
        ask.count = n;
        if (parts.size() == 3) ask.type = parts[1];
      } else if (parts.size() == 2) {
        ask.type = parts[1];
      } else {
        return Result<std::vector<VgpuAsk>>::Error("cannot read \"" + entry + "\": \"" +
                                                   parts.back() + "\" is not a count");
      }
    }
    out.push_back(ask);
  }
  return out;
}

std::vector<std::string> VgpuTypesOfGres(const std::string& gres) {
  std::vector<std::string> types;
  for (const std::string& entry : Split(gres, ',')) {
    std::vector<std::string> parts = Split(Trim(entry), ':');
    // "vgpu:type:count" or "vgpu:type" (a count-less "vgpu:count" has no type)
    uint64_t n = 0;
    if (parts.size() >= 2 && Lower(parts[0]) == "vgpu" && !ParseCount(parts[1], &n))
      types.push_back(Lower(parts[1]));
  }
  return types;
}

Status CheckVgpuSubmission(const JobTres& tres, uint32_t s,
                           const std::set<std::string>& known_types) {
  const std::string per_node_hint =
      " vgpu shares are asked per node: use --gres=vgpu[:type]:N (N <= " + std::to_string(s) +
      " for part of one device, or a multiple of " + std::to_string(s) + " for whole devices)";
  struct Form {
    const std::string* text;
    const char* what;
  };
  for (const Form& f : {Form{&tres.per_job, "per job (--gpus/--tres-per-job)"},
                        Form{&tres.per_socket, "per socket (--gpus-per-socket)"},
                        Form{&tres.per_task, "per task (--gpus-per-task/--tres-per-task)"}}) {
    auto asks = ParseVgpuTres(*f.text);
    if (!asks.ok()) return Status::Error("vgpu: " + asks.message());
    if (!asks->empty())
      return Status::Error("vgpu: " + Show(asks->front()) + " " + f.what +
                           " cannot be honoured;" + per_node_hint);
  }
  auto asks = ParseVgpuTres(tres.per_node);
  if (!asks.ok()) return Status::Error("vgpu: " + asks.message());
  for (const VgpuAsk& a : *asks) {
    if (a.count > s && a.count % s != 0) {
      uint64_t down = a.count / s * s, up = down + s;
      return Status::Error("vgpu: " + Show(a) + " asks for more than one device (" +
                           std::to_string(s) + " shares) but not a whole number of devices; ask " +
                           std::to_string(s) + " or fewer shares of one device, or " +
                           std::to_string(down) + " or " + std::to_string(up) +
                           " for whole devices");
    }
    if (!a.type.empty() && !known_types.empty() && !known_types.count(Lower(a.type))) {
      std::string list;
      for (const auto& t : known_types) list += (list.empty() ? "" : ", ") + t;
      return Status::Error("vgpu: no node has vgpu type \"" + a.type + "\" (types: " + list +
                           "); ask one of those, or --gres=vgpu:N for any type");
    }
  }
  return Status::Ok();
}

}  // namespace vgpu

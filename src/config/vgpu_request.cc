#include "config/vgpu_request.h"

#include <algorithm>
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

// A field meant as a count: it starts as a number would.
bool LooksNumeric(const std::string& s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+' || s[0] == '.');
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
      } else if (parts.size() == 2 && !LooksNumeric(parts[1])) {
        ask.type = parts[1];
      } else if (LooksNumeric(parts.back())) {
        return Result<std::vector<VgpuAsk>>::Error("cannot read \"" + entry + "\": \"" + parts.back() +
                                                   "\" is not a count; vgpu shares are a whole number, 1 or more");
      } else {
        return Result<std::vector<VgpuAsk>>::Error("cannot read \"" + entry + "\": \"" +
                                                   parts.back() + "\" is not a count");
      }
    }
    out.push_back(ask);
  }
  return out;
}

std::map<std::string, uint64_t> VgpuCountsOfGres(const std::string& gres) {
  std::map<std::string, uint64_t> counts;
  for (std::string entry : Split(gres, ',')) {
    entry = Trim(entry.substr(0, entry.find('(')));  // "(S:0-1)": sockets
    std::vector<std::string> parts = Split(entry, ':');
    if (parts.empty() || Lower(parts[0]) != "vgpu") continue;
    uint64_t n = 1;
    std::string type;
    if (parts.size() >= 2 && !ParseCount(parts.back(), &n)) n = 1;
    if (parts.size() == 3 || (parts.size() == 2 && !ParseCount(parts[1], &n))) type = Lower(parts[1]);
    counts[type] += n;
  }
  return counts;
}

void VgpuCapacity::AddNode(const std::string& gres) {
  uint64_t total = 0;
  for (const auto& [type, n] : VgpuCountsOfGres(gres)) {
    if (!type.empty()) most_by_type_[type] = std::max(most_by_type_[type], n);
    total += n;
  }
  most_total_ = std::max(most_total_, total);
}

uint64_t VgpuCapacity::MostOnOneNode(const std::string& type) const {
  if (type.empty()) return most_total_;
  auto it = most_by_type_.find(Lower(type));
  return it == most_by_type_.end() ? 0 : it->second;
}

Status CheckVgpuSubmission(const JobTres& tres, uint32_t s, const VgpuCapacity& nodes) {
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
  if (asks->size() > 1) {
    const VgpuAsk &a = (*asks)[0], &b = (*asks)[1];
    if (Lower(a.type) == Lower(b.type))
      return Status::Error("vgpu: " + Show(a) + " and " + Show(b) + " ask for vgpu twice; ask once with the total (" +
                           Show(VgpuAsk{a.type, a.count + b.count}) + ")");
    return Status::Error("vgpu: " + Show(a) + " and " + Show(b) +
                         " ask for two vgpu requests on one node; a job step takes one: ask one type, or submit "
                         "a heterogeneous job with one component per type (sbatch --gres=" + Show(a) +
                         " : --gres=" + Show(b) + ")");
  }
  for (const VgpuAsk& a : *asks) {
    // What nodes have, first: a count past every node is not fixed by
    // rounding it to whole devices.
    const bool typed_known = !a.type.empty() && nodes.most_by_type().count(Lower(a.type));
    if (!a.type.empty() && !nodes.most_by_type().empty() && !typed_known) {
      std::string list;
      for (const auto& t : nodes.most_by_type()) list += (list.empty() ? "" : ", ") + t.first;
      return Status::Error("vgpu: no node has vgpu type \"" + a.type + "\" (types: " + list +
                           "); ask one of those, or --gres=vgpu:N for any type");
    }
    const uint64_t most = nodes.empty() ? UINT64_MAX : nodes.MostOnOneNode(a.type);
    if (a.count > most && (a.type.empty() || typed_known)) {
      return Status::Error("vgpu: " + Show(a) + " asks for more than any node has: the most is " +
                           std::to_string(most) + " shares (" + std::to_string(most / s) + " devices of " +
                           std::to_string(s) + ") on one node" + (a.type.empty() ? "" : " of type " + Lower(a.type)) +
                           "; shares are asked per node: for more, ask more nodes (-N)");
    }
    if (a.count > s && a.count % s != 0) {
      const uint64_t down = a.count / s * s, up = down + s;
      return Status::Error("vgpu: " + Show(a) + " asks for more than one device (" + std::to_string(s) +
                           " shares) but not a whole number of devices; ask " + std::to_string(s) +
                           " or fewer shares of one device, or " + std::to_string(down) +
                           (up <= most ? " or " + std::to_string(up) : "") + " for whole devices");
    }
  }
  return Status::Ok();
}

}  // namespace vgpu

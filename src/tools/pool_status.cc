// Building vgpuctl status's view of the pool (see pool_status.h).
#include "pool_status.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "slurm_json.h"
#include "util/text.h"

namespace vgpu::status {

namespace {

using slurm_json::Get;
using slurm_json::StringOr;
using slurm_json::Strings;
using slurm_json::Whole;

constexpr char kGresName[] = "vgpu";

// Splits at `sep` outside parentheses.
std::vector<std::string> SplitOutside(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth > 0) --depth;
    if (c == sep && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

bool ParseUint(const std::string& s, uint64_t* v) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18) return false;
  *v = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

// More bits than a node has GRES bits (Slurm's GRES bitmaps stay far
// below), or more node names than a cluster has: input to refuse.
constexpr uint64_t kMaxBits = 1u << 16;
constexpr size_t kMaxHosts = 1u << 20;

// "0-9" as (0, 9); false when malformed or reversed.
bool ParseRange(const std::string& part, uint64_t* lo, uint64_t* hi) {
  const size_t dash = part.find('-');
  if (!ParseUint(part.substr(0, dash), lo)) return false;
  *hi = *lo;
  if (dash != std::string::npos && !ParseUint(part.substr(dash + 1), hi)) return false;
  return *hi >= *lo;
}

// "0-9,20-29" into numbers; false when malformed or over kMaxBits.
bool ParseRanges(const std::string& text, std::vector<uint64_t>* out) {
  for (const std::string& part : SplitOutside(text, ',')) {
    uint64_t lo = 0, hi = 0;
    if (!ParseRange(part, &lo, &hi) || hi - lo >= kMaxBits || out->size() + (hi - lo) >= kMaxBits) return false;
    for (uint64_t v = lo; v <= hi; ++v) out->push_back(v);
  }
  return true;
}

// State as one word: "mixed", "idle+drain".
std::string StateOf(const Json::Value& node) {
  std::vector<std::string> parts = Strings(Get(node, "state"));
  for (const std::string& f : Strings(Get(node, "state_flags"))) parts.push_back(f);
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "+") + Lower(p);
  return out;
}

// "n2" before "n10": runs of digits compare as numbers.
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const std::string x = a.substr(i, ie - i), y = b.substr(j, je - j);
      const size_t xs = x.find_first_not_of('0'), ys = y.find_first_not_of('0');
      const std::string xn = xs == std::string::npos ? "" : x.substr(xs);
      const std::string yn = ys == std::string::npos ? "" : y.substr(ys);
      if (xn.size() != yn.size()) return xn.size() < yn.size();
      if (xn != yn) return xn < yn;
      i = ie, j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i, ++j;
  }
  return a.size() - i < b.size() - j;
}

Result<Json::Value> Document(const std::string& text, const char* what, const char* key) {
  if (Trim(text).empty()) return Result<Json::Value>::Error(std::string(what) + " is empty");
  Result<Json::Value> doc = slurm_json::Parse(text);
  if (!doc.ok()) return Result<Json::Value>::Error(std::string(what) + " is not JSON: " + doc.message());
  const std::string errors = slurm_json::Errors(*doc);
  if (!errors.empty()) return Result<Json::Value>::Error(std::string(what) + " reports: " + errors);
  if (!Get(*doc, key).isArray())
    return Result<Json::Value>::Error(std::string(what) + " has no \"" + key + "\" array");
  return doc;
}

// The vgpu part of a job's tres_per_node ("gres:vgpu:ascend:10" until
// 23.11, "gres/vgpu:ascend:10" from 24.11 on): type and shares per node.
bool PendingRequest(const std::string& tres_per_node, std::string* type, uint64_t* shares) {
  for (std::string entry : SplitOutside(tres_per_node, ',')) {
    entry = Trim(entry);
    for (const char* prefix : {"gres:", "gres/"})
      if (entry.rfind(prefix, 0) == 0) entry = entry.substr(5);
    std::vector<std::string> f = SplitOutside(entry, ':');
    if (f.empty() || f[0] != kGresName) continue;
    if (f.size() == 2 && ParseUint(f[1], shares)) {
      type->clear();
      return true;
    }
    if (f.size() == 3 && ParseUint(f[2], shares)) {
      *type = f[1];
      return true;
    }
  }
  return false;
}

}  // namespace

uint64_t DeviceStatus::memory_quota() const {
  if (!shares || !memory_bytes) return 0;
  return static_cast<uint64_t>(static_cast<long double>(memory_bytes) * allocated / shares);
}

std::vector<GresEntry> ParseGres(const std::string& text) {
  std::vector<GresEntry> out;
  if (Trim(text).empty() || text == "(null)") return out;
  for (std::string entry : SplitOutside(text, ',')) {
    entry = Trim(entry);
    GresEntry g;
    std::string detail;
    const size_t paren = entry.find('(');
    if (paren != std::string::npos) {
      const size_t close = entry.rfind(')');
      if (close == std::string::npos || close < paren) continue;
      detail = entry.substr(paren + 1, close - paren - 1);
      entry = entry.substr(0, paren);
    }
    std::vector<std::string> f = SplitOutside(entry, ':');
    if (f.size() < 2 || f.size() > 3 || !ParseUint(f.back(), &g.count)) continue;
    g.name = f[0];
    if (f.size() == 3) g.type = f[1];
    bool ok = true;
    // "S:0-1" and "IDX:0-9,20-29": the comma split cuts the ranges apart,
    // so a piece without a key continues the last key's list.
    std::string key;
    for (const std::string& d : SplitOutside(detail, ',')) {
      std::string value = d;
      const size_t colon = d.find(':');
      if (colon != std::string::npos) key = d.substr(0, colon), value = d.substr(colon + 1);
      if (value.empty() || value == "N/A") continue;
      if (key == "S") g.sockets += (g.sockets.empty() ? "" : ",") + value;
      else if (key == "IDX") ok &= ParseRanges(value, &g.bits);
    }
    if (ok) out.push_back(std::move(g));
  }
  return out;
}

std::vector<std::string> ExpandHostlist(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& item : SplitOutside(Trim(text), ',')) {
    if (out.size() >= kMaxHosts) break;
    const size_t open = item.find('[');
    const size_t close = item.find(']');
    if (open == std::string::npos || close == std::string::npos || close < open) {
      if (!item.empty()) out.push_back(item);
      continue;
    }
    const std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
    for (const std::string& range : SplitOutside(item.substr(open + 1, close - open - 1), ',')) {
      const std::string lo_text = range.substr(0, range.find('-'));
      uint64_t lo = 0, hi = 0;
      if (!ParseRange(range, &lo, &hi)) continue;
      for (uint64_t v = lo; v <= hi && out.size() < kMaxHosts; ++v) {
        std::string num = std::to_string(v);
        if (num.size() < lo_text.size()) num.insert(0, lo_text.size() - num.size(), '0');  // n[01-10]
        out.push_back(prefix + num + suffix);
      }
    }
  }
  return out;
}

uint64_t ArrayTaskCount(const std::string& text) {
  const std::string list = Trim(text.substr(0, text.find('%')));
  if (list.empty()) return 1;
  uint64_t count = 0;
  for (std::string part : SplitOutside(list, ',')) {
    const size_t colon = part.find(':');  // "0-99:2": a step
    uint64_t step = 1, lo = 0, hi = 0;
    if (colon != std::string::npos) {
      if (!ParseUint(part.substr(colon + 1), &step) || step == 0) return 1;
      part = part.substr(0, colon);
    }
    if (!ParseRange(part, &lo, &hi)) return 1;
    count += (hi - lo) / step + 1;
  }
  return count ? count : 1;
}

Result<PoolStatus> ReadPool(const std::string& nodes_json, const std::string& jobs_json,
                            uint32_t shares_per_device, const ModelTable& models) {
  if (shares_per_device == 0) return Result<PoolStatus>::Error("SharesPerDevice is 0");
  Result<Json::Value> nodes = Document(nodes_json, "the node list", "nodes");
  if (!nodes.ok()) return nodes.status();
  Result<Json::Value> jobs = Document(jobs_json, "the job list", "jobs");
  if (!jobs.ok()) return jobs.status();

  PoolStatus pool;
  pool.shares_per_device = shares_per_device;
  const uint32_t s = shares_per_device;
  std::map<std::string, TypeStatus> types;
  std::map<std::string, size_t> node_at;
  for (const Json::Value& n : (*nodes)["nodes"]) {
    NodeStatus node;
    node.name = StringOr(Get(n, "name"));
    if (node.name.empty()) continue;
    node.state = StateOf(n);
    node.reason = StringOr(Get(n, "reason"));
    node.partitions = Strings(Get(n, "partitions"));
    uint64_t first_bit = 0;
    for (const GresEntry& g : ParseGres(StringOr(Get(n, "gres")))) {
      if (g.name != kGresName) continue;
      if (g.count % s) {
        pool.notes.push_back(node.name + ": vgpu:" + g.type + ":" + std::to_string(g.count) +
                             " is not a whole number of devices of " + std::to_string(s) + " shares");
      }
      auto model = models.find(Lower(g.type));
      for (uint64_t d = 0; d < g.count / s && first_bit / s + d < kMaxBits; ++d) {
        DeviceStatus dev;
        dev.index = static_cast<uint32_t>(first_bit / s + d);
        dev.type = g.type;
        dev.sockets = g.sockets;
        dev.shares = s;
        if (model != models.end()) dev.model = model->second.first, dev.memory_bytes = model->second.second;
        node.devices.push_back(std::move(dev));
      }
      TypeStatus& t = types[g.type];
      t.type = g.type;
      t.shares += g.count / s * s;
      first_bit += g.count;
    }
    if (node.devices.empty()) continue;
    for (const GresEntry& g : ParseGres(StringOr(Get(n, "gres_used")))) {
      if (g.name != kGresName) continue;
      for (uint64_t bit : g.bits)
        if (bit / s < node.devices.size()) ++node.devices[bit / s].allocated;
    }
    for (const DeviceStatus& d : node.devices) types[d.type].allocated += d.allocated;
    node_at[node.name] = pool.nodes.size();
    pool.nodes.push_back(std::move(node));
  }

  for (const Json::Value& j : (*jobs)["jobs"]) {
    const std::vector<std::string> states = Strings(Get(j, "job_state"));
    const std::string state = states.empty() ? "" : states[0];
    const uint64_t id = Whole(Get(j, "job_id")).value_or(0);
    if (state == "PENDING") {
      std::string type;
      uint64_t per_node = 0;
      if (!PendingRequest(StringOr(Get(j, "tres_per_node")), &type, &per_node)) continue;
      const uint64_t nodes_asked = std::max<uint64_t>(1, Whole(Get(j, "node_count")).value_or(1));
      const uint64_t tasks = ArrayTaskCount(StringOr(Get(j, "array_task_string")));
      const uint64_t shares = per_node * nodes_asked * tasks;
      if (type.empty()) pool.pending_untyped += shares;
      else types[type].type = type, types[type].pending += shares;
      continue;
    }
    if (state != "RUNNING" && state != "SUSPENDED" && state != "COMPLETING") continue;
    const std::vector<std::string> names = ExpandHostlist(StringOr(Get(j, "nodes")));
    const std::vector<std::string> detail = Strings(Get(j, "gres_detail"));
    for (size_t i = 0; i < names.size() && i < detail.size(); ++i) {
      auto at = node_at.find(names[i]);
      if (at == node_at.end()) continue;
      NodeStatus& node = pool.nodes[at->second];
      std::map<size_t, uint32_t> per_device;
      for (const GresEntry& g : ParseGres(detail[i]))
        if (g.name == kGresName)
          for (uint64_t bit : g.bits)
            if (bit / s < node.devices.size()) ++per_device[bit / s];
      for (const auto& [d, count] : per_device)
        node.devices[d].jobs.push_back({id, StringOr(Get(j, "user_name")), count});
    }
  }
  std::sort(pool.nodes.begin(), pool.nodes.end(),
            [](const NodeStatus& a, const NodeStatus& b) { return NaturalLess(a.name, b.name); });
  for (auto& [name, t] : types) pool.types.push_back(t);
  return pool;
}

}  // namespace vgpu::status

// vgpuctl status's table, JSON and SVG (see status_format.h).
#include "status_format.h"

#include <json/json.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "svg_plot.h"

namespace vgpu::status {

namespace {

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string Or(const std::string& s, const char* fallback) { return s.empty() ? fallback : s; }

std::string GiB(uint64_t bytes, bool known) {
  if (!known) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fGiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// Columns padded to their widest cell; numbers right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> head, std::vector<bool> right)
      : right_(std::move(right)) { rows_.push_back(std::move(head)); }
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const {
    std::vector<size_t> width(rows_[0].size(), 0);
    for (const auto& r : rows_)
      for (size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
    std::string out;
    for (const auto& r : rows_) {
      std::string line;
      for (size_t c = 0; c < r.size() && c < width.size(); ++c) {
        const std::string pad(width[c] - r[c].size(), ' ');
        const bool last = c + 1 == r.size();
        line += right_[c] ? pad + r[c] : (last ? r[c] : r[c] + pad);
        if (!last) line += "  ";
      }
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// CPUs near the device: its own (inventory) or its type's sockets (Slurm).
std::string Locality(const DeviceStatus& d) {
  if (!d.cpus.empty()) return "cpus " + d.cpus;
  if (!d.sockets.empty()) return "sockets " + d.sockets;
  return "-";
}

std::string JobsCell(const DeviceStatus& d) {
  std::string out;
  for (const DeviceJob& j : d.jobs)
    out += (out.empty() ? "" : " ") + std::to_string(j.job_id) + ":" + Or(j.user, "?") + ":" +
           std::to_string(j.shares);
  return Or(out, "-");
}

}  // namespace

std::string FormatTable(const PoolStatus& pool) {
  size_t devices = 0;
  for (const NodeStatus& n : pool.nodes) devices += n.devices.size();
  std::ostringstream o;
  o << "vgpu pool: " << pool.nodes.size() << " node(s), " << devices << " device(s) of "
    << pool.shares_per_device << " shares\n\n";
  Table types({"TYPE", "SHARES", "ALLOCATED", "FREE", "FREE%", "PENDING"},
              {false, true, true, true, true, true});
  for (const TypeStatus& t : pool.types)
    types.Add({Or(t.type, "(untyped)"), std::to_string(t.shares), std::to_string(t.allocated),
               std::to_string(t.free()), t.shares ? std::to_string(t.free() * 100 / t.shares) + "%" : "-",
               std::to_string(t.pending)});
  o << types.Render();
  if (pool.pending_untyped) o << "pending jobs of any type ask " << pool.pending_untyped << " shares\n";
  o << "\n";
  Table nodes({"NODE", "STATE", "PARTITIONS", "DEV", "TYPE", "MODEL", "LOCAL", "USED", "FREE", "QUOTA", "JOBS"},
              {false, false, false, true, false, false, false, true, true, true, false});
  for (const NodeStatus& n : pool.nodes)
    for (const DeviceStatus& d : n.devices)
      nodes.Add({n.name, Or(n.state, "-"), Or(Join(n.partitions, ","), "-"), std::to_string(d.index),
                 Or(d.type, "-"), Or(d.model, "-"), Locality(d), std::to_string(d.allocated),
                 std::to_string(d.free()), GiB(d.memory_quota(), d.memory_bytes > 0), JobsCell(d)});
  o << nodes.Render();
  for (const std::string& note : pool.notes) o << "note: " << note << "\n";
  return o.str();
}

std::string FormatJson(const PoolStatus& pool) {
  Json::Value root(Json::objectValue);
  root["version"] = kJsonVersion;
  root["shares_per_device"] = pool.shares_per_device;
  root["types"] = Json::Value(Json::arrayValue);
  for (const TypeStatus& t : pool.types) {
    Json::Value v(Json::objectValue);
    v["type"] = t.type;
    v["shares"] = Json::UInt64(t.shares);
    v["allocated"] = Json::UInt64(t.allocated);
    v["free"] = Json::UInt64(t.free());
    v["pending"] = Json::UInt64(t.pending);
    root["types"].append(v);
  }
  root["pending_untyped"] = Json::UInt64(pool.pending_untyped);
  root["nodes"] = Json::Value(Json::arrayValue);
  for (const NodeStatus& n : pool.nodes) {
    Json::Value node(Json::objectValue);
    node["name"] = n.name;
    node["state"] = n.state;
    node["reason"] = n.reason;
    node["partitions"] = Json::Value(Json::arrayValue);
    for (const std::string& p : n.partitions) node["partitions"].append(p);
    node["devices"] = Json::Value(Json::arrayValue);
    for (const DeviceStatus& d : n.devices) {
      Json::Value dev(Json::objectValue);
      dev["index"] = d.index;
      dev["type"] = d.type;
      dev["model"] = d.model;
      dev["sockets"] = d.sockets;
      dev["cpus"] = d.cpus;
      dev["shares"] = d.shares;
      dev["allocated"] = d.allocated;
      dev["free"] = d.free();
      dev["memory_bytes"] = Json::UInt64(d.memory_bytes);
      dev["memory_quota_bytes"] = Json::UInt64(d.memory_quota());
      dev["jobs"] = Json::Value(Json::arrayValue);
      for (const DeviceJob& j : d.jobs) {
        Json::Value job(Json::objectValue);
        job["job_id"] = Json::UInt64(j.job_id);
        job["user"] = j.user;
        job["shares"] = j.shares;
        dev["jobs"].append(job);
      }
      node["devices"].append(dev);
    }
    root["nodes"].append(node);
  }
  root["notes"] = Json::Value(Json::arrayValue);
  for (const std::string& note : pool.notes) root["notes"].append(note);
  Json::StreamWriterBuilder b;
  b["indentation"] = " ";
  return Json::writeString(b, root) + "\n";
}

std::string RenderPoolSvg(const PoolStatus& pool) {
  constexpr int kRow = 18, kCell = 34, kGap = 3, kLabel = 110, kTop = 56, kMargin = 12;
  size_t most = 1;
  for (const NodeStatus& n : pool.nodes) most = std::max(most, n.devices.size());
  std::map<std::string, size_t> colour;
  for (const TypeStatus& t : pool.types) colour.emplace(t.type, colour.size());
  for (const NodeStatus& n : pool.nodes)
    for (const DeviceStatus& d : n.devices) colour.emplace(d.type, colour.size());
  const int width = std::max<int>(420, kMargin * 2 + kLabel + static_cast<int>(most) * (kCell + kGap));
  const int height = kTop + static_cast<int>(pool.nodes.size()) * kRow + kMargin + 4;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
    << "<title>vgpu pool</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << kMargin << "\" y=\"18\" font-size=\"14\" font-weight=\"bold\">vgpu pool: "
    << pool.nodes.size() << " node(s), shares allocated per device (of " << pool.shares_per_device
    << ")</text>\n";
  int x = kMargin;
  for (const auto& [type, k] : colour) {
    o << "<rect x=\"" << x << "\" y=\"28\" width=\"12\" height=\"12\" fill=\"" << sim::PaletteColor(k)
      << "\"/><text x=\"" << x + 16 << "\" y=\"38\">" << sim::SvgEscape(Or(type, "(untyped)")) << "</text>\n";
    x += 24 + 7 * static_cast<int>(std::max<size_t>(type.size(), 9));
  }
  int y = kTop;
  for (const NodeStatus& n : pool.nodes) {
    o << "<g class=\"node\" data-node=\"" << sim::SvgEscape(n.name) << "\">\n<text x=\"" << kMargin << "\" y=\""
      << y + kRow - 5 << "\">" << sim::SvgEscape(n.name) << "</text>\n";
    for (size_t i = 0; i < n.devices.size(); ++i) {
      const DeviceStatus& d = n.devices[i];
      const int cx = kMargin + kLabel + static_cast<int>(i) * (kCell + kGap);
      const int filled = d.shares ? static_cast<int>(static_cast<long>(kCell) * d.allocated / d.shares) : 0;
      const char* c = sim::PaletteColor(colour[d.type]);
      o << "<g class=\"device\" data-type=\"" << sim::SvgEscape(d.type) << "\" data-allocated=\"" << d.allocated
        << "\" data-shares=\"" << d.shares << "\"><title>" << sim::SvgEscape(n.name) << " device " << d.index
        << " (" << sim::SvgEscape(Or(d.model, d.type.c_str())) << "): " << d.allocated << "/" << d.shares
        << " shares, jobs " << sim::SvgEscape(JobsCell(d)) << "</title>"
        << "<rect x=\"" << cx << "\" y=\"" << y + 2 << "\" width=\"" << kCell << "\" height=\"" << kRow - 4
        << "\" fill=\"" << c << "\" fill-opacity=\"0.15\" stroke=\"" << c << "\"/>";
      if (filled > 0)
        o << "<rect x=\"" << cx << "\" y=\"" << y + 2 << "\" width=\"" << filled << "\" height=\"" << kRow - 4
          << "\" fill=\"" << c << "\"/>";
      o << "</g>\n";
    }
    o << "</g>\n";
    y += kRow;
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace vgpu::status

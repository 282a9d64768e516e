#include "devices/share_layout.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>

#include "devices/file_range.h"
#include "util/text.h"

namespace vgpu {
namespace {

bool IsVgpu(const GresRecord& r) { return Lower(r.name) == kGresName; }

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Whether `file`'s name fits a catalog device_file pattern's
// ("/dev/nvidia%d": nvidia and one or more digits). Names only: device
// files may be bound elsewhere than /dev (containers, test labs).
bool MatchesDeviceFile(const std::string& pattern_path, const std::string& file_path) {
  const std::string pattern = pattern_path.substr(pattern_path.rfind('/') + 1);
  const std::string file = file_path.substr(file_path.rfind('/') + 1);
  const size_t d = pattern.find("%d");
  if (d == std::string::npos) return pattern == file;
  const std::string prefix = pattern.substr(0, d), suffix = pattern.substr(d + 2);
  if (file.size() <= prefix.size() + suffix.size() || file.compare(0, prefix.size(), prefix) != 0 ||
      file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  for (size_t i = prefix.size(); i < file.size() - suffix.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(file[i]))) return false;
  return true;
}

// A File= record of vgpu after validation: its devices, in file order.
struct DeviceGroup {
  size_t record;  // index into the merged list
  std::string type;
  std::vector<Device> devices;
  const GresConfLine* line;
};

class LayoutBuilder {
 public:
  LayoutBuilder(const std::vector<GresRecord>& merged, const ShareLayoutInput& in)
      : merged_(merged), in_(in) {}

  ShareLayout Build() {
    CollectGroups();
    CheckEachDeviceOnce();
    CheckTotals();
    CheckBitLimit();
    Emit();
    return std::move(out_);
  }

 private:
  std::string Describe(const GresRecord& r, const GresConfLine* line) const {
    std::string fallback = "Name=" + r.name + (r.type.empty() ? "" : " Type=" + r.type) +
                           (r.file.empty() ? "" : " File=" + r.file);
    return in_.locator ? in_.locator->Describe(line, fallback) : "gres.conf record (" + fallback + ")";
  }

  const GresConfLine* Locate(const GresRecord& r, const std::vector<std::string>& files) const {
    if (!in_.locator || files.empty()) return nullptr;
    return in_.locator->FindByFile(in_.node_name, r.name, files.front());
  }

  const Device* Discovered(const std::string& file) const {
    for (const Device& d : in_.discovered)
      if (!d.files.empty() && d.files.front() == file) return &d;
    return nullptr;
  }

  // The device for `file` of a record typed `type`: what discovery reported,
  // else what the catalog says when the type names a model, else a device
  // known only by its file (scheduling works, the memory quota is unknown).
  Result<Device> IdentifyDevice(const std::string& file, const std::string& type,
                                const std::string& where) {
    if (const Device* d = Discovered(file)) {
      if (Lower(d->gres_type) != Lower(type) && Lower(d->model_id) != Lower(type))
        return Result<Device>::Error(
            where + ": File=" + file + " is a " + d->name + " (Type=" + d->gres_type +
            "), not Type=" + type + "; fix Type= on that line");
      Device dev = *d;
      dev.gres_type = type;
      return dev;
    }
    // Not discovered: the catalog's device file patterns still tell an
    // nvidia file from an Ascend or DCU one.
    const ChipModel* other = nullptr;
    bool fits = false;
    for (const ChipModel& m : in_.catalog->models()) {
      if (!MatchesDeviceFile(m.device_file, file)) continue;
      if (Lower(m.gres_type) == Lower(type) || Lower(m.id) == Lower(type)) fits = true;
      else other = &m;
    }
    if (other && !fits)
      return Result<Device>::Error(where + ": File=" + file + " is the device file of " + other->gres_type +
                                   " devices (" + other->device_file + "), not Type=" + type +
                                   "; fix Type= or File= on that line");
    Device dev;
    dev.source = "gres.conf";
    dev.gres_type = type;
    dev.files = {file};
    if (const ChipModel* m = in_.catalog->FindById(type)) {
      dev.model_id = m->id;
      dev.memory_bytes = m->memory_bytes;
      dev.compute_units = m->compute_units;
      dev.visible_devices_env = m->visible_devices_env;
    } else {
      for (const ChipModel& m : in_.catalog->models())
        if (Lower(m.gres_type) == Lower(type)) dev.visible_devices_env = m.visible_devices_env;
      out_.notes.push_back("gres/vgpu: " + file +
                           " was not reported by device discovery; its memory quota is "
                           "unknown (set Inventory= in vgpu.conf, or install the vendor's "
                           "management library)");
    }
    // The vendor ordinal defaults to the number at the end of the file name;
    // a number too large for an ordinal leaves it unknown (-1) rather than
    // throwing out of the plugin (std::stoi did).
    size_t digits = file.find_last_not_of("0123456789");
    uint64_t ordinal = 0;
    if (digits != std::string::npos && digits + 1 < file.size() &&
        ParseU64(file.substr(digits + 1), INT32_MAX, &ordinal))
      dev.vendor_index = static_cast<int>(ordinal);
    return dev;
  }

  void CollectGroups() {
    for (size_t i = 0; i < merged_.size(); ++i) {
      const GresRecord& r = merged_[i];
      if (!IsVgpu(r)) continue;
      slurm_total_[Lower(r.type)] += r.count;
      type_spelling_.emplace(Lower(r.type), r.type);
      if (r.file.empty()) continue;  // Slurm's remainder record: dropped
      auto files = ExpandFileRange(r.file);
      if (!files.ok()) {
        Fail(Lower(r.type), Describe(r, nullptr) + ": " + files.message());
        continue;
      }
      const GresConfLine* line = Locate(r, *files);
      std::string where = Describe(r, line);
      if (r.type.empty()) {
        Fail("", "gres/vgpu: " + where + " has no Type=; add Type=<one of: " +
                     Join(in_.catalog->Types(), ", ") + "> and the same type in slurm.conf's Gres=");
        continue;
      }
      if (!in_.catalog->KnowsType(r.type)) {
        Fail(Lower(r.type), "gres/vgpu: " + where + ": Type=" + r.type +
                                " is not in the chip catalog (known types: " +
                                Join(in_.catalog->Types(), ", ") +
                                "); fix Type=, or add a chips.d/<model>.json whose gres_type is \"" +
                                r.type + "\"");
        continue;
      }
      DeviceGroup group{i, r.type, {}, line};
      bool ok = true;
      for (const std::string& f : *files) {
        if (!in_.file_exists(f)) {
          Fail(Lower(r.type), "gres/vgpu: " + where + ": device file " + f +
                                  " does not exist; fix File= or load the device driver");
          ok = false;
          break;
        }
        auto dev = IdentifyDevice(f, r.type, "gres/vgpu: " + where);
        if (!dev.ok()) {
          Fail(Lower(r.type), dev.message());
          ok = false;
          break;
        }
        group.devices.push_back(std::move(*dev));
      }
      if (ok) groups_.push_back(std::move(group));
    }
  }

  // A device file named twice on the node (twice on one File=, on two vgpu
  // lines, or on a vgpu line and another GRES's) would be shared twice over:
  // its type is refused, naming every gres.conf line that lists it.
  void CheckEachDeviceOnce() {
    std::map<std::string, std::vector<size_t>> records_of;  // file -> merged record indexes
    for (size_t i = 0; i < merged_.size(); ++i) {
      if (merged_[i].file.empty()) continue;
      auto files = ExpandFileRange(merged_[i].file);
      if (files.ok())
        for (const std::string& f : *files) records_of[f].push_back(i);
    }
    // Files named by the same records are reported together: a line
    // written twice is one mistake, not one per device.
    std::map<std::vector<size_t>, std::vector<std::string>> files_of;
    for (const auto& [file, records] : records_of) {
      if (records.size() < 2) continue;
      bool vgpu = false;
      for (size_t i : records) vgpu = vgpu || IsVgpu(merged_[i]);
      if (vgpu) files_of[records].push_back(file);  // else another GRES's business
    }
    for (const auto& [records, files] : files_of) {
      std::vector<std::string> where;
      auto add = [&where](std::string w) {
        if (std::find(where.begin(), where.end(), w) == where.end()) where.push_back(std::move(w));
      };
      if (in_.locator)
        for (const GresConfLine* line : in_.locator->AllByFile(in_.node_name, files.front()))
          add(in_.locator->Describe(line, ""));
      if (where.empty())  // lines the locator cannot see
        for (size_t i : records) add(Describe(merged_[i], Locate(merged_[i], {files.front()})));
      std::vector<std::string> shown(files.begin(), files.begin() + std::min<size_t>(files.size(), 3));
      if (files.size() > 3) shown.push_back("and " + std::to_string(files.size() - 3) + " more");
      const std::string what = files.size() == 1 ? "device file " + files.front() + " is"
                                                 : "device files " + Join(shown, ", ") + " are";
      out_.errors.push_back("gres/vgpu: node " + in_.node_name + ": " + what + " named " +
                            std::to_string(records.size()) + " times (" + Join(where, "; ") +
                            "); each device may be listed once, or its shares would be handed out twice: "
                            "remove the repeats");
      for (size_t i : records)
        if (IsVgpu(merged_[i])) failed_types_.insert(Lower(merged_[i].type));
    }
  }

  // Every device of a type has S shares, so slurm.conf must say devices x S.
  void CheckTotals() {
    std::map<std::string, uint64_t> devices_of_type;
    std::map<std::string, uint64_t> devices_on_lines;  // as written, for the fix
    for (const DeviceGroup& g : groups_) {
      devices_of_type[Lower(g.type)] += g.devices.size();
      devices_on_lines[Lower(g.type)] += g.line ? g.line->files.size() : g.devices.size();
    }
    for (const auto& [type, total] : slurm_total_) {
      if (failed_types_.count(type)) continue;
      uint64_t devices = devices_of_type[type];
      uint64_t want = devices_on_lines[type] * in_.shares_per_device;
      if (devices * in_.shares_per_device == total && devices_on_lines[type] == devices) continue;
      const std::string& spelled = type_spelling_[type];
      std::ostringstream msg;
      if (devices == 0) {
        msg << "gres/vgpu: node " << in_.node_name << ": slurm.conf has Gres=vgpu:" << spelled
            << ":" << total << " but gres.conf names no device for it; add a line like "
            << "\"NodeName=" << in_.node_name << " Name=vgpu Type=" << spelled
            << " File=/dev/<device>[0-N]\" (one share bit per share needs the device files)";
      } else {
        const GresConfLine* line = nullptr;
        for (const DeviceGroup& g : groups_)
          if (!line && Lower(g.type) == type) line = g.line;
        std::string where = line && in_.locator ? " (" + in_.locator->Describe(line, "") + ")" : "";
        msg << "gres/vgpu: node " << in_.node_name << ": gres.conf" << where << " lists "
            << devices_on_lines[type] << " " << spelled << " device(s) = " << want
            << " shares at SharesPerDevice=" << in_.shares_per_device
            << ", but slurm.conf says Gres=vgpu:" << spelled << ":" << total
            << "; set Gres=vgpu:" << spelled << ":" << want << " for NodeName="
            << in_.node_name;
      }
      Fail(type, msg.str());
    }
  }

  void CheckBitLimit() {
    uint64_t devices = 0;
    for (const DeviceGroup& g : groups_)
      if (!failed_types_.count(Lower(g.type))) devices += g.devices.size();
    if (devices * in_.shares_per_device <= kMaxGresBitsPerNode) return;
    uint32_t fit = static_cast<uint32_t>(kMaxGresBitsPerNode / devices);
    std::map<std::string, uint64_t> per_type;
    for (const DeviceGroup& g : groups_) per_type[g.type] += g.devices.size();
    std::string gres;
    for (const auto& [type, n] : per_type)
      gres += (gres.empty() ? "" : ",") + std::string("vgpu:") + type + ":" + std::to_string(n * fit);
    std::ostringstream msg;
    msg << "gres/vgpu: node " << in_.node_name << ": " << devices << " devices x "
        << in_.shares_per_device << " shares = " << devices * in_.shares_per_device
        << " GRES bits, more than the 1024 Slurm allows per node; set SharesPerDevice=" << fit
        << " (or less) in vgpu.conf and Gres=" << gres << " in slurm.conf";
    out_.errors.push_back(msg.str());
    for (const DeviceGroup& g : groups_) failed_types_.insert(Lower(g.type));
  }

  void Emit() {
    std::vector<ShareDevice> table;
    uint32_t next_bit = 0;
    for (size_t i = 0; i < merged_.size(); ++i) {
      const GresRecord& r = merged_[i];
      if (!IsVgpu(r)) {
        GresRecord copy = r;
        copy.origin = i;
        out_.records.push_back(copy);
        continue;
      }
      auto g = std::find_if(groups_.begin(), groups_.end(),
                            [i](const DeviceGroup& x) { return x.record == i; });
      if (g == groups_.end() || failed_types_.count(Lower(g->type))) continue;
      for (const Device& dev : g->devices) {
        GresRecord rec = r;
        rec.file = dev.files.front();
        if (rec.cpus.empty()) rec.machine_cpus = dev.cpus;
        rec.count = in_.shares_per_device;
        rec.origin = i;
        out_.records.push_back(rec);
        table.push_back({next_bit, in_.shares_per_device, dev});
        next_bit += in_.shares_per_device;
      }
    }
    out_.table = DeviceTable(std::move(table), in_.shares_per_device);
  }

  void Fail(const std::string& type, std::string message) {
    failed_types_.insert(type);
    out_.errors.push_back(std::move(message));
  }

  const std::vector<GresRecord>& merged_;
  const ShareLayoutInput& in_;
  ShareLayout out_;
  std::vector<DeviceGroup> groups_;
  std::map<std::string, uint64_t> slurm_total_;      // lower-case type -> slurm.conf count
  std::map<std::string, std::string> type_spelling_;  // lower-case type -> as written
  std::set<std::string> failed_types_;
};

}  // namespace

ShareLayout BuildShareLayout(const std::vector<GresRecord>& merged, const ShareLayoutInput& in) {
  return LayoutBuilder(merged, in).Build();
}

}  // namespace vgpu

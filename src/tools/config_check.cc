#include "config_check.h"

#include <sys/stat.h>

#include <cstdlib>
#include <map>

#include "conf_text.h"
#include "enforcement_check.h"
#include "config/vgpu_config.h"
#include "config/vgpu_request.h"
#include "devices/chip_catalog.h"
#include "devices/file_range.h"
#include "devices/gres_conf_locator.h"
#include "devices/share_layout.h"
#include "util/read_file.h"
#include "util/text.h"

namespace vgpu::check {
namespace {

// NodeName=... lines of slurm.conf: each node's Gres=, in order of first
// mention (NodeName=DEFAULT sets what later lines leave out).
std::vector<std::pair<std::string, std::string>> NodesOf(const std::string& slurm_conf_text) {
  std::vector<std::pair<std::string, std::string>> nodes;
  std::string default_gres;
  for (const std::string& line : ConfLines(slurm_conf_text)) {
    auto w = ConfWords(line);
    auto name = w.find("nodename");
    if (name == w.end()) continue;
    const std::string gres = w.count("gres") ? w["gres"] : default_gres;
    if (Lower(name->second) == "default") {
      default_gres = gres;
      continue;
    }
    auto expanded = ExpandFileRange(name->second);
    for (const std::string& n : expanded.ok() ? *expanded : std::vector<std::string>{name->second})
      nodes.emplace_back(n, gres);
  }
  return nodes;
}

// The records Slurm hands gres/vgpu on `node`: gres.conf's File= lines for
// the node, then per vgpu type what slurm.conf counts beyond them.
std::vector<GresRecord> RecordsOf(const std::string& node, const std::string& gres, const std::string& gres_conf_path,
                                  const std::vector<std::string>& gres_conf, std::vector<std::string>* mistakes) {
  std::vector<GresRecord> records;
  std::map<std::string, uint64_t> on_lines;  // vgpu type -> devices listed
  const auto counts = VgpuCountsOfGres(gres);
  for (size_t i = 0; i < gres_conf.size(); ++i) {
    auto w = ConfWords(gres_conf[i]);
    if (!w.count("name") || (!w.count("file") && !w.count("multiplefiles"))) continue;
    if (w.count("nodename")) {
      auto nodes = ExpandFileRange(w["nodename"]);
      bool mine = false;
      for (const std::string& n : nodes.ok() ? *nodes : std::vector<std::string>{w["nodename"]}) mine |= n == node;
      if (!mine) continue;
    }
    GresRecord r;
    r.name = w["name"];
    r.type = w.count("type") ? w["type"] : "";
    r.file = w.count("file") ? w["file"] : w["multiplefiles"];
    auto files = ExpandFileRange(r.file);
    r.count = files.ok() ? files->size() : 1;
    if (Lower(r.name) == kGresName) {
      on_lines[Lower(r.type)] += r.count;
      if (!counts.count(Lower(r.type)))
        mistakes->push_back(gres_conf_path + " line " + std::to_string(i + 1) + " lists vgpu devices of Type=" + r.type +
                            " for " + node + ", but slurm.conf's Gres= for " + node + " (\"" + gres +
                            "\") has no vgpu:" + r.type + "; add vgpu:" + r.type + ":<devices x SharesPerDevice>");
    }
    records.push_back(r);
  }
  for (const auto& [type, total] : counts) {
    const uint64_t listed = on_lines.count(type) ? on_lines[type] : 0;
    if (total <= listed) continue;  // slurm.conf's count below the files: the layout says so
    GresRecord rest;
    rest.name = kGresName;
    rest.type = type;
    rest.count = total - listed;
    records.push_back(rest);
  }
  return records;
}

std::string Summary(const ShareLayout& layout) {
  std::map<std::string, int> devices;
  for (const GresRecord& r : layout.records)
    if (Lower(r.name) == kGresName) ++devices[r.type];
  std::string out;
  for (const auto& [type, n] : devices) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + type;
  return out.empty() ? "no vgpu devices" : out + " device(s)";
}

}  // namespace

CheckReport CheckConfiguration(const CheckInput& in) {
  CheckReport report;
  auto problem = [&report](const std::string& what) {
    report.lines.push_back("error: " + what);
    ++report.problems;
  };
  auto slurm_conf = ReadTextFile(in.slurm_conf);
  if (!slurm_conf.ok()) {
    problem(slurm_conf.message() + "; name the cluster's slurm.conf with --conf");
    return report;
  }
  VgpuConfig defaults;
  defaults.chip_catalog_dirs = in.default_catalog_dirs;
  auto config = VgpuConfig::Load(BesideSlurmConf(in.slurm_conf, "vgpu.conf"), defaults);
  if (!config.ok()) {
    problem(config.message() + " (every node would report no vgpu: fix vgpu.conf first)");
    return report;
  }
  auto catalog = ChipCatalog::LoadDirectories(config->chip_catalog_dirs);
  if (!catalog.ok()) {
    problem("chip catalog: " + catalog.message());
    return report;
  }
  for (const std::string& p : catalog->problems()) problem("chip catalog: " + p);
  const std::string gres_conf_path = BesideSlurmConf(in.slurm_conf, "gres.conf");
  auto gres_conf = ReadTextFile(gres_conf_path);
  const std::string gres_text = gres_conf.ok() ? *gres_conf : "";
  const GresConfLocator locator(gres_conf_path, gres_text);
  const std::vector<std::string> gres_lines = ConfLines(gres_text);

  int nodes = 0;
  for (const auto& [node, gres] : NodesOf(*slurm_conf)) {
    if (VgpuCountsOfGres(gres).empty()) continue;
    ++nodes;
    std::vector<std::string> mistakes;
    std::vector<GresRecord> records = RecordsOf(node, gres, gres_conf_path, gres_lines, &mistakes);
    ShareLayoutInput layout_in;
    layout_in.node_name = node;
    layout_in.shares_per_device = config->shares_per_device;
    layout_in.catalog = &*catalog;
    layout_in.file_exists = in.file_exists;
    layout_in.locator = &locator;
    const ShareLayout layout = BuildShareLayout(records, layout_in);
    mistakes.insert(mistakes.end(), layout.errors.begin(), layout.errors.end());
    if (mistakes.empty()) {
      report.lines.push_back(node + ": ok: " + Summary(layout));
      continue;
    }
    for (const std::string& m : mistakes) problem(node + ": " + m);
  }
  if (!gres_conf.ok() && nodes > 0)
    problem(gres_conf.message() + "; gres/vgpu needs gres.conf's File= lines beside slurm.conf");
  EnforcementInput enforcement;
  enforcement.slurm_conf = in.slurm_conf;
  enforcement.slurm_conf_text = *slurm_conf;
  enforcement.local = in.local;
  enforcement.etc_dir = in.etc_dir;
  const EnforcementFindings found = CheckEnforcement(enforcement);
  for (const std::string& w : found.warnings) report.lines.push_back("warning: " + w);
  for (const std::string& n : found.notes) report.lines.push_back("note: " + n);
  report.warnings = static_cast<int>(found.warnings.size());
  report.lines.push_back(std::to_string(nodes) + " node(s) with vgpu checked, " + std::to_string(report.problems) +
                         " problem(s) found, " + std::to_string(report.warnings) + " warning(s)");
  return report;
}

const char kCheckUsage[] =
    "usage: vgpuctl check [--conf SLURM_CONF] [--local]\n"
    "Reports every mistake gres/vgpu would find in slurm.conf, the gres.conf and vgpu.conf\n"
    "beside it and the chip catalog, node by node; exit status 1 if there is one. Then warns\n"
    "of what switches the limits off (no device fencing, nothing loading libvgpu.so, no\n"
    "vgpu-prolog, oci.conf containers, ssh sessions adopted into jobs).\n"
    "  --conf PATH  the cluster's slurm.conf (default: $SLURM_CONF, else " VGPU_SLURM_CONF ")\n"
    "  --local      this host is the node checked: its device files must exist, and its\n"
    "               /etc/ld.so.preload and /etc/pam.d count for the warnings\n";

int RunCheck(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CheckInput in;
  const char* env = std::getenv("SLURM_CONF");
  in.slurm_conf = env && *env ? env : VGPU_SLURM_CONF;
  in.default_catalog_dirs = VGPU_DEFAULT_CATALOG_DIR;
  bool local = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      out << kCheckUsage;
      return 0;
    } else if (a == "--local") {
      local = true;
    } else if (a == "--conf" && i + 1 < args.size()) {
      in.slurm_conf = args[++i];
    } else if (a.rfind("--conf=", 0) == 0) {
      in.slurm_conf = a.substr(7);
    } else {
      err << "vgpuctl check: unknown argument \"" << a << "\"\n" << kCheckUsage;
      return 2;
    }
  }
  in.local = local;
  in.file_exists = [local](const std::string& f) {
    struct stat st;
    return !local || stat(f.c_str(), &st) == 0;
  };
  const CheckReport report = CheckConfiguration(in);
  for (const std::string& line : report.lines) out << line << "\n";
  return report.problems ? 1 : 0;
}

}  // namespace vgpu::check

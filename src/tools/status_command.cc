// vgpuctl status: options, asking Slurm, filters (see status_command.h).
#include "status_command.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "config/vgpu_config.h"
#include "devices/chip_catalog.h"
#include "devices/discovery.h"
#include "status_format.h"
#include "util/read_file.h"
#include "util/run_command.h"
#include "util/text.h"

namespace vgpu::status {

const char kStatusUsage[] =
    "usage: vgpuctl status [--json] [--svg FILE] [--type TYPE] [--node NODES] [--partition NAME]\n"
    "                      [--conf SLURM_CONF] [--nodes-input FILE --jobs-input FILE]\n"
    "The vgpu pool as slurmctld holds it now: per type the shares, allocated, free and asked\n"
    "by pending jobs; per node and device the type, model, socket affinity, shares used and\n"
    "free, device memory handed out as quotas, and the jobs on it (id:user:shares).\n"
    "  --json             the documented JSON document (\"version\": 1) instead of the table\n"
    "  --svg FILE         also write a map of the pool (nodes as rows, devices as cells); - = stdout\n"
    "  --type TYPE        only devices of this type\n"
    "  --node NODES       only these nodes (Slurm's hostlist syntax: n[1-8],gpu3)\n"
    "  --partition NAME   only nodes of this partition\n"
    "  --conf PATH        the cluster's slurm.conf; vgpu.conf beside it gives SharesPerDevice and\n"
    "                     the chip catalog (default: $SLURM_CONF, else " VGPU_SLURM_CONF ")\n"
    "  --nodes-input FILE, --jobs-input FILE\n"
    "                     saved `scontrol --json show nodes` (or 22.05's `sinfo --json`) and\n"
    "                     `squeue --json` outputs, instead of asking slurmctld\n";

namespace {

std::string Locate(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string found = path ? FindOnPath(name, path) : "";
  return found.empty() ? std::string(VGPU_SLURM_BINDIR) + "/" + name : found;
}

// Runs argv; its standard output, or why not.
Result<std::string> Ask(const std::vector<std::string>& argv) {
  auto ran = RunCommand(argv);
  if (!ran.ok()) return Result<std::string>::Error(ran.message() + "; install Slurm's client commands");
  if (ran->exit_status != 0)
    return Result<std::string>::Error(argv[0] + " " + argv[1] + " exited with status " +
                                      std::to_string(ran->exit_status) + ": " + LastLine(ran->err, "(no message)"));
  return std::move(ran->out);
}

// Nodes: `scontrol --json show nodes` (23.02 on); 22.05's scontrol has no
// --json, and its `sinfo --json` lists the same node records.
Result<std::string> AskNodes() {
  Result<std::string> nodes = Ask({Locate("scontrol"), "--json", "show", "nodes"});
  if (nodes.ok()) return nodes;
  Result<std::string> old = Ask({Locate("sinfo"), "--json"});
  if (old.ok()) return old;
  return Result<std::string>::Error(nodes.message() + "; check that slurmctld answers (scontrol ping)");
}

Result<std::string> Input(const std::string& file, const char* what) {
  auto text = ReadTextFile(file);
  if (!text.ok()) return Result<std::string>::Error(text.message() + "; " + what);
  return text;
}

}  // namespace

Result<StatusOptions> ParseStatusArgs(const std::vector<std::string>& args) {
  using R = Result<StatusOptions>;
  StatusOptions o;
  const char* env = std::getenv("SLURM_CONF");
  o.slurm_conf = env && *env ? env : VGPU_SLURM_CONF;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string opt = args[i], value;
    if (opt == "-h" || opt == "--help") {
      o.help = true;
      continue;
    }
    if (opt == "--json") {
      o.json = true;
      continue;
    }
    const size_t eq = opt.find('=');
    const bool inline_value = opt.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) value = opt.substr(eq + 1), opt = opt.substr(0, eq);
    static const char* const kKnown[] = {"--svg",  "--type",        "--node",       "--partition",
                                         "--conf", "--nodes-input", "--jobs-input"};
    if (std::find(std::begin(kKnown), std::end(kKnown), opt) == std::end(kKnown))
      return R::Error((opt.rfind("-", 0) == 0 ? "unknown option " : "unexpected argument ") + opt +
                      "; see vgpuctl status --help");
    if (!inline_value) {
      if (i + 1 >= args.size()) return R::Error(opt + " needs a value; see vgpuctl status --help");
      value = args[++i];
    }
    if (value.empty()) return R::Error(opt + " needs a non-empty value; see vgpuctl status --help");
    if (opt == "--svg") o.svg = value;
    else if (opt == "--type") o.type = Lower(value);
    else if (opt == "--node") o.nodes = ExpandHostlist(value);
    else if (opt == "--partition") o.partition = value;
    else if (opt == "--conf") o.slurm_conf = value;
    else if (opt == "--nodes-input") o.nodes_input = value;
    else if (opt == "--jobs-input") o.jobs_input = value;
  }
  if (o.nodes_input.empty() != o.jobs_input.empty())
    return R::Error("--nodes-input and --jobs-input go together (saved node and job lists of one moment)");
  return o;
}

PoolStatus Filter(PoolStatus pool, const StatusOptions& o) {
  const bool by_node = !o.nodes.empty() || !o.partition.empty();
  if (!by_node && o.type.empty()) return pool;
  const std::set<std::string> wanted(o.nodes.begin(), o.nodes.end());
  std::vector<NodeStatus> kept;
  for (NodeStatus& n : pool.nodes) {
    if (!wanted.empty() && !wanted.count(n.name)) continue;
    if (!o.partition.empty() &&
        std::find(n.partitions.begin(), n.partitions.end(), o.partition) == n.partitions.end())
      continue;
    if (!o.type.empty())
      n.devices.erase(std::remove_if(n.devices.begin(), n.devices.end(),
                                     [&](const DeviceStatus& d) { return Lower(d.type) != o.type; }),
                      n.devices.end());
    if (!n.devices.empty()) kept.push_back(std::move(n));
  }
  pool.nodes = std::move(kept);
  std::vector<TypeStatus> types;
  for (TypeStatus t : pool.types) {
    if (!o.type.empty() && Lower(t.type) != o.type) continue;
    if (by_node) {
      t.shares = t.allocated = 0;
      for (const NodeStatus& n : pool.nodes)
        for (const DeviceStatus& d : n.devices)
          if (d.type == t.type) t.shares += d.shares, t.allocated += d.allocated;
    }
    types.push_back(t);
  }
  pool.types = std::move(types);
  if (!o.type.empty()) pool.pending_untyped = 0;
  return pool;
}

ModelTable ModelsOf(const ChipCatalog& catalog) {
  ModelTable table;
  std::map<std::string, std::vector<const ChipModel*>> by_family;
  for (const ChipModel& m : catalog.models()) {
    table[Lower(m.id)] = {m.id, m.memory_bytes};
    by_family[Lower(m.gres_type)].push_back(&m);
  }
  for (const auto& [family, models] : by_family) {
    if (table.count(family)) continue;  // an id wins over a family of the same name
    const bool one_size = std::all_of(models.begin(), models.end(), [&](const ChipModel* m) {
      return m->memory_bytes == models[0]->memory_bytes;
    });
    if (models.size() == 1) table[family] = {models[0]->id, models[0]->memory_bytes};
    else if (one_size) table[family] = {"", models[0]->memory_bytes};
  }
  return table;
}

void AddInventoryFacts(PoolStatus* pool, const VgpuConfig& config, const ChipCatalog& catalog) {
  if (config.inventory.empty()) return;
  for (NodeStatus& node : pool->nodes) {
    const std::string path = config.InventoryFor(node.name);
    if (!ReadTextFile(path).ok()) continue;  // on the node only
    DiscoveryReport found = DiscoverDevices(catalog, DiscoveryEnv::Default(), path);
    std::map<std::string, size_t> next;  // per type, the next inventory device
    for (DeviceStatus& d : node.devices) {
      const std::string type = Lower(d.type);
      size_t& k = next[type];
      while (k < found.devices.size() && Lower(found.devices[k].gres_type) != type &&
             Lower(found.devices[k].model_id) != type)
        ++k;
      if (k >= found.devices.size()) continue;
      const Device& dev = found.devices[k++];
      if (!dev.model_id.empty()) d.model = dev.model_id;
      if (dev.memory_bytes) d.memory_bytes = dev.memory_bytes;
      d.cpus = dev.cpus;
    }
  }
}

Result<PoolStatus> LoadPool(const std::string& slurm_conf, const std::string& nodes_input,
                            const std::string& jobs_input) {
  using R = Result<PoolStatus>;
  VgpuConfig defaults;
  defaults.chip_catalog_dirs = VGPU_DEFAULT_CATALOG_DIR;
  auto config = VgpuConfig::Load(BesideSlurmConf(slurm_conf, "vgpu.conf"), defaults);
  if (!config.ok()) return R::Error(config.message() + "; fix vgpu.conf or name the cluster's slurm.conf with --conf");
  Result<std::string> nodes =
      nodes_input.empty() ? AskNodes() : Input(nodes_input, "pass a saved scontrol --json show nodes");
  if (!nodes.ok()) return R::Error(nodes.message());
  Result<std::string> jobs =
      jobs_input.empty() ? Ask({Locate("squeue"), "--json", "--all"}) : Input(jobs_input, "pass a saved squeue --json");
  if (!jobs.ok()) return R::Error(jobs.message());
  auto catalog = ChipCatalog::LoadDirectories(config->chip_catalog_dirs);
  if (!catalog.ok()) catalog = ChipCatalog();
  Result<PoolStatus> pool = ReadPool(*nodes, *jobs, config->shares_per_device, ModelsOf(*catalog));
  if (!pool.ok()) return pool;
  AddInventoryFacts(&*pool, *config, *catalog);
  return pool;
}

int RunStatus(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto fail = [&](const std::string& message, int status) {
    err << "vgpuctl status: " << message << std::endl;
    return status;
  };
  Result<StatusOptions> parsed = ParseStatusArgs(args);
  if (!parsed.ok()) return fail(parsed.message(), 2);
  const StatusOptions& o = *parsed;
  if (o.help) {
    out << kStatusUsage;
    return 0;
  }
  Result<PoolStatus> pool = LoadPool(o.slurm_conf, o.nodes_input, o.jobs_input);
  if (!pool.ok()) return fail(pool.message(), 1);
  const PoolStatus shown = Filter(std::move(pool).value(), o);
  if (o.svg == "-") {
    out << RenderPoolSvg(shown);
    return 0;
  }
  out << (o.json ? FormatJson(shown) : FormatTable(shown));
  out.flush();
  if (!o.svg.empty()) {
    Status w = WriteFileAtomically(o.svg, RenderPoolSvg(shown), 0644);
    if (!w.ok()) return fail(w.message(), 1);
  }
  return 0;
}

}  // namespace vgpu::status

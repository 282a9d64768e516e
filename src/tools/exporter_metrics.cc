#include "exporter_metrics.h"

#include <set>
#include <sstream>

#include <prometheus/text_serializer.h>

namespace vgpu::exporter {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

// Families in the order they are first named; a family with no sample is
// left out (Prometheus would show it with no series anyway).
class Families {
 public:
  void Gauge(const std::string& name, const std::string& help, Labels labels, double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.gauge.value = value;
    Family(name, help, MetricType::Gauge).metric.push_back(std::move(m));
  }
  void Counter(const std::string& name, const std::string& help, Labels labels, double value) {
    ClientMetric m;
    m.label = std::move(labels);
    m.counter.value = value;
    Family(name, help, MetricType::Counter).metric.push_back(std::move(m));
  }
  std::vector<MetricFamily> Take() { return std::move(families_); }

 private:
  MetricFamily& Family(const std::string& name, const std::string& help, MetricType type) {
    for (MetricFamily& f : families_)
      if (f.name == name) return f;
    families_.push_back(MetricFamily{name, help, type, {}});
    return families_.back();
  }
  std::vector<MetricFamily> families_;
};

std::string DeviceLabel(const JobDeviceUsage& u) {
  return std::to_string(u.node_device >= 0 ? static_cast<uint32_t>(u.node_device) : u.device);
}

void AddPool(const status::PoolStatus& pool, Families* f) {
  for (const status::TypeStatus& t : pool.types) {
    const Labels type{{"type", t.type}};
    f->Gauge("slurm_vgpu_type_shares", "Shares of this type in the pool (devices x SharesPerDevice).", type,
             static_cast<double>(t.shares));
    f->Gauge("slurm_vgpu_type_allocated_shares", "Shares of this type allocated to jobs.", type,
             static_cast<double>(t.allocated));
    f->Gauge("slurm_vgpu_type_free_shares", "Shares of this type not allocated.", type,
             static_cast<double>(t.free()));
    f->Gauge("slurm_vgpu_type_pending_shares",
             "Shares pending jobs ask of this type (type=\"any\": untyped requests).", type,
             static_cast<double>(t.pending));
  }
  f->Gauge("slurm_vgpu_type_pending_shares", "", {{"type", "any"}}, static_cast<double>(pool.pending_untyped));
  for (const status::NodeStatus& n : pool.nodes) {
    f->Gauge("slurm_vgpu_node_out_of_pool",
             "1 when the node's shares cannot be allocated (drained, down, failing, invalid, not "
             "responding); state and reason as Slurm gives them.",
             {{"node", n.name}, {"state", n.state}, {"reason", n.reason}}, OutOfPool(n.state) ? 1 : 0);
    for (const status::DeviceStatus& d : n.devices) {
      const Labels dev{{"node", n.name}, {"device", std::to_string(d.index)}, {"type", d.type}, {"model", d.model}};
      f->Gauge("slurm_vgpu_device_shares", "Shares of the device (SharesPerDevice).", dev,
               static_cast<double>(d.shares));
      f->Gauge("slurm_vgpu_device_allocated_shares", "Shares of the device allocated to jobs.", dev,
               static_cast<double>(d.allocated));
      f->Gauge("slurm_vgpu_device_memory_quota_bytes",
               "Device memory handed out as the quotas of the jobs on it (allocated / shares x memory; 0 "
               "when the model's memory is not known).",
               dev, static_cast<double>(d.memory_quota()));
      if (d.memory_bytes)
        f->Gauge("slurm_vgpu_device_memory_bytes", "The device's memory (chip catalog or inventory).", dev,
                 static_cast<double>(d.memory_bytes));
      f->Gauge("slurm_vgpu_device_jobs", "Jobs holding shares of the device.", dev,
               static_cast<double>(d.jobs.size()));
    }
  }
}

void AddUsage(const Snapshot& s, const NodeTotals& totals, Families* f) {
  std::map<std::string, double> used_by_node;
  for (const JobDeviceUsage& u : s.usage) {
    const std::string node = NodeOfJob(s, u.job_id);
    const Labels job{{"node", node}, {"jobid", std::to_string(u.job_id)}, {"user", u.user},
                     {"device", DeviceLabel(u)}, {"vendor", u.vendor}};
    used_by_node[node] += static_cast<double>(u.stats.used_bytes);
    f->Gauge("slurm_vgpu_job_device_memory_used_bytes",
             "Device memory the job's processes hold on the device now (libvgpu.so's accounting).", job,
             static_cast<double>(u.stats.used_bytes));
    f->Gauge("slurm_vgpu_job_device_memory_peak_bytes", "The most device memory the job held at once.", job,
             static_cast<double>(u.stats.peak_bytes));
    f->Gauge("slurm_vgpu_job_device_memory_quota_bytes", "Device memory the job may hold on the device.", job,
             static_cast<double>(u.memory_quota));
    f->Gauge("slurm_vgpu_job_device_shares", "The job's shares of the device.", job, static_cast<double>(u.shares));
    f->Gauge("slurm_vgpu_job_device_processes", "Processes of the job using the device.", job,
             static_cast<double>(u.stats.processes));
    f->Counter("slurm_vgpu_job_device_busy_seconds_total", "Device time the job's kernels took.", job,
               static_cast<double>(u.stats.busy_ns) / 1e9);
    f->Counter("slurm_vgpu_job_oom_refusals_total",
               "Device memory allocations libvgpu.so refused the job (out of memory: over its quota).", job,
               static_cast<double>(u.stats.refusals));
  }
  std::set<std::string> nodes;
  for (const auto& [node, used] : used_by_node) nodes.insert(node);
  for (const std::string& node : totals.nodes()) nodes.insert(node);
  if (!s.node_name.empty()) nodes.insert(s.node_name);
  for (const std::string& node : nodes) {
    auto used = used_by_node.find(node);
    f->Gauge("slurm_vgpu_node_device_memory_used_bytes", "Device memory the node's vgpu jobs hold now.",
             {{"node", node}}, used == used_by_node.end() ? 0 : used->second);
    f->Counter("slurm_vgpu_node_device_busy_seconds_total",
               "Device time of the node's vgpu jobs since the exporter started, ended jobs included.",
               {{"node", node}}, totals.busy_seconds(node));
    f->Counter("slurm_vgpu_node_oom_refusals_total",
               "Out-of-memory refusals of the node's vgpu jobs since the exporter started.", {{"node", node}},
               static_cast<double>(totals.refusals(node)));
  }
}

}  // namespace

std::string NodeOfJob(const Snapshot& s, uint32_t job_id) {
  if (s.pool)
    for (const status::NodeStatus& n : s.pool->nodes)
      for (const status::DeviceStatus& d : n.devices)
        for (const status::DeviceJob& j : d.jobs)
          if (j.job_id == job_id) return n.name;
  return s.node_name;
}

void NodeTotals::Add(const Snapshot& s) {
  std::map<std::pair<uint32_t, uint32_t>, Seen> now;
  for (const JobDeviceUsage& u : s.usage) {
    const auto key = std::make_pair(u.job_id, u.device);
    Seen before;
    if (auto it = last_.find(key); it != last_.end()) before = it->second;
    Seen& total = totals_[NodeOfJob(s, u.job_id)];
    // A region only grows; one that shrank is a new job's of the same id
    // (a requeue): all of it is new.
    total.busy_ns += u.stats.busy_ns >= before.busy_ns ? u.stats.busy_ns - before.busy_ns : u.stats.busy_ns;
    total.refusals +=
        u.stats.refusals >= before.refusals ? u.stats.refusals - before.refusals : u.stats.refusals;
    now[key] = Seen{u.stats.busy_ns, u.stats.refusals};
  }
  last_ = std::move(now);
}

double NodeTotals::busy_seconds(const std::string& node) const {
  auto it = totals_.find(node);
  return it == totals_.end() ? 0 : static_cast<double>(it->second.busy_ns) / 1e9;
}

uint64_t NodeTotals::refusals(const std::string& node) const {
  auto it = totals_.find(node);
  return it == totals_.end() ? 0 : it->second.refusals;
}

std::vector<std::string> NodeTotals::nodes() const {
  std::vector<std::string> out;
  for (const auto& [node, seen] : totals_) out.push_back(node);
  return out;
}

bool OutOfPool(const std::string& state) {
  std::stringstream parts(state);
  std::string p;
  static const std::set<std::string> kOut = {"down", "drain", "draining", "drained", "fail", "failing",
                                             "future", "inval", "invalid", "invalid_reg", "not_responding",
                                             "no_respond", "maint", "reboot_requested", "unknown"};
  while (std::getline(parts, p, '+'))
    if (kOut.count(p)) return true;
  return false;
}

std::vector<MetricFamily> BuildMetrics(const Snapshot& s, const NodeTotals& totals) {
  Families f;
  if (s.pool_asked) {
    f.Gauge("slurm_vgpu_exporter_slurm_up", "1 when slurmctld answered the last collection's questions.", {},
            s.pool ? 1 : 0);
    if (s.pool) AddPool(*s.pool, &f);
  }
  if (s.usage_asked) {
    f.Gauge("slurm_vgpu_exporter_usage_read_errors",
            "Job files under the run directory the last collection could not read.", {},
            static_cast<double>(s.usage_problems.size()));
    AddUsage(s, totals, &f);
  }
  f.Gauge("slurm_vgpu_exporter_collect_seconds", "How long the last collection took.", {}, s.collect_seconds);
  return f.Take();
}

std::string MetricsText(const std::vector<MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace vgpu::exporter

// vgpu-exporter's collection cache and HTTP endpoints: /metrics
// (Prometheus' text format), /status (the pool map page) and / (an index).
#ifndef VGPU_TOOLS_EXPORTER_SERVER_H_
#define VGPU_TOOLS_EXPORTER_SERVER_H_

#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "exporter_metrics.h"
#include "exporter_options.h"
#include "pool_status.h"
#include "util/status.h"

class CivetServer;

namespace vgpu::exporter {

// One collection, with what the endpoints send.
struct Collected {
  Snapshot snapshot;
  std::string metrics_text;
  std::string generated;  // local time, for the page
  time_t at = 0;
};

// Collects at most once per interval, whatever the number of scrapers: a
// request within the interval gets the last collection; one after it
// collects while later ones wait for it. Thread-safe.
class Collector {
 public:
  // `load_pool`: the pool from slurmctld (status::LoadPool; a seam for
  // tests). `now`: the clock, likewise.
  Collector(ExporterOptions options, std::function<Result<status::PoolStatus>()> load_pool,
            std::function<time_t()> now = [] { return time(nullptr); });
  std::shared_ptr<const Collected> Current();

 private:
  Collected Collect();
  // Writes to stderr (the journal) what could not be read, once per
  // problem while it lasts, so that a scrape every few seconds does not
  // repeat it.
  void LogChanges(const Snapshot& s);

  ExporterOptions options_;
  std::function<Result<status::PoolStatus>()> load_pool_;
  std::function<time_t()> now_;
  std::mutex mutex_;
  NodeTotals totals_;
  std::set<std::string> logged_;
  std::shared_ptr<const Collected> last_;
};

// The HTTP server on options.listen, serving `collector`'s collections
// from its own threads until destroyed.
class ExporterServer {
 public:
  // An error names the address and why (in use, not allowed).
  static Result<std::unique_ptr<ExporterServer>> Start(const std::string& listen, Collector* collector);
  ~ExporterServer();
  ExporterServer(const ExporterServer&) = delete;
  ExporterServer& operator=(const ExporterServer&) = delete;
  std::vector<int> ports() const;

 private:
  class Handler;
  ExporterServer() = default;
  std::unique_ptr<Handler> handler_;
  std::unique_ptr<CivetServer> server_;
};

}  // namespace vgpu::exporter

#endif  // VGPU_TOOLS_EXPORTER_SERVER_H_

#include "exporter_server.h"

#include <CivetServer.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "exporter_page.h"

namespace vgpu::exporter {
namespace {

void Send(mg_connection* conn, int code, const char* reason, const char* type, const std::string& body) {
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
            "Connection: close\r\n\r\n",
            code, reason, type, body.size());
  mg_write(conn, body.data(), body.size());
}

std::string LocalTime(time_t t) {
  char text[64];
  struct tm tm {};
  localtime_r(&t, &tm);
  strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S %Z", &tm);
  return text;
}

}  // namespace

Collector::Collector(ExporterOptions options, std::function<Result<status::PoolStatus>()> load_pool,
                     std::function<time_t()> now)
    : options_(std::move(options)), load_pool_(std::move(load_pool)), now_(std::move(now)) {}

std::shared_ptr<const Collected> Collector::Current() {
  std::lock_guard<std::mutex> lock(mutex_);
  const time_t now = now_();
  if (last_ && now >= last_->at && now - last_->at < options_.interval_s) return last_;
  last_ = std::make_shared<const Collected>(Collect());
  return last_;
}

Collected Collector::Collect() {
  const auto start = std::chrono::steady_clock::now();
  Collected c;
  Snapshot& s = c.snapshot;
  s.node_name = options_.node_name;
  s.pool_asked = options_.pool;
  if (options_.pool) {
    Result<status::PoolStatus> pool = load_pool_();
    if (pool.ok())
      s.pool = std::move(pool).value();
    else
      s.pool_error = pool.message();
  }
  s.usage_asked = options_.node;
  if (options_.node) s.usage = ReadRunDirUsage(options_.run_dir, &s.usage_problems);
  LogChanges(s);
  totals_.Add(s);
  s.collect_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  c.metrics_text = MetricsText(BuildMetrics(s, totals_));
  c.at = now_();
  c.generated = LocalTime(c.at);
  return c;
}

void Collector::LogChanges(const Snapshot& s) {
  std::set<std::string> now(s.usage_problems.begin(), s.usage_problems.end());
  if (!s.pool_error.empty()) now.insert("slurmctld: " + s.pool_error);
  for (const std::string& p : now)
    if (!logged_.count(p)) std::fprintf(stderr, "vgpu-exporter: %s\n", p.c_str());
  if (!logged_.empty() && now.empty()) std::fprintf(stderr, "vgpu-exporter: all read again\n");
  logged_ = std::move(now);
}

class ExporterServer::Handler : public CivetHandler {
 public:
  explicit Handler(Collector* collector) : collector_(collector) {}
  bool handleGet(CivetServer*, mg_connection* conn) override {
    const mg_request_info* req = mg_get_request_info(conn);
    const std::string uri = req && req->local_uri ? req->local_uri : "/";
    try {
      if (uri == "/metrics") {
        Send(conn, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", collector_->Current()->metrics_text);
      } else if (uri == "/status") {
        std::shared_ptr<const Collected> c = collector_->Current();
        Send(conn, 200, "OK", "text/html; charset=utf-8", StatusPage(c->snapshot, c->generated, 30));
      } else if (uri == "/") {
        Send(conn, 200, "OK", "text/html; charset=utf-8",
             "<!DOCTYPE html><html><head><title>vgpu-exporter</title></head><body><h1>vgpu-exporter</h1>"
             "<p><a href=\"/metrics\">/metrics</a> <a href=\"/status\">/status</a></p></body></html>\n");
      } else {
        Send(conn, 404, "Not Found", "text/plain; charset=utf-8", "not found: try /metrics or /status\n");
      }
    } catch (const std::exception& e) {
      Send(conn, 500, "Internal Server Error", "text/plain; charset=utf-8", std::string(e.what()) + "\n");
    }
    return true;
  }

 private:
  Collector* collector_;
};

Result<std::unique_ptr<ExporterServer>> ExporterServer::Start(const std::string& listen, Collector* collector) {
  using R = Result<std::unique_ptr<ExporterServer>>;
  std::unique_ptr<ExporterServer> s(new ExporterServer());
  s->handler_ = std::make_unique<Handler>(collector);
  const std::vector<std::string> options = {"listening_ports", listen, "num_threads", "4",
                                            "request_timeout_ms", "30000"};
  try {
    s->server_ = std::make_unique<CivetServer>(options);
  } catch (const std::exception& e) {
    return R::Error("cannot listen on " + listen + ": " + e.what() +
                    " (another process on that port? choose one with --listen [ADDR:]PORT)");
  }
  s->server_->addHandler("/", s->handler_.get());
  return s;
}

ExporterServer::~ExporterServer() {
  if (server_) server_->close();
}

std::vector<int> ExporterServer::ports() const { return server_ ? server_->getListeningPorts() : std::vector<int>{}; }

}  // namespace vgpu::exporter

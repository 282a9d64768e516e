#include "exporter_page.h"

#include <cstdio>
#include <sstream>

#include "status_format.h"
#include "svg_plot.h"

namespace vgpu::exporter {
namespace {

// Text for HTML element content and attribute values (SvgEscape escapes
// the same five characters).
std::string Html(const std::string& s) { return sim::SvgEscape(s); }

void TypeTable(const status::PoolStatus& pool, std::ostream& out) {
  out << "<table id=\"types\"><thead><tr><th>type</th><th>shares</th><th>allocated</th><th>free</th>"
         "<th>free %</th><th>pending</th></tr></thead><tbody>\n";
  for (const status::TypeStatus& t : pool.types) {
    const double pct = t.shares ? 100.0 * static_cast<double>(t.free()) / static_cast<double>(t.shares) : 0;
    char pct_text[16];
    std::snprintf(pct_text, sizeof pct_text, "%.0f", pct);
    out << "<tr data-type=\"" << Html(t.type) << "\"><td>" << Html(t.type) << "</td><td>" << t.shares
        << "</td><td>" << t.allocated << "</td><td class=\"free\">" << t.free() << "</td><td>" << pct_text
        << "</td><td>" << t.pending << "</td></tr>\n";
  }
  out << "<tr data-type=\"any\"><td>any (untyped)</td><td></td><td></td><td></td><td></td><td>"
      << pool.pending_untyped << "</td></tr>\n</tbody></table>\n";
}

void OutOfPoolList(const status::PoolStatus& pool, std::ostream& out) {
  std::ostringstream rows;
  for (const status::NodeStatus& n : pool.nodes)
    if (OutOfPool(n.state))
      rows << "<li data-node=\"" << Html(n.name) << "\">" << Html(n.name) << ": " << Html(n.state)
           << (n.reason.empty() ? "" : " (" + Html(n.reason) + ")") << "</li>\n";
  const std::string list = rows.str();
  out << "<h2>Nodes out of the pool</h2>\n";
  if (list.empty())
    out << "<p id=\"out-of-pool\">none</p>\n";
  else
    out << "<ul id=\"out-of-pool\">\n" << list << "</ul>\n";
}

}  // namespace

std::string StatusPage(const Snapshot& s, const std::string& generated, int refresh_s) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  if (refresh_s > 0) out << "<meta http-equiv=\"refresh\" content=\"" << refresh_s << "\">\n";
  out << "<title>slurm-vgpu pool</title>\n"
         "<style>body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}td:first-child{text-align:left}"
         ".error{color:#b00}</style>\n</head><body>\n"
         "<h1>slurm-vgpu pool</h1>\n<p id=\"generated\">as of "
      << Html(generated) << "</p>\n";
  if (!s.pool_asked) {
    out << "<p class=\"error\" id=\"error\">This exporter does not ask slurmctld (started with --no-pool): "
           "the pool map is on the exporter that does.</p>\n";
  } else if (!s.pool) {
    out << "<p class=\"error\" id=\"error\">slurmctld did not answer: " << Html(s.pool_error) << "</p>\n";
  } else {
    TypeTable(*s.pool, out);
    OutOfPoolList(*s.pool, out);
    out << "<h2>Devices</h2>\n<div id=\"map\">\n" << status::RenderPoolSvg(*s.pool) << "</div>\n";
    if (!s.pool->notes.empty()) {
      out << "<ul id=\"notes\">\n";
      for (const std::string& n : s.pool->notes) out << "<li>" << Html(n) << "</li>\n";
      out << "</ul>\n";
    }
  }
  out << "<p><a href=\"/metrics\">metrics</a></p>\n</body></html>\n";
  return out.str();
}

}  // namespace vgpu::exporter

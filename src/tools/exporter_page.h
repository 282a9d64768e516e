// vgpu-exporter's /status: the pool map as one HTML page (the SVG of
// `vgpuctl status --svg`, the per-type totals, the nodes out of the pool),
// for sites without Grafana. Self-contained: no script, no outside file.
#ifndef VGPU_TOOLS_EXPORTER_PAGE_H_
#define VGPU_TOOLS_EXPORTER_PAGE_H_

#include <string>

#include "exporter_metrics.h"

namespace vgpu::exporter {

// `generated`: when the snapshot was taken, as the page shows it.
// `refresh_s`: the page reloads itself this often (0: never).
std::string StatusPage(const Snapshot& s, const std::string& generated, int refresh_s);

}  // namespace vgpu::exporter

#endif  // VGPU_TOOLS_EXPORTER_PAGE_H_

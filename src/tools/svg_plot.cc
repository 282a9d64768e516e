#include "svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "util/text.h"

namespace vgpu::sim {
namespace {

constexpr double kWidth = 900, kHeight = 560;
// Okabe-Ito (yellow left out: too pale on white), then Paul Tol's muted wine,
// olive and indigo: ten colours told apart with the common colour blindnesses.
const char* const kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
                                "#56B4E9", "#000000", "#882255", "#999933", "#332288"};
constexpr size_t kColors = sizeof(kPalette) / sizeof(kPalette[0]);
const char* const kDashes[] = {"", "7 4", "2 3", "9 3 2 3"};  // once per round of colours

}  // namespace

std::string SvgEscape(const std::string& s) {
  std::string out;
  for (char c : OneLine(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += (static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
    }
  }
  return out;
}

const char* PaletteColor(size_t k) { return kPalette[k % kColors]; }

namespace {

std::string Escape(const std::string& s) { return SvgEscape(s); }

// A pixel coordinate, clamped so that wild data cannot print huge numbers.
std::string Px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", std::clamp(v, -1e6, 1e6));
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

// A data value for a label: up to 6 significant digits, no exponent below 1e9.
std::string Value(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, std::fabs(v) < 1e9 ? "%.6g" : "%.3g", v);
  return buf;
}

// An axis over [lo, hi] with ticks every `step` (1, 2 or 5 times a power of
// ten), lo and hi being multiples of step, at most max_intervals steps apart.
struct Axis {
  double lo = 0, hi = 1, step = 0.2;
  long first = 0, count = 6;  // ticks at (first + i) * step, i < count
  int decimals = 1;
  std::string Label(long i) const {
    double v = static_cast<double>(first + i) * step;
    if (std::fabs(v) < step / 2) v = 0;  // no "-0"
    char buf[400];
    if (std::max(std::fabs(lo), std::fabs(hi)) >= 1e9) return Value(v);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
  }
};

// Data bounds (lo > hi: no data) to a nice axis; from_zero pins lo to 0.
Axis NiceAxis(double lo, double hi, bool from_zero, int max_intervals) {
  if (!(lo <= hi)) lo = 0, hi = 1;
  lo = std::clamp(lo, -1e300, 1e300);
  hi = std::clamp(hi, -1e300, 1e300);
  if (from_zero) {
    lo = 0;
    if (hi <= 0) hi = 1;
  } else if (hi == lo) {
    double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad, hi += pad;
  }
  Axis a;
  double raw = (hi - lo) / max_intervals;
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (int round = 0; round < 8; ++round, power *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      double step = m * power;
      double n_lo = std::floor(lo / step + 1e-9), n_hi = std::ceil(hi / step - 1e-9);
      if (n_hi - n_lo > max_intervals || n_hi <= n_lo) continue;
      a.step = step;
      a.first = static_cast<long>(n_lo);
      a.count = static_cast<long>(n_hi - n_lo) + 1;
      a.lo = n_lo * step;
      a.hi = n_hi * step;
      a.decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
      return a;
    }
  }
  a.lo = lo, a.hi = hi, a.step = hi - lo, a.first = 0, a.count = 1;  // unreachable in practice
  return a;
}

bool Finite(double a, double b) { return std::isfinite(a) && std::isfinite(b); }

// The document's start: <svg>, <title>, white background and the clip path
// "plot-area" of the plot rectangle (x0, y0)-(x1, y1).
std::string Opening(const std::string& title, double x0, double y0, double x1, double y1) {
  std::string o;
  o += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"560\" viewBox=\"0 0 900 560\""
       " font-family=\"Helvetica, Arial, sans-serif\" fill=\"#222\">\n";
  if (!title.empty()) o += "<title>" + Escape(title) + "</title>\n";
  o += "<rect width=\"900\" height=\"560\" fill=\"#fff\"/>\n";
  o += "<defs><clipPath id=\"plot-area\"><rect x=\"" + Px(x0) + "\" y=\"" + Px(y0) + "\" width=\"" +
       Px(x1 - x0) + "\" height=\"" + Px(y1 - y0) + "\"/></clipPath></defs>\n";
  return o;
}

// The frame around the plot rectangle, the axis labels ("" = none) and the
// title above.
std::string FrameAndLabels(const std::string& title, const std::string& x_label, const std::string& y_label,
                           double x0, double y0, double x1, double y1) {
  std::string o;
  o += "<rect x=\"" + Px(x0) + "\" y=\"" + Px(y0) + "\" width=\"" + Px(x1 - x0) + "\" height=\"" + Px(y1 - y0) +
       "\" fill=\"none\" stroke=\"#333\" stroke-width=\"1\"/>\n";
  if (!x_label.empty())
    o += "<text x=\"" + Px((x0 + x1) / 2) + "\" y=\"" + Px(kHeight - 18) + "\" font-size=\"14\" text-anchor=\"middle\">" +
         Escape(x_label) + "</text>\n";
  if (!y_label.empty())
    o += "<text transform=\"translate(22," + Px((y0 + y1) / 2) + ") rotate(-90)\" font-size=\"14\" text-anchor=\"middle\">" +
         Escape(y_label) + "</text>\n";
  if (!title.empty())
    o += "<text x=\"" + Px((x0 + x1) / 2) + "\" y=\"32\" font-size=\"17\" font-weight=\"bold\" text-anchor=\"middle\">" +
         Escape(title) + "</text>\n";
  return o;
}

// Legend width for labels of at most `longest` characters (0 = no legend).
double LegendWidth(size_t labelled, size_t longest) {
  return labelled == 0 ? 0 : std::clamp(44.0 + 7.0 * static_cast<double>(longest), 110.0, 320.0);
}

// Horizontal grid lines and labels of the y axis.
std::string YGrid(const Axis& ay, double x0, double x1, const std::function<double(double)>& py) {
  std::string o = "<g stroke=\"#e4e4e4\" stroke-width=\"1\">\n";
  for (long i = 0; i < ay.count; ++i) {
    std::string y = Px(py(static_cast<double>(ay.first + i) * ay.step));
    o += "<line x1=\"" + Px(x0) + "\" y1=\"" + y + "\" x2=\"" + Px(x1) + "\" y2=\"" + y + "\"/>\n";
  }
  o += "</g>\n<g font-size=\"12\" fill=\"#333\">\n";
  for (long i = 0; i < ay.count; ++i)
    o += "<text x=\"" + Px(x0 - 8) + "\" y=\"" + Px(py(static_cast<double>(ay.first + i) * ay.step)) +
         "\" dy=\"0.35em\" text-anchor=\"end\">" + ay.Label(i) + "</text>\n";
  return o + "</g>\n";
}

// `s` on one line, cut to at most `max` bytes (not inside a UTF-8
// character), with "..." in place of what is cut.
std::string Shorten(const std::string& s, size_t max) {
  std::string line = OneLine(s);
  if (line.size() <= max) return line;
  size_t keep = max - 3;
  while (keep > 0 && (static_cast<unsigned char>(line[keep]) & 0xC0) == 0x80) --keep;
  return line.substr(0, keep) + "...";
}

}  // namespace

std::string RenderSvg(const PlotSpec& spec) {
  // Data bounds.
  double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
  auto take_y = [&](double v) {
    if (std::isfinite(v)) y_min = std::min(y_min, v), y_max = std::max(y_max, v);
  };
  for (const Series& s : spec.series) {
    size_t n = std::min(s.x.size(), s.y.size());
    for (size_t i = 0; i < n; ++i) {
      if (!Finite(s.x[i], s.y[i])) continue;
      x_min = std::min(x_min, s.x[i]), x_max = std::max(x_max, s.x[i]);
      take_y(s.y[i]);
      if (i < s.y_low.size() && i < s.y_high.size()) take_y(s.y_low[i]), take_y(s.y_high[i]);
    }
  }
  for (double m : spec.x_marks)
    if (std::isfinite(m)) x_min = std::min(x_min, m), x_max = std::max(x_max, m);
  const Axis ax = NiceAxis(x_min, x_max, false, 10);
  const Axis ay = NiceAxis(y_min, y_max, !(y_min < 0), 8);

  // Layout: the legend to the right of the plot, as wide as its longest label.
  size_t labelled = 0, longest = 0;
  for (const Series& s : spec.series)
    if (!Trim(s.label).empty()) ++labelled, longest = std::max(longest, OneLine(s.label).size());
  double legend_w = LegendWidth(labelled, longest);
  const double x0 = 80, x1 = kWidth - 24 - legend_w;
  const double y0 = spec.title.empty() ? 24 : 52, y1 = kHeight - 60;
  auto px = [&](double v) { return x0 + (v - ax.lo) / (ax.hi - ax.lo) * (x1 - x0); };
  auto py = [&](double v) { return y1 - (v - ay.lo) / (ay.hi - ay.lo) * (y1 - y0); };

  std::string o = Opening(spec.title, x0, y0, x1, y1);

  // Grid, ticks and tick labels: x here, y in YGrid.
  o += "<g stroke=\"#e4e4e4\" stroke-width=\"1\">\n";
  for (long i = 0; i < ax.count; ++i) {
    std::string x = Px(px(static_cast<double>(ax.first + i) * ax.step));
    o += "<line x1=\"" + x + "\" y1=\"" + Px(y0) + "\" x2=\"" + x + "\" y2=\"" + Px(y1) + "\"/>\n";
  }
  o += "</g>\n<g font-size=\"12\" fill=\"#333\">\n";
  for (long i = 0; i < ax.count; ++i)
    o += "<text x=\"" + Px(px(static_cast<double>(ax.first + i) * ax.step)) + "\" y=\"" + Px(y1 + 18) +
         "\" text-anchor=\"middle\">" + ax.Label(i) + "</text>\n";
  o += "</g>\n" + YGrid(ay, x0, x1, py);

  // Vertical guide lines, each labelled with its value near the top.
  for (double m : spec.x_marks) {
    if (!std::isfinite(m)) continue;
    double x = px(m);
    bool right_half = x > (x0 + x1) / 2;
    o += "<line class=\"x-mark\" x1=\"" + Px(x) + "\" y1=\"" + Px(y0) + "\" x2=\"" + Px(x) + "\" y2=\"" +
         Px(y1) + "\" stroke=\"#555\" stroke-width=\"1.2\" stroke-dasharray=\"6 4\"/>\n";
    o += "<text x=\"" + Px(right_half ? x - 5 : x + 5) + "\" y=\"" + Px(y0 + 14) + "\" font-size=\"11\" fill=\"#555\"" +
         (right_half ? " text-anchor=\"end\"" : "") + ">" + Escape(Value(m)) + "</text>\n";
  }

  // Bands behind every line, then the lines (markers where points are few
  // or isolated).
  o += "<g clip-path=\"url(#plot-area)\">\n";
  for (size_t k = 0; k < spec.series.size(); ++k) {
    const Series& s = spec.series[k];
    if (s.y_low.empty() || s.y_high.empty()) continue;
    size_t n = std::min({s.x.size(), s.y_low.size(), s.y_high.size()});
    for (size_t i = 0; i < n;) {  // one polygon per run of finite points
      size_t j = i;
      while (j < n && std::isfinite(s.x[j]) && Finite(s.y_low[j], s.y_high[j])) ++j;
      if (j > i) {
        std::string pts;
        for (size_t t = i; t < j; ++t) pts += Px(px(s.x[t])) + "," + Px(py(s.y_high[t])) + " ";
        for (size_t t = j; t-- > i;) pts += Px(px(s.x[t])) + "," + Px(py(s.y_low[t])) + " ";
        pts.pop_back();
        o += "<polygon class=\"band\" points=\"" + pts + "\" fill=\"" + kPalette[k % kColors] +
             "\" fill-opacity=\"0.16\" stroke=\"none\"/>\n";
      }
      i = std::max(j, i + 1);
    }
  }
  for (size_t k = 0; k < spec.series.size(); ++k) {
    const Series& s = spec.series[k];
    const char* color = kPalette[k % kColors];
    const char* dash = kDashes[(k / kColors) % 4];
    size_t n = std::min(s.x.size(), s.y.size()), finite = 0;
    for (size_t i = 0; i < n; ++i) finite += Finite(s.x[i], s.y[i]);
    std::string d, dots;
    for (size_t i = 0; i < n; ++i) {
      if (!Finite(s.x[i], s.y[i])) continue;
      bool starts = i == 0 || !Finite(s.x[i - 1], s.y[i - 1]);
      bool isolated = starts && (i + 1 >= n || !Finite(s.x[i + 1], s.y[i + 1]));
      d += (starts ? "M" : "L") + Px(px(s.x[i])) + "," + Px(py(s.y[i])) + " ";
      if (isolated || finite <= 20)
        dots += "<circle cx=\"" + Px(px(s.x[i])) + "\" cy=\"" + Px(py(s.y[i])) + "\" r=\"3\" fill=\"" + color + "\"/>\n";
    }
    if (d.empty()) continue;
    d.pop_back();
    o += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + color + "\" stroke-width=\"2\" stroke-linejoin=\"round\"" +
         (*dash ? std::string(" stroke-dasharray=\"") + dash + "\"" : "") + "/>\n" + dots;
  }
  o += "</g>\n";

  o += FrameAndLabels(spec.title, spec.x_label, spec.y_label, x0, y0, x1, y1);

  // Legend: a sample of each labelled line (and band), then its label.
  if (labelled > 0) {
    double row = std::min(22.0, (y1 - y0 - 8) / static_cast<double>(labelled));
    double lx = x1 + 16, ly = y0 + 10;
    o += "<g class=\"legend\" font-size=\"13\">\n";
    for (size_t k = 0; k < spec.series.size(); ++k) {
      const Series& s = spec.series[k];
      if (Trim(s.label).empty()) continue;
      const char* color = kPalette[k % kColors];
      const char* dash = kDashes[(k / kColors) % 4];
      if (!s.y_low.empty() && !s.y_high.empty())
        o += "<rect x=\"" + Px(lx) + "\" y=\"" + Px(ly - 6) + "\" width=\"26\" height=\"12\" fill=\"" + color +
             "\" fill-opacity=\"0.16\"/>\n";
      o += "<line x1=\"" + Px(lx) + "\" y1=\"" + Px(ly) + "\" x2=\"" + Px(lx + 26) + "\" y2=\"" + Px(ly) +
           "\" stroke=\"" + color + "\" stroke-width=\"2.5\"" +
           (*dash ? std::string(" stroke-dasharray=\"") + dash + "\"" : "") + "/>\n";
      o += "<text x=\"" + Px(lx + 34) + "\" y=\"" + Px(ly) + "\" dy=\"0.35em\">" + Escape(s.label) + "</text>\n";
      ly += row;
    }
    o += "</g>\n";
  }
  o += "</svg>\n";
  return o;
}

std::string RenderBarSvg(const BarChartSpec& spec) {
  const size_t n = spec.categories.size();
  double y_min = INFINITY, y_max = -INFINITY;
  size_t bars = spec.series.size();  // bars per category
  for (size_t c = 0; c < n && c < spec.values.size(); ++c) {
    bars = std::max(bars, spec.values[c].size());
    for (double v : spec.values[c])
      if (std::isfinite(v)) y_min = std::min(y_min, v), y_max = std::max(y_max, v);
  }
  if (y_min > 0) y_min = 0;  // bars stand on 0
  const Axis ay = NiceAxis(y_min, y_max, !(y_min < 0), 8);

  size_t labelled = 0, longest = 0;
  for (const std::string& label : spec.series)
    if (!Trim(label).empty()) ++labelled, longest = std::max(longest, OneLine(label).size());
  const bool slanted = n > 8;
  const double x0 = 80, x1 = kWidth - 24 - LegendWidth(labelled, longest);
  const double y0 = spec.title.empty() ? 24 : 52, y1 = kHeight - (slanted ? 110 : 60);
  auto py = [&](double v) { return y1 - (v - ay.lo) / (ay.hi - ay.lo) * (y1 - y0); };

  std::string o = Opening(spec.title, x0, y0, x1, y1);
  o += YGrid(ay, x0, x1, py);

  // Bars, then the category labels under their group.
  const double band = (x1 - x0) / static_cast<double>(std::max<size_t>(n, 1));
  const double bar_w = bars == 0 ? 0 : band * 0.8 / static_cast<double>(bars);
  o += "<g class=\"bars\" clip-path=\"url(#plot-area)\">\n";
  for (size_t c = 0; c < n && c < spec.values.size(); ++c) {
    for (size_t k = 0; k < spec.values[c].size(); ++k) {
      double v = spec.values[c][k];
      if (!std::isfinite(v)) continue;
      double x = x0 + band * (static_cast<double>(c) + 0.1) + bar_w * static_cast<double>(k);
      double top = std::min(py(v), py(0)), height = std::fabs(py(v) - py(0));
      o += "<rect x=\"" + Px(x) + "\" y=\"" + Px(top) + "\" width=\"" + Px(bar_w) + "\" height=\"" + Px(height) +
           "\" fill=\"" + kPalette[k % kColors] + "\"><title>" + Escape(spec.categories[c]) + ": " +
           Escape(Value(v)) + "</title></rect>\n";
    }
  }
  o += "</g>\n<g class=\"categories\" font-size=\"12\" fill=\"#333\">\n";
  for (size_t c = 0; c < n; ++c) {
    double x = x0 + band * (static_cast<double>(c) + 0.5);
    std::string label = Escape(Shorten(spec.categories[c], 18));
    if (slanted)
      o += "<text transform=\"translate(" + Px(x) + "," + Px(y1 + 12) +
           ") rotate(-40)\" text-anchor=\"end\" dy=\"0.35em\">" + label + "</text>\n";
    else
      o += "<text x=\"" + Px(x) + "\" y=\"" + Px(y1 + 18) + "\" text-anchor=\"middle\">" + label + "</text>\n";
  }
  o += "</g>\n";
  o += FrameAndLabels(spec.title, "", spec.y_label, x0, y0, x1, y1);

  // Legend: a swatch of each labelled series, then its label.
  if (labelled > 0) {
    double ly = y0 + 10;
    o += "<g class=\"legend\" font-size=\"13\">\n";
    for (size_t k = 0; k < spec.series.size(); ++k) {
      if (Trim(spec.series[k]).empty()) continue;
      o += "<rect x=\"" + Px(x1 + 16) + "\" y=\"" + Px(ly - 6) + "\" width=\"26\" height=\"12\" fill=\"" +
           kPalette[k % kColors] + "\"/>\n";
      o += "<text x=\"" + Px(x1 + 50) + "\" y=\"" + Px(ly) + "\" dy=\"0.35em\">" + Escape(spec.series[k]) + "</text>\n";
      ly += 22;
    }
    o += "</g>\n";
  }
  return o + "</svg>\n";
}

}  // namespace vgpu::sim

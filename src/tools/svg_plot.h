// Plots as standalone SVG documents: a line plot, for vgpu-sim's --plot
// (curves of (x, y) points with an optional min-max band each, dashed
// vertical guide lines), and a grouped bar chart, for vgpuctl report's --svg;
// both with axes with 1-2-5 ticks, a grid, a title and a legend.
#ifndef VGPU_TOOLS_SVG_PLOT_H_
#define VGPU_TOOLS_SVG_PLOT_H_

#include <cstddef>
#include <string>
#include <vector>

namespace vgpu::sim {

// One curve. Point i is (x[i], y[i]) for i < min(x.size(), y.size()); a point
// with a non-finite coordinate is left out and breaks the line there. The
// band, drawn translucent behind the line, spans y_low[i]..y_high[i] at
// x[i]; it is drawn only when both vectors are non-empty (empty = no band),
// over the indices all of x, y_low and y_high have.
struct Series {
  std::string label;  // legend text; empty = not in the legend
  std::vector<double> x, y, y_low, y_high;
};

struct PlotSpec {
  std::string title, x_label, y_label;
  std::vector<Series> series;   // series i gets the i-th palette colour
  std::vector<double> x_marks;  // vertical guide lines, e.g. 100; labelled with the value
};

// The plot as an SVG document (900 x 560 px) that starts with "<svg" and
// ends with "</svg>\n". Ranges come from the finite data (x_marks included);
// y starts at 0 when no y value is negative. All text is XML-escaped. Any
// spec, including an empty one, gives a well-formed document.
// Colours: a colourblind-safe palette of 10 (Okabe-Ito without yellow plus
// three of Paul Tol's "muted"); series 10 and on repeat it with dashes.
std::string RenderSvg(const PlotSpec& spec);

// A grouped bar chart: for each category (e.g. a user) one bar per series
// (e.g. requested and used), side by side, series k in the k-th palette
// colour. values[c][k] is the bar of category c and series k; a missing or
// non-finite value draws no bar.
struct BarChartSpec {
  std::string title, y_label;
  std::vector<std::string> series;      // legend labels
  std::vector<std::string> categories;  // x axis labels, left to right
  std::vector<std::vector<double>> values;
};

// The chart as an SVG document (900 x 560 px), with the guarantees of
// RenderSvg: well-formed for any spec, text XML-escaped, y from 0 unless a
// value is negative. Category labels longer than 18 characters are cut
// (ending in "..."); with more than 8 categories they are slanted.
std::string RenderBarSvg(const BarChartSpec& spec);

// `s` on one line, XML-escaped; control characters XML forbids become
// spaces. For other SVG writers (vgpuctl status --svg).
std::string SvgEscape(const std::string& s);
// The k-th colour of the palette above (repeating after ten).
const char* PaletteColor(size_t k);

}  // namespace vgpu::sim

#endif  // VGPU_TOOLS_SVG_PLOT_H_

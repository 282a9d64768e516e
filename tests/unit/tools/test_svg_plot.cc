// Tests of the SVG line plot: well-formed output for ordinary, hostile and
// degenerate specs, labels, bands, guide lines, ticks and colours.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "svg_plot.h"

namespace vgpu::sim {
namespace {

// "" when `svg` is well-formed enough: starts with <svg, ends with </svg>,
// every element closed in order, every '&' an XML entity; else the fault.
std::string XmlFault(const std::string& svg) {
  if (svg.compare(0, 4, "<svg") != 0) return "does not start with <svg";
  if (svg.size() < 7 || svg.compare(svg.size() - 7, 7, "</svg>\n") != 0) return "does not end with </svg>";
  std::vector<std::string> open;
  for (size_t i = 0; i < svg.size(); ++i) {
    if (svg[i] == '&') {
      bool entity = false;
      for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
        entity = entity || svg.compare(i, std::string(e).size(), e) == 0;
      if (!entity) return "raw '&' at " + std::to_string(i);
    }
    if (svg[i] != '<') continue;
    size_t end = svg.find('>', i);
    if (end == std::string::npos) return "unterminated tag at " + std::to_string(i);
    std::string tag = svg.substr(i + 1, end - i - 1);
    if (tag.find('<') != std::string::npos) return "raw '<' inside tag at " + std::to_string(i);
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return "unbalanced </" + tag.substr(1) + ">";
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find_first_of(" \n")));
    }
    i = end;
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The height="..." of the n-th bar (<rect with a <title>) of `svg`.
double BarHeight(const std::string& svg, size_t n) {
  size_t at = svg.find("<g class=\"bars\"");
  for (size_t i = 0; i <= n; ++i) at = svg.find("<rect ", at + 1);
  size_t h = svg.find("height=\"", at) + 8;
  return std::stod(svg.substr(h, svg.find('"', h) - h));
}

// A curve from 0 to 130 in steps of 10, with a band of +-1.
Series Curve(const std::string& label, double offset, bool band) {
  Series s;
  s.label = label;
  for (int i = 0; i <= 13; ++i) {
    s.x.push_back(10.0 * i);
    s.y.push_back(100.0 - 7 * i + offset);
    if (band) s.y_low.push_back(s.y.back() - 1), s.y_high.push_back(s.y.back() + 1);
  }
  return s;
}

}  // namespace

class SvgPlotTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(SvgPlotTest);
  CPPUNIT_TEST(WellFormedWithLabels);
  CPPUNIT_TEST(EscapesText);
  CPPUNIT_TEST(BandOnlyWhenGiven);
  CPPUNIT_TEST(XMarkLine);
  CPPUNIT_TEST(TicksAreNice);
  CPPUNIT_TEST(DistinctColors);
  CPPUNIT_TEST(EmptySpec);
  CPPUNIT_TEST(DegenerateData);
  CPPUNIT_TEST(BarChart);
  CPPUNIT_TEST(BarChartLabels);
  CPPUNIT_TEST(BarChartDegenerate);
  CPPUNIT_TEST_SUITE_END();

 public:
  void WellFormedWithLabels() {
    PlotSpec spec{"Unallocated GPU", "arrived GPU demand (%)", "unallocated (%)", {}, {100}};
    spec.series = {Curve("fgd", 0, true), Curve("best-fit", 3, true), Curve("pool", -2, false)};
    std::string svg = RenderSvg(spec);
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(svg));
    for (const char* text : {"Unallocated GPU", "arrived GPU demand (%)", "unallocated (%)", ">fgd<", ">best-fit<", ">pool<"})
      CPPUNIT_ASSERT_MESSAGE(text, svg.find(text) != std::string::npos);
    CPPUNIT_ASSERT(svg.find("width=\"900\"") != std::string::npos);
    CPPUNIT_ASSERT_EQUAL(size_t(3), Count(svg, "<path "));
  }

  void EscapesText() {
    PlotSpec spec{"a<b & c>\"d\"", "x's", "y & z", {Curve("<script>&amp;", 0, false)}, {}};
    std::string svg = RenderSvg(spec);
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(svg));
    CPPUNIT_ASSERT(svg.find("a&lt;b &amp; c&gt;&quot;d&quot;") != std::string::npos);
    CPPUNIT_ASSERT(svg.find("&lt;script&gt;&amp;amp;") != std::string::npos);
    CPPUNIT_ASSERT(svg.find("<script") == std::string::npos);
    CPPUNIT_ASSERT(svg.find("x&apos;s") != std::string::npos);
  }

  void BandOnlyWhenGiven() {
    PlotSpec with{"t", "x", "y", {Curve("a", 0, true)}, {}};
    std::string svg = RenderSvg(with);
    CPPUNIT_ASSERT_EQUAL(size_t(1), Count(svg, "<polygon class=\"band\""));
    CPPUNIT_ASSERT(svg.find("fill-opacity") != std::string::npos);
    PlotSpec without{"t", "x", "y", {Curve("a", 0, false)}, {}};
    CPPUNIT_ASSERT_EQUAL(size_t(0), Count(RenderSvg(without), "<polygon"));
  }

  void XMarkLine() {
    PlotSpec spec{"t", "x", "y", {Curve("a", 0, false)}, {100}};
    std::string svg = RenderSvg(spec);
    CPPUNIT_ASSERT_EQUAL(size_t(1), Count(svg, "class=\"x-mark\""));
    size_t mark = svg.find("class=\"x-mark\"");
    CPPUNIT_ASSERT(svg.find("stroke-dasharray", mark) < svg.find('\n', mark));
    CPPUNIT_ASSERT(svg.find(">100</text>", mark) != std::string::npos);  // its label
  }

  void TicksAreNice() {
    // x 0..130 gives ticks 0, 20, ... 140; y (all >= 0) starts at 0.
    PlotSpec spec{"t", "x", "y", {Curve("a", 0, false)}, {}};
    std::string svg = RenderSvg(spec);
    for (const char* tick : {">0</text>", ">20</text>", ">100</text>", ">140</text>"})
      CPPUNIT_ASSERT_MESSAGE(tick, svg.find(tick) != std::string::npos);
    CPPUNIT_ASSERT(svg.find(">130</text>") == std::string::npos);
    // Small fractional values get decimals, negative ones keep y below 0.
    Series s;
    s.x = {0, 1};
    s.y = {-0.05, 0.25};
    std::string small = RenderSvg(PlotSpec{"", "", "", {s}, {}});
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(small));
    CPPUNIT_ASSERT(small.find(">-0.05</text>") != std::string::npos);
    CPPUNIT_ASSERT(small.find(">0.25</text>") != std::string::npos);
  }

  void DistinctColors() {
    PlotSpec spec;
    for (int i = 0; i < 12; ++i) spec.series.push_back(Curve("s" + std::to_string(i), i, false));
    std::string svg = RenderSvg(spec);
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(svg));
    std::set<std::string> colors;
    for (size_t at = svg.find("<path "); at != std::string::npos; at = svg.find("<path ", at + 1)) {
      size_t c = svg.find("stroke=\"", at) + 8;
      colors.insert(svg.substr(c, svg.find('"', c) - c));
    }
    CPPUNIT_ASSERT_EQUAL(size_t(10), colors.size());  // 10 colours, then dashes
    CPPUNIT_ASSERT(Count(svg, "<path ") == 12);
    CPPUNIT_ASSERT(Count(svg, "stroke-dasharray=\"7 4\"") >= 2);  // series 10 and 11 (+ legend)
  }

  void EmptySpec() {
    std::string svg = RenderSvg(PlotSpec{});
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(svg));
    PlotSpec empty_series{"t", "x", "y", {Series{}, Series{"named", {}, {}, {}, {}}}, {}};
    std::string svg2 = RenderSvg(empty_series);
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(svg2));
    CPPUNIT_ASSERT(svg2.find(">named<") != std::string::npos);
  }

  void DegenerateData() {
    Series one{"one", {5}, {3}, {}, {}};
    Series holes{"holes", {1, 2, NAN, 4, 5}, {1, INFINITY, 2, 3, NAN}, {0, 0, 0}, {2, 2}};
    Series ragged{"ragged", {1, 2, 3}, {1}, {}, {}};
    PlotSpec spec{"t", "x", "y", {one, holes, ragged}, {NAN, 1e308}};
    std::string svg = RenderSvg(spec);
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(svg));
    CPPUNIT_ASSERT(svg.find("nan") == std::string::npos);
    CPPUNIT_ASSERT(svg.find("inf") == std::string::npos);
    CPPUNIT_ASSERT(Count(svg, "<circle") >= 2);  // lone points still show
    Series flat{"flat", {7, 7}, {-4, -4}, {}, {}};
    std::string svg2 = RenderSvg(PlotSpec{"", "", "", {flat}, {}});
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(svg2));
  }

  void BarChart() {
    BarChartSpec spec{"Share-hours", "share-hours", {"requested", "used"}, {"alice", "bob"}, {{90, 75}, {75, 12.5}}};
    std::string svg = RenderBarSvg(spec);
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(svg));
    CPPUNIT_ASSERT_EQUAL(size_t(4), Count(svg, "</title></rect>"));  // one per bar
    for (const char* text : {">Share-hours<", ">share-hours<", ">requested<", ">used<", ">alice</text>", ">bob</text>",
                             "<title>bob: 12.5</title>"})
      CPPUNIT_ASSERT_MESSAGE(text, svg.find(text) != std::string::npos);
    // Heights are proportional to the values, from a y axis at 0.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(90.0 / 75.0, BarHeight(svg, 0) / BarHeight(svg, 1), 0.01);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(6.0, BarHeight(svg, 2) / BarHeight(svg, 3), 0.02);
    CPPUNIT_ASSERT(svg.find(">0</text>") != std::string::npos);
    // Series k has colour k in every category.
    size_t first = svg.find("<title>alice: 90<"), second = svg.find("<title>bob: 75<");
    CPPUNIT_ASSERT_EQUAL(svg.substr(svg.rfind("fill=", first), 15), svg.substr(svg.rfind("fill=", second), 15));
    CPPUNIT_ASSERT(svg.substr(svg.rfind("fill=", first), 15) != svg.substr(svg.rfind("fill=", svg.find("alice: 75")), 15));
  }

  void BarChartLabels() {
    BarChartSpec spec{"a & b", "", {"<s>"}, {"x<y", std::string(12, 'a') + "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"}, {{1}, {2}}};
    std::string svg = RenderBarSvg(spec);
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(svg));
    CPPUNIT_ASSERT(svg.find(">x&lt;y</text>") != std::string::npos);
    CPPUNIT_ASSERT(svg.find(">&lt;s&gt;</text>") != std::string::npos);
    // 20 bytes cut to 18 at most, not inside the two-byte character.
    CPPUNIT_ASSERT(svg.find(">" + std::string(12, 'a') + "\xc3\xa9...</text>") != std::string::npos);
    CPPUNIT_ASSERT(svg.find("rotate(-40)") == std::string::npos);  // few categories: level labels
    BarChartSpec many;
    for (int i = 0; i < 9; ++i) many.categories.push_back("u" + std::to_string(i)), many.values.push_back({1.0 * i});
    std::string slanted = RenderBarSvg(many);
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(slanted));
    CPPUNIT_ASSERT_EQUAL(size_t(9), Count(slanted, "rotate(-40)"));
    CPPUNIT_ASSERT(slanted.find("class=\"legend\"") == std::string::npos);  // no series labels
  }

  void BarChartDegenerate() {
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(RenderBarSvg(BarChartSpec{})));
    BarChartSpec odd{"", "", {"a", "b"}, {"one", "two", "three"}, {{NAN, INFINITY}, {-5, 0}}};
    std::string svg = RenderBarSvg(odd);
    CPPUNIT_ASSERT_EQUAL(std::string(""), XmlFault(svg));
    CPPUNIT_ASSERT(svg.find("nan") == std::string::npos && svg.find("inf") == std::string::npos);
    CPPUNIT_ASSERT_EQUAL(size_t(2), Count(svg, "</title></rect>"));  // -5 and 0; none for three
    CPPUNIT_ASSERT(svg.find(">-5</text>") != std::string::npos);     // the axis goes below 0
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SvgPlotTest);

}  // namespace vgpu::sim

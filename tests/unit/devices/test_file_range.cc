#include <cppunit/extensions/HelperMacros.h>

#include "devices/file_range.h"

#include <string>
#include <vector>

using vgpu::CompressFileRange;
using vgpu::ExpandFileRange;

class FileRangeTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(FileRangeTest);
  CPPUNIT_TEST(PlainFile);
  CPPUNIT_TEST(Range);
  CPPUNIT_TEST(ListInsideBrackets);
  CPPUNIT_TEST(CommaListOfItems);
  CPPUNIT_TEST(ZeroPadding);
  CPPUNIT_TEST(Malformed);
  CPPUNIT_TEST(CompressIsShortestAndRoundTrips);
  CPPUNIT_TEST_SUITE_END();

 public:
  void PlainFile() {
    auto r = ExpandFileRange("/dev/nvidia0");
    CPPUNIT_ASSERT(r.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(1), r->size());
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/nvidia0"), (*r)[0]);
  }
  void Range() {
    auto r = ExpandFileRange("/dev/dri/renderD[128-131]");
    CPPUNIT_ASSERT(r.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(4), r->size());
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/dri/renderD128"), r->front());
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/dri/renderD131"), r->back());
  }
  void ListInsideBrackets() {
    auto r = ExpandFileRange("/dev/davinci[0-1,5]");
    CPPUNIT_ASSERT(r.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(3), r->size());
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/davinci5"), (*r)[2]);
  }
  void CommaListOfItems() {
    auto r = ExpandFileRange("/dev/nvidia0,/dev/nvidia[2-3]");
    CPPUNIT_ASSERT(r.ok());
    CPPUNIT_ASSERT_EQUAL(size_t(3), r->size());
    CPPUNIT_ASSERT_EQUAL(std::string("/dev/nvidia2"), (*r)[1]);
  }
  void ZeroPadding() {
    auto r = ExpandFileRange("n[08-10]");
    CPPUNIT_ASSERT(r.ok());
    CPPUNIT_ASSERT_EQUAL(std::string("n08"), (*r)[0]);
    CPPUNIT_ASSERT_EQUAL(std::string("n10"), (*r)[2]);
  }
  void Malformed() {
    for (const char* bad : {"", "/dev/x[0-", "/dev/x[a-b]", "/dev/x[3-1]", "/dev/x]",
                            "/dev/x[0-1][0-1]", "/dev/a,,/dev/b",
                            // found by tests/fuzz: the top of the counter looped forever
                            "/dev/x[18446744073709551615]", "/dev/x[4294967295-4294967296]"}) {
      auto r = ExpandFileRange(bad);
      CPPUNIT_ASSERT_MESSAGE(bad, !r.ok());
      CPPUNIT_ASSERT(!r.message().empty());
    }
  }
  // vgpuctl discover writes File= with it: the order is kept (it is the
  // order of the share bits), rising runs share brackets.
  void CompressIsShortestAndRoundTrips() {
    using Files = std::vector<std::string>;
    const std::pair<Files, std::string> cases[] = {
        {{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"}, "/dev/nvidia[0-3]"},
        {{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia3"}, "/dev/nvidia[0-1,3]"},
        {{"/dev/davinci4"}, "/dev/davinci4"},
        {{"/dev/dri/renderD128", "/dev/dri/renderD129", "/dev/nvidia7"}, "/dev/dri/renderD[128-129],/dev/nvidia7"},
        {{"/dev/nvidia2", "/dev/nvidia1"}, "/dev/nvidia2,/dev/nvidia1"},  // falling: kept apart, in order
        {{"/dev/x01", "/dev/x02"}, "/dev/x01,/dev/x02"},                  // zero padding: as written
        {{"/dev/kfd", "/dev/a[1]"}, "/dev/kfd,/dev/a[1]"},
        {{}, ""},
    };
    for (const auto& [files, expected] : cases) {
      const std::string got = CompressFileRange(files);
      CPPUNIT_ASSERT_EQUAL(expected, got);
      if (files.empty() || got.find("a[1]") != std::string::npos) continue;
      auto back = ExpandFileRange(got);
      CPPUNIT_ASSERT_MESSAGE(got, back.ok() && *back == files);
    }
  }
};
CPPUNIT_TEST_SUITE_REGISTRATION(FileRangeTest);

#include <cppunit/extensions/HelperMacros.h>

#include <string>
#include <vector>

#include "devices/socket_alignment.h"

using vgpu::AlignToSockets;
using vgpu::FormatCores;
using vgpu::SocketCheck;
using vgpu::SocketLayout;

namespace {

// A core set of `n` cores from "0-3,8" notation (test input only).
std::vector<bool> Cores(int n, std::initializer_list<std::pair<int, int>> ranges) {
  std::vector<bool> out(n, false);
  for (auto [first, last] : ranges)
    for (int c = first; c <= last; ++c) out.at(c) = true;
  return out;
}

std::string Aligned(const std::vector<bool>& cores, SocketLayout layout, SocketCheck check) {
  return FormatCores(AlignToSockets(cores, layout, check));
}

}  // namespace

class SocketAlignmentTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(SocketAlignmentTest);
  CPPUNIT_TEST(FormatsRanges);
  CPPUNIT_TEST(OlderReleasesKeepTheSet);
  CPPUNIT_TEST(PartOfOneSocketBecomesThatSocket);
  CPPUNIT_TEST(WholeSocketsAndWholeNodeStay);
  CPPUNIT_TEST(TwoSocketsOn2411StayTwoSockets);
  CPPUNIT_TEST(TwoSocketsFrom2511BecomeTheNode);
  CPPUNIT_TEST(UnknownOrMismatchedLayoutKeepsTheSet);
  CPPUNIT_TEST_SUITE_END();

  // 4 sockets of 4 cores: socket s is cores 4s..4s+3.
  const SocketLayout k4x4{4, 4};

 public:
  void FormatsRanges() {
    CPPUNIT_ASSERT_EQUAL(std::string(""), FormatCores(Cores(8, {})));
    CPPUNIT_ASSERT_EQUAL(std::string("0-3,6"), FormatCores(Cores(8, {{0, 3}, {6, 6}})));
    CPPUNIT_ASSERT_EQUAL(std::string("7"), FormatCores(Cores(8, {{7, 7}})));
    CPPUNIT_ASSERT_EQUAL(std::string("0-7"), FormatCores(Cores(8, {{0, 7}})));
  }
  void OlderReleasesKeepTheSet() {
    CPPUNIT_ASSERT_EQUAL(std::string("1-2"),
                         Aligned(Cores(16, {{1, 2}}), k4x4, SocketCheck::kNone));
  }
  // A NUMA node that is half of socket 1 (sub-NUMA clustering).
  void PartOfOneSocketBecomesThatSocket() {
    for (SocketCheck check : {SocketCheck::kWholeSockets, SocketCheck::kOneSocketOrAll}) {
      CPPUNIT_ASSERT_EQUAL(std::string("4-7"), Aligned(Cores(16, {{4, 5}}), k4x4, check));
      CPPUNIT_ASSERT_EQUAL(std::string("12-15"), Aligned(Cores(16, {{15, 15}}), k4x4, check));
    }
  }
  void WholeSocketsAndWholeNodeStay() {
    for (SocketCheck check : {SocketCheck::kWholeSockets, SocketCheck::kOneSocketOrAll}) {
      CPPUNIT_ASSERT_EQUAL(std::string("8-11"), Aligned(Cores(16, {{8, 11}}), k4x4, check));
      CPPUNIT_ASSERT_EQUAL(std::string("0-15"), Aligned(Cores(16, {{0, 15}}), k4x4, check));
      CPPUNIT_ASSERT_EQUAL(std::string(""), Aligned(Cores(16, {}), k4x4, check));
    }
  }
  // 24.11 accepts any union of whole sockets.
  void TwoSocketsOn2411StayTwoSockets() {
    CPPUNIT_ASSERT_EQUAL(std::string("0-3,8-11"),
                         Aligned(Cores(16, {{3, 3}, {8, 9}}), k4x4, SocketCheck::kWholeSockets));
    CPPUNIT_ASSERT_EQUAL(std::string("0-7"),
                         Aligned(Cores(16, {{0, 7}}), k4x4, SocketCheck::kWholeSockets));
  }
  // 25.11 accepts one whole socket or every core, nothing between.
  void TwoSocketsFrom2511BecomeTheNode() {
    CPPUNIT_ASSERT_EQUAL(std::string("0-15"),
                         Aligned(Cores(16, {{3, 3}, {8, 9}}), k4x4, SocketCheck::kOneSocketOrAll));
    CPPUNIT_ASSERT_EQUAL(std::string("0-15"),
                         Aligned(Cores(16, {{0, 7}}), k4x4, SocketCheck::kOneSocketOrAll));
  }
  void UnknownOrMismatchedLayoutKeepsTheSet() {
    for (SocketLayout layout : {SocketLayout{0, 4}, SocketLayout{4, 0}, SocketLayout{2, 4}})
      CPPUNIT_ASSERT_EQUAL(std::string("1"),
                           Aligned(Cores(16, {{1, 1}}), layout, SocketCheck::kWholeSockets));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SocketAlignmentTest);

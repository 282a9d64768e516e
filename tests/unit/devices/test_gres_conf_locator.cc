#include <cppunit/extensions/HelperMacros.h>

#include "devices/gres_conf_locator.h"

using vgpu::GresConfLocator;

namespace {
const char kConf[] =
    "# site gres.conf\n"
    "NodeName=n[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-1]\n"
    "\n"
    "NodeName=n1 Name=vgpu Type=ascend File=/dev/davinci[0-7]  # eight cards\n"
    "NodeName=n2 Name=vgpu Type=ascend File=/dev/davinci[0-3]\n"
    "Name=vgpu Type=dcu File=/dev/dri/renderD[128-129]\n";
}

class GresConfLocatorTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(GresConfLocatorTest);
  CPPUNIT_TEST(FindsLineForNode);
  CPPUNIT_TEST(LineWithoutNodeNameMatchesAll);
  CPPUNIT_TEST(NameMustMatch);
  CPPUNIT_TEST(DescribeFallsBack);
  CPPUNIT_TEST_SUITE_END();

 public:
  void FindsLineForNode() {
    GresConfLocator loc("/etc/slurm/gres.conf", kConf);
    auto* l1 = loc.FindByFile("n1", "vgpu", "/dev/davinci0");
    CPPUNIT_ASSERT(l1);
    CPPUNIT_ASSERT_EQUAL(4, l1->number);
    CPPUNIT_ASSERT_EQUAL(size_t(8), l1->files.size());
    auto* l2 = loc.FindByFile("n2", "vgpu", "/dev/davinci0");
    CPPUNIT_ASSERT(l2);
    CPPUNIT_ASSERT_EQUAL(5, l2->number);
    CPPUNIT_ASSERT(!loc.FindByFile("n2", "vgpu", "/dev/davinci7"));
    std::string d = loc.Describe(l1, "x");
    CPPUNIT_ASSERT(d.find("/etc/slurm/gres.conf line 4") != std::string::npos);
    CPPUNIT_ASSERT(d.find("# eight") == std::string::npos);
  }
  void LineWithoutNodeNameMatchesAll() {
    GresConfLocator loc("gres.conf", kConf);
    auto* l = loc.FindByFile("n9", "VGPU", "/dev/dri/renderD129");
    CPPUNIT_ASSERT(l);
    CPPUNIT_ASSERT_EQUAL(6, l->number);
  }
  void NameMustMatch() {
    GresConfLocator loc("gres.conf", kConf);
    CPPUNIT_ASSERT(!loc.FindByFile("n1", "vgpu", "/dev/nvidia0"));
    CPPUNIT_ASSERT(loc.FindByFile("n1", "gpu", "/dev/nvidia0"));
  }
  void DescribeFallsBack() {
    GresConfLocator loc;
    std::string d = loc.Describe(nullptr, "Name=vgpu Type=x File=/dev/y");
    CPPUNIT_ASSERT(d.find("Name=vgpu Type=x File=/dev/y") != std::string::npos);
  }
};
CPPUNIT_TEST_SUITE_REGISTRATION(GresConfLocatorTest);

// vgpu-epilog's usage record: every node of a job merges its entry into
// the job's one AdminComment; read, merge and write is not atomic, so the
// nodes take turns and check their entry survived (a CommentStore that
// plays another node's write landing in between).
#include <cppunit/extensions/HelperMacros.h>

#include <functional>
#include <string>
#include <vector>

#include "job_usage.h"

namespace {

bool Has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// The database as a string; `after_set` runs after each Set (another
// node's write landing right then), `missing` Gets answer kNoJob first.
struct FakeComment : vgpu::CommentStore {
  std::string text;
  int gets = 0, sets = 0, missing = 0;
  std::function<void()> after_set;
  int Get(std::string* comment, std::string*) override {
    ++gets;
    if (missing > 0) return --missing, kNoJob;
    *comment = text;
    return kOk;
  }
  int Set(const std::string& comment, std::string*) override {
    ++sets;
    text = comment;
    if (after_set) after_set();
    return kOk;
  }
};

vgpu::NodeUsage UsageOf(const std::string& node, uint64_t peak) {
  vgpu::NodeUsage u;
  u.node = node;
  u.wall_s = 10;
  vgpu::DeviceUsage d;
  d.type = "nvidia";
  d.shares = 10;
  d.of = 100;
  d.memory_peak = peak;
  u.devices.push_back(d);
  return u;
}

}  // namespace

class JobUsageTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(JobUsageTest);
  CPPUNIT_TEST(UsageRecordSurvivesInterleavedNodes);
  CPPUNIT_TEST_SUITE_END();

 public:
  void UsageRecordSurvivesInterleavedNodes() {
    std::vector<int> slept;
    auto sleep_ms = [&slept](int ms) { slept.push_back(ms); };
    // One node: read, write, done; a job not in the database yet is waited for.
    FakeComment one;
    one.missing = 2;
    vgpu::Status st = vgpu::RecordUsage(one, UsageOf("n1", 5), 0, 1, sleep_ms);
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    CPPUNIT_ASSERT_EQUAL(1, one.sets);
    CPPUNIT_ASSERT((std::vector<int>{1000, 1000}) == slept);
    CPPUNIT_ASSERT_MESSAGE(one.text, Has(one.text, "\"n1\":"));

    // Two nodes that both read the empty comment: n2's stale write lands
    // right after n1's and loses n1's entry; n1 sees that and writes again.
    FakeComment shared;
    const std::string n2_alone = *vgpu::MergeUsageComment("", UsageOf("n2", 7));
    shared.after_set = [&shared, &n2_alone] {
      shared.after_set = nullptr;
      shared.text = n2_alone;
    };
    slept.clear();
    st = vgpu::RecordUsage(shared, UsageOf("n1", 5), 0, 2, sleep_ms);
    CPPUNIT_ASSERT_MESSAGE(st.message(), st.ok());
    CPPUNIT_ASSERT_EQUAL(2, shared.sets);
    CPPUNIT_ASSERT_MESSAGE(shared.text, Has(shared.text, "\"n1\":") && Has(shared.text, "\"n2\":"));
    // Rank 3 of 4 waits its turn first.
    slept.clear();
    FakeComment turn;
    CPPUNIT_ASSERT(vgpu::RecordUsage(turn, UsageOf("n4", 1), 3, 4, sleep_ms).ok());
    CPPUNIT_ASSERT_EQUAL(600, slept.at(0));

    // Someone else's comment is left alone.
    FakeComment foreign;
    foreign.text = "see ticket 123";
    CPPUNIT_ASSERT(!vgpu::RecordUsage(foreign, UsageOf("n1", 5), 0, 1, sleep_ms).ok());
    CPPUNIT_ASSERT_EQUAL(0, foreign.sets);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(JobUsageTest);

// vgpu-epilog's usage record: every node of a job merges its entry into
// the job's one AdminComment; read, merge and write is not atomic, so the
// nodes take turns and check their entry survived (a CommentStore that
// plays another node's write landing in between).
#include <cppunit/extensions/HelperMacros.h>

#include <sys/stat.h>
#include <utime.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "job_usage.h"
#include "pending_usage.h"

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
  CPPUNIT_TEST(KeptUsageIsRecordedOnceTheDatabaseAnswers);
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
    vgpu::UsageRetry retry = vgpu::UsageRetry::kDatabaseAway;
    CPPUNIT_ASSERT(!vgpu::RecordUsage(foreign, UsageOf("n1", 5), 0, 1, sleep_ms, &retry).ok());
    CPPUNIT_ASSERT_EQUAL(0, foreign.sets);
    CPPUNIT_ASSERT(retry == vgpu::UsageRetry::kNever);  // never better later

    // A database that answers without the job (its record behind a backlog
    // in slurmctld's queue) is not a database away: five reads, then
    // kNotYet, so the epilog keeps this record and still flushes
    // the ones kept before.
    FakeComment late;
    late.missing = 100;
    slept.clear();
    CPPUNIT_ASSERT(!vgpu::RecordUsage(late, UsageOf("n3", 2), 0, 1, sleep_ms, &retry).ok());
    CPPUNIT_ASSERT(retry == vgpu::UsageRetry::kNotYet);
    CPPUNIT_ASSERT_EQUAL(5, late.gets);
    CPPUNIT_ASSERT_EQUAL(0, late.sets);
  }

  // The database away: the epilog keeps the node's comment; a later flush
  // with the database still away leaves it; once it answers, each kept
  // record is merged into its job's comment and removed; a job the
  // database never gets is dropped after kMaxAgeSeconds, and so is one
  // whose comment holds other text.
  void KeptUsageIsRecordedOnceTheDatabaseAnswers() {
    char tmpl[] = "/tmp/vgpu-pending-XXXXXX";
    const std::string root = mkdtemp(tmpl);
    const vgpu::PendingUsage pending(root + "/var/lib/slurm-vgpu/pending-usage");

    struct Away : vgpu::CommentStore {
      int Get(std::string*, std::string* why) override { return *why = "Connection refused", kError; }
      int Set(const std::string&, std::string*) override { return kError; }
    } away;
    vgpu::UsageRetry retry = vgpu::UsageRetry::kNever;
    CPPUNIT_ASSERT(!vgpu::RecordUsage(away, UsageOf("n3", 9), 0, 1, [](int) {}, &retry).ok());
    CPPUNIT_ASSERT(retry == vgpu::UsageRetry::kDatabaseAway);

    auto kept = pending.Keep(40, "n3", vgpu::NodeComment(UsageOf("n3", 9)));
    CPPUNIT_ASSERT_MESSAGE(kept.message(), kept.ok());
    CPPUNIT_ASSERT(pending.Keep(41, "n3", vgpu::NodeComment(UsageOf("n3", 4))).ok());
    CPPUNIT_ASSERT(pending.Keep(42, "n3", vgpu::NodeComment(UsageOf("n3", 2))).ok());
    CPPUNIT_ASSERT(pending.Keep(43, "n3", vgpu::NodeComment(UsageOf("n3", 1))).ok());
    struct stat sb {};
    CPPUNIT_ASSERT(stat((root + "/var/lib/slurm-vgpu/pending-usage").c_str(), &sb) == 0);
    CPPUNIT_ASSERT_EQUAL(0700u, static_cast<unsigned>(sb.st_mode & 0777));
    CPPUNIT_ASSERT_EQUAL(size_t{4}, pending.Records().size());

    const time_t now = time(nullptr);
    auto still_away = pending.Flush([](uint32_t) { return std::unique_ptr<vgpu::CommentStore>(new Away); }, now,
                                    nullptr);
    CPPUNIT_ASSERT_EQUAL(4, still_away.left);
    CPPUNIT_ASSERT_EQUAL(size_t{4}, pending.Records().size());

    // Back: job 40 has n2's entry already, 41 is not there yet, 42 holds
    // someone's note, 43 is not there and its record is 31 days old.
    std::map<uint32_t, FakeComment> db;
    db[40].text = *vgpu::MergeUsageComment("", UsageOf("n2", 7));
    db[41].missing = 100;
    db[42].text = "see ticket 123";
    db[43].missing = 100;
    const std::string old_file = pending.Records().back().second;
    struct utimbuf times {now - vgpu::PendingUsage::kMaxAgeSeconds - 86400, now - vgpu::PendingUsage::kMaxAgeSeconds - 86400};
    CPPUNIT_ASSERT(utime(old_file.c_str(), &times) == 0);
    struct Ref : vgpu::CommentStore {
      explicit Ref(FakeComment* f) : f_(f) {}
      int Get(std::string* c, std::string* why) override { return f_->Get(c, why); }
      int Set(const std::string& c, std::string* why) override { return f_->Set(c, why); }
      FakeComment* f_;
    };
    std::vector<std::string> log;
    auto back = pending.Flush([&db](uint32_t job) { return std::unique_ptr<vgpu::CommentStore>(new Ref(&db[job])); },
                              now, &log);
    CPPUNIT_ASSERT_EQUAL(1, back.recorded);
    CPPUNIT_ASSERT_EQUAL(2, back.dropped);
    CPPUNIT_ASSERT_EQUAL(1, back.left);
    CPPUNIT_ASSERT_MESSAGE(db[40].text, Has(db[40].text, "\"n2\":") && Has(db[40].text, "\"n3\":"));
    CPPUNIT_ASSERT_EQUAL(std::string("see ticket 123"), db[42].text);
    CPPUNIT_ASSERT_EQUAL(size_t{1}, pending.Records().size());
    CPPUNIT_ASSERT_EQUAL(uint32_t{41}, pending.Records().front().first);
    CPPUNIT_ASSERT_EQUAL(size_t{3}, log.size());
    std::filesystem::remove_all(root);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(JobUsageTest);

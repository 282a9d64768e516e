// libvgpu.so's table of live allocations (src/interposer/allocation_table.h)
// against std::unordered_map as the model: random puts and takes of keys
// shaped like device pointers (256-byte aligned, so that they cluster
// without the hash) and small handles, through growth and deletions that
// shift probe runs.
#include <cppunit/extensions/HelperMacros.h>

#include <random>
#include <unordered_map>

#include "interposer/allocation_table.h"

using vgpu::interposer::AllocationTable;

class AllocationTableTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(AllocationTableTest);
  CPPUNIT_TEST(PutTakeReplace);
  CPPUNIT_TEST(MatchesAModelUnderRandomUse);
  CPPUNIT_TEST_SUITE_END();

 public:
  void PutTakeReplace() {
    AllocationTable t;
    AllocationTable::Value v;
    CPPUNIT_ASSERT(!t.Take(1, &v));
    t.Put(0x7f0000000000, {nullptr, 10});
    t.Put(0x7f0000000000, {nullptr, 20});  // replaced, not added
    CPPUNIT_ASSERT_EQUAL(size_t{1}, t.size());
    CPPUNIT_ASSERT(t.Take(0x7f0000000000, &v));
    CPPUNIT_ASSERT_EQUAL(uint64_t{20}, v.bytes);
    CPPUNIT_ASSERT(!t.Take(0x7f0000000000, &v));
    CPPUNIT_ASSERT_EQUAL(size_t{0}, t.size());
  }

  void MatchesAModelUnderRandomUse() {
    std::mt19937_64 rng(42);
    AllocationTable t;
    std::unordered_map<uint64_t, uint64_t> model;
    for (int round = 0; round < 200000; ++round) {
      // Keys from a small space, so that takes often hit and runs collide.
      const uint64_t key = (rng() % 2 ? 0x7f0000000000ULL + (rng() % 4096) * 256 : 0x1000 + rng() % 512);
      if (rng() % 3) {
        const uint64_t bytes = rng() % 1000000;
        t.Put(key, {nullptr, bytes});
        model[key] = bytes;
      } else {
        AllocationTable::Value v;
        const bool found = t.Take(key, &v);
        auto it = model.find(key);
        CPPUNIT_ASSERT_EQUAL(it != model.end(), found);
        if (found) {
          CPPUNIT_ASSERT_EQUAL(it->second, v.bytes);
          model.erase(it);
        }
      }
      CPPUNIT_ASSERT_EQUAL(model.size(), t.size());
    }
    for (const auto& [key, bytes] : model) {
      AllocationTable::Value v;
      CPPUNIT_ASSERT(t.Take(key, &v));
      CPPUNIT_ASSERT_EQUAL(bytes, v.bytes);
    }
    CPPUNIT_ASSERT_EQUAL(size_t{0}, t.size());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(AllocationTableTest);

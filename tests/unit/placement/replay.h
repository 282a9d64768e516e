// Test helper: places a sequence of requests with one policy, applying each.
#ifndef VGPU_TESTS_UNIT_PLACEMENT_REPLAY_H_
#define VGPU_TESTS_UNIT_PLACEMENT_REPLAY_H_

#include <cppunit/extensions/HelperMacros.h>

#include <vector>

#include "placement/placement.h"

// The shares allocated; a request that fits nowhere is skipped.
inline uint64_t Replay(vgpu::PlacementPolicy* policy, vgpu::ClusterState* c,
                       const std::vector<vgpu::Request>& seq) {
  uint64_t allocated = 0;
  for (const vgpu::Request& r : seq) {
    vgpu::Placement p;
    CPPUNIT_ASSERT(policy->Place(*c, r, &p).ok());
    if (!p.placed) continue;
    CPPUNIT_ASSERT(c->Apply(r, p).ok());
    allocated += r.shares;
  }
  return allocated;
}

#endif  // VGPU_TESTS_UNIT_PLACEMENT_REPLAY_H_

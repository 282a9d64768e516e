// Parts shared by the placement policies (not a public interface).
#ifndef VGPU_PLACEMENT_PLACEMENT_INTERNAL_H_
#define VGPU_PLACEMENT_PLACEMENT_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "placement/placement.h"
#include "placement/placement_fgd.h"

namespace vgpu {

inline bool TypeAllowed(const std::vector<DeviceType>& types, DeviceType t) {
  if (types.empty()) return true;
  for (DeviceType a : types)
    if (a == t) return true;
  return false;
}

// gpu-clustering's task label: 0 for a share of one device, k for k whole
// devices. Only meaningful for requests that take devices.
inline uint32_t AffinityOf(const Request& req, uint32_t s) {
  return req.shares < s ? 0 : req.shares / s;
}

// splitmix64: decorrelates the policy's random streams from the caller's.
inline uint64_t MixSeed(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A validated request as one node sees it.
struct Shape {
  const Request* req = nullptr;
  uint32_t s = 0;    // shares per device of the cluster
  uint32_t k = 0;    // devices taken: 0, 1 or more
  uint32_t per = 0;  // shares taken from each of them
  bool sharing() const { return k == 1 && per < s; }
  bool Allowed(DeviceType t) const { return TypeAllowed(req->types, t); }
};

// CPU, memory and devices all fit on `n` now.
bool NodeFits(const NodeState& n, const Shape& sh);
// Free shares on the devices `sh` may use.
uint64_t AllowedFreeShares(const NodeState& n, const Shape& sh);

// Device choices for a one-device sharing request (-1: none fits):
int TightestDevice(const NodeState& n, const Shape& sh);  // least free that fits, lowest index
int LowestDevice(const NodeState& n, const Shape& sh);    // lowest index that fits
int LoosestDevice(const NodeState& n, const Shape& sh);   // most free, lowest index
// The k lowest-index fully free allowed devices (whole-device requests).
void LowestFreeDevices(const NodeState& n, const Shape& sh, std::vector<uint32_t>* out);

// A policy that scores every node that fits and takes the node_count best,
// ties going to the node earlier in a per-seed random order of the nodes
// (the authors' simulator prefixes node names with a rand.Perm index).
class ScoringPolicy : public PlacementPolicy {
 public:
  ScoringPolicy(std::string name, uint64_t seed) : name_(std::move(name)), rng_(MixSeed(seed)) {}
  const std::string& name() const override { return name_; }
  Status Place(const ClusterState& cluster, const Request& req, Placement* out) override;
  Status Scores(const ClusterState& cluster, const Request& req, std::vector<double>* out) override;

 protected:
  // Once per Place, before any Score: an error aborts the decision.
  virtual Status Begin(const ClusterState&, const Shape&) { return Status::Ok(); }
  // Score of node `i`, which fits; higher wins. For a sharing request the
  // policy may set *device to the device it takes there (else the tightest).
  virtual double Score(const ClusterState& cluster, uint32_t i, const Shape& sh, int* device) = 0;
  // Position of node i in the tie order.
  uint32_t TieRank(uint32_t i) const { return rank_[i]; }

  std::string name_;
  std::mt19937_64 rng_;

 private:
  void EnsureRank(size_t nodes);
  Status Prepare(const ClusterState& c, const Request& req, Shape* sh);
  struct Candidate {
    double score;
    uint32_t rank;
    uint32_t node;
    int device;
  };
  std::vector<uint32_t> rank_;
  std::vector<Candidate> scratch_;
};

// Fills one node's assignment: `device` for a sharing request (-1: tightest),
// lowest-index free devices for whole ones.
void AssignNode(const NodeState& n, uint32_t i, const Shape& sh, int device, NodeAssignment* a);

// fgd's and pool's device choice for a sharing request on node n: every
// device that can take it is scored by score_of(F after taking it) (devices
// equal in type and free shares once), and the best one, lowest index on
// ties, wins. *seen is scratch.
template <typename ScoreOfAfter>
NodeVerdict BestSharingDevice(FragmentationDelta* delta, const NodeState& n, const Shape& sh,
                              ScoreOfAfter score_of, std::vector<double>* seen) {
  NodeVerdict v;
  seen->assign(n.devices.size(), 0.0);
  for (size_t d = 0; d < n.devices.size(); ++d) {
    const DeviceState& dev = n.devices[d];
    if (dev.free < sh.per || !sh.Allowed(dev.type)) continue;
    size_t e = 0;  // an equal device seen before scores the same
    while (e < d && !(n.devices[e].free == dev.free && n.devices[e].type == dev.type)) ++e;
    const double s = e < d ? (*seen)[e]
                           : score_of(delta->After(n, sh.req->cpu_milli, static_cast<int>(d), {}, sh.per));
    (*seen)[d] = s;
    if (v.device < 0 || s > v.score) {
      v.score = s;
      v.device = static_cast<int>(d);
    }
  }
  return v;
}

// fgd and pool: policies scoring nodes by fragmentation under a workload
// model. A node's verdict for a request shape is memoised until the node
// changes (its generation), so a decision mostly reads one array.
class FragmentationPolicy : public ScoringPolicy {
 public:
  FragmentationPolicy(std::string name, uint64_t seed, std::shared_ptr<const WorkloadModel> model)
      : ScoringPolicy(std::move(name), seed), model_(model), delta_(model) {}

 protected:
  // The verdict on node i, which fits: its score and, for a sharing
  // request, the device.
  virtual NodeVerdict Evaluate(const ClusterState& c, uint32_t i, const Shape& sh) = 0;
  // Added to the memoised verdict's score at every decision: for terms that
  // depend on the whole cluster's state, not only on node i's (0 here).
  virtual double Adjustment(const ClusterState&, uint32_t, const Shape&, const NodeVerdict&) { return 0; }

  Status Begin(const ClusterState& c, const Shape& sh) override;
  double Score(const ClusterState& c, uint32_t i, const Shape& sh, int* device) final;

  std::shared_ptr<const WorkloadModel> model_;
  FragmentationDelta delta_;
  std::vector<uint32_t> devices_;  // scratch
  std::vector<double> seen_;       // scratch

 private:
  VerdictMemo memo_;
  QueryIds queries_;
  uint32_t query_ = 0;
};

std::unique_ptr<PlacementPolicy> MakeFirstFit(const PolicyOptions& o);
std::unique_ptr<PlacementPolicy> MakeLeastLoaded(const PolicyOptions& o);
std::unique_ptr<PlacementPolicy> MakeBestFit(const PolicyOptions& o);
std::unique_ptr<PlacementPolicy> MakeDotProduct(const PolicyOptions& o);
std::unique_ptr<PlacementPolicy> MakeGpuPacking(const PolicyOptions& o);
std::unique_ptr<PlacementPolicy> MakeGpuClustering(const PolicyOptions& o);
std::unique_ptr<PlacementPolicy> MakeRandomFit(const PolicyOptions& o);
std::unique_ptr<PlacementPolicy> MakeFgd(const PolicyOptions& o);
std::unique_ptr<PlacementPolicy> MakePool(const PolicyOptions& o);
struct PoolParams;
std::unique_ptr<PlacementPolicy> MakePoolWith(const PolicyOptions& o, const PoolParams& p);

}  // namespace vgpu

#endif  // VGPU_PLACEMENT_PLACEMENT_INTERNAL_H_

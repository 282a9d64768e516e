// A device's local cores widened to what the node's Slurm accepts as a GRES
// Cores= set. Since 24.11 slurmctld checks Cores= against the node's sockets
// when the node registers (interfaces/gres.c, _check_core_range_matches_sock)
// and drains a node whose set covers part of a socket. The CPUs local to a
// device come from its NUMA node, and a socket can hold several NUMA nodes
// (sub-NUMA clustering, AMD NPS2/NPS4), so a set that discovery finds can
// fail that check.
#ifndef VGPU_DEVICES_SOCKET_ALIGNMENT_H_
#define VGPU_DEVICES_SOCKET_ALIGNMENT_H_

#include <string>
#include <vector>

namespace vgpu {

// How a Slurm release checks Cores= against sockets. The values are those of
// VGPU_GRES_SOCKET_CHECK in compat/slurm_compat.h.
enum class SocketCheck {
  kNone = 0,            // 22.05, 23.11: any set of cores
  kWholeSockets = 1,    // 24.11: each socket all or none
  kOneSocketOrAll = 2,  // 25.11 on: every core, or exactly one whole socket
};

// Slurm's abstract core numbering of a node: core c is on socket
// c / cores_per_socket.
struct SocketLayout {
  int sockets = 0;
  int cores_per_socket = 0;

  int cores() const { return sockets * cores_per_socket; }
};

// The smallest set of cores that holds `cores` and passes `check` on a node
// of `layout`. `cores` is returned unchanged under kNone, when it is empty,
// or when its size is not layout.cores() (a layout that is unknown or does
// not describe it: nothing sound can be said).
std::vector<bool> AlignToSockets(const std::vector<bool>& cores, SocketLayout layout,
                                 SocketCheck check);

// "0-3,8" for a set of cores; "" for none.
std::string FormatCores(const std::vector<bool>& cores);

}  // namespace vgpu

#endif  // VGPU_DEVICES_SOCKET_ALIGNMENT_H_

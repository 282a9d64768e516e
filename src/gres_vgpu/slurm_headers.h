// Slurm 22.05's internal headers, included as C. The one place that knows
// which Slurm headers the plugin needs; a later Slurm (24.11, whose headers
// do not compile as C++) replaces this file and slurm_bridge.cc, nothing else.
#ifndef VGPU_GRES_SLURM_HEADERS_H_
#define VGPU_GRES_SLURM_HEADERS_H_

extern "C" {
#include "config.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/bitstring.h"
#include "src/common/env.h"
#include "src/common/gres.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/pack.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmd/slurmd/slurmd.h"
}

#endif  // VGPU_GRES_SLURM_HEADERS_H_
